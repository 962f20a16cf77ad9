// Geman-McClure-type loss (paper Table "Example nonconvex loss functions"):
//   phi(a)  = a / (theta + a)
//   phi'(a) = theta / (theta + a)^2.   At 0: phi = 0, phi' = 1 / theta.
// Parameter: theta > 0 (default 1): residuals well above theta cost at most 1 each.
#include "sdprl/plugin.h"

namespace {

class GemanLoss final : public sdprl::Loss {
 public:
  explicit GemanLoss(double theta) : theta_(theta) {}
  std::string name() const override { return "geman"; }
  double value(double a) const override { return a / (theta_ + a); }
  double derivative(double a) const override { return theta_ / ((theta_ + a) * (theta_ + a)); }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    sdprl::evaluate_inline(*this, a, phi, dphi);
  }
  std::vector<std::pair<std::string, double>> parameters() const override { return {{"theta", theta_}}; }

 private:
  double theta_;
};

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable& table) {
  return std::make_unique<GemanLoss>(table.number("theta", 1.0, sdprl::NumberRule::positive()));
}

}  // namespace

SDPRL_LOSS_PLUGIN("geman", "1.0", "Geman loss a / (theta + a)", make)
