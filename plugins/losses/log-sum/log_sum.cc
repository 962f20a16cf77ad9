// Log-sum penalty (paper Table "Example nonconvex loss functions", with a scale theta):
//   phi(a)  = log(1 + a / theta)
//   phi'(a) = 1 / (theta + a).   At 0: phi = 0, phi' = 1 / theta.
// Parameter: theta > 0 (default 1; theta = 1 is the paper's log(1 + a)).
#include <cmath>

#include "sdprl/plugin.h"

namespace {

class LogSumLoss final : public sdprl::Loss {
 public:
  explicit LogSumLoss(double theta) : theta_(theta) {}
  std::string name() const override { return "log-sum"; }
  double value(double a) const override { return std::log1p(a / theta_); }
  double derivative(double a) const override { return 1.0 / (theta_ + a); }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    sdprl::evaluate_inline(*this, a, phi, dphi);
  }
  std::vector<std::pair<std::string, double>> parameters() const override { return {{"theta", theta_}}; }

 private:
  double theta_;
};

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable& table) {
  return std::make_unique<LogSumLoss>(table.number("theta", 1.0, sdprl::NumberRule::positive()));
}

}  // namespace

SDPRL_LOSS_PLUGIN("log-sum", "1.0", "log-sum penalty log(1 + a / theta)", make)
