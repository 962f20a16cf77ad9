// Log-sum penalty (paper Table "Example nonconvex loss functions", with a scale theta):
//   phi(a)  = log(1 + a / theta)
//   phi'(a) = 1 / (theta + a).   At 0: phi = 0, phi' = 1 / theta.
// Parameter: theta > 0 (default 1; theta = 1 is the paper's log(1 + a)).
#include <cmath>

#include "sdprl/plugin.h"
#include "sdprl/scaled_loss.h"

namespace {

class LogSumLoss final : public sdprl::ScaledLoss<LogSumLoss> {
 public:
  using ScaledLoss::ScaledLoss;
  std::string name() const override { return "log-sum"; }
  double value(double a) const override { return std::log1p(a / theta()); }
  double derivative(double a) const override { return 1.0 / (theta() + a); }
};

}  // namespace

SDPRL_LOSS_PLUGIN("log-sum", "1.0", "log-sum penalty log(1 + a / theta)", sdprl::ScaledLoss<LogSumLoss>::make)
