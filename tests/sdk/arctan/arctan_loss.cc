// A user's own loss, built out of tree against the installed sdprl (README "Write your own loss").
// phi(a) = theta atan(a / theta): l1 near 0 (phi'(0) = 1), bounded by theta pi / 2 for outliers.
// phi'(a) = 1 / (1 + (a / theta)^2): positive and decreasing, so phi is concave (Assumption 3).
#include <cmath>

#include <sdprl/plugin.h>

namespace {

class ArctanLoss final : public sdprl::Loss {
 public:
  explicit ArctanLoss(double theta) : theta_(theta) {}
  std::string name() const override { return "arctan"; }
  double value(double a) const override { return theta_ * std::atan(a / theta_); }
  double derivative(double a) const override { return 1.0 / (1.0 + (a / theta_) * (a / theta_)); }
  std::vector<std::pair<std::string, double>> parameters() const override { return {{"theta", theta_}}; }
  // Optional: the batched form without a virtual call per entry.
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    sdprl::evaluate_inline(*this, a, phi, dphi);
  }

 private:
  double theta_;
};

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable& table) {
  return std::make_unique<ArctanLoss>(table.number("theta", 1.0, sdprl::NumberRule::positive()));
}

}  // namespace

SDPRL_LOSS_PLUGIN("arctan", "1.0", "theta atan(a / theta): a bounded robust loss", make)
