// Leaky minimax concave penalty (paper Table "Example nonconvex loss functions"; docs/method.md 1):
//   phi(a) = theta a - a^2 / 2                         for 0 <= a <= theta - eta
//          = eta a + (theta - eta)^2 / 2               for a > theta - eta
//   phi'(a) = theta - a, then eta.   At 0: phi = 0, phi' = theta.
// Parameters: theta > 0 (default 5), 0 < eta < theta (default 0.05), as in the paper's experiments.
// The leak eta keeps phi' positive, which the MM weights need (paper Assumption 3).
#include "sdprl/plugin.h"

namespace {

class LeakyMcpLoss final : public sdprl::Loss {
 public:
  LeakyMcpLoss(double theta, double eta) : theta_(theta), eta_(eta), knee_(theta - eta) {}
  std::string name() const override { return "leaky-mcp"; }
  double value(double a) const override {
    return a <= knee_ ? a * (theta_ - 0.5 * a) : eta_ * a + 0.5 * knee_ * knee_;
  }
  double derivative(double a) const override { return a <= knee_ ? theta_ - a : eta_; }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    sdprl::evaluate_inline(*this, a, phi, dphi);
  }
  std::vector<std::pair<std::string, double>> parameters() const override {
    return {{"theta", theta_}, {"eta", eta_}};
  }

 private:
  double theta_, eta_, knee_;
};

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable& table) {
  const double theta = table.number("theta", 5.0, sdprl::NumberRule::positive());
  const double eta = table.number("eta", 0.05, sdprl::NumberRule::open(0.0, theta));
  return std::make_unique<LeakyMcpLoss>(theta, eta);
}

}  // namespace

SDPRL_LOSS_PLUGIN("leaky-mcp", "1.0", "leaky minimax concave penalty (theta, eta)", make)
