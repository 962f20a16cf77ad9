// Laplace loss (paper Table "Example nonconvex loss functions"):
//   phi(a)  = 1 - exp(-a / theta)
//   phi'(a) = exp(-a / theta) / theta.   At 0: phi = 0, phi' = 1 / theta.
// Parameter: theta > 0 (default 1).
#include <cmath>

#include "sdprl/plugin.h"

namespace {

class LaplaceLoss final : public sdprl::Loss {
 public:
  explicit LaplaceLoss(double theta) : theta_(theta) {}
  std::string name() const override { return "laplace"; }
  // -expm1 keeps full relative accuracy for a << theta.
  double value(double a) const override { return -std::expm1(-a / theta_); }
  double derivative(double a) const override { return std::exp(-a / theta_) / theta_; }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    sdprl::evaluate_inline(*this, a, phi, dphi);
  }
  std::vector<std::pair<std::string, double>> parameters() const override { return {{"theta", theta_}}; }

 private:
  double theta_;
};

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable& table) {
  return std::make_unique<LaplaceLoss>(table.number("theta", 1.0, sdprl::NumberRule::positive()));
}

}  // namespace

SDPRL_LOSS_PLUGIN("laplace", "1.0", "Laplace loss 1 - exp(-a / theta)", make)
