// Geman-McClure-type loss (paper Table "Example nonconvex loss functions"):
//   phi(a)  = a / (theta + a)
//   phi'(a) = theta / (theta + a)^2.   At 0: phi = 0, phi' = 1 / theta.
// Parameter: theta > 0 (default 1): residuals well above theta cost at most 1 each.
#include "sdprl/plugin.h"
#include "sdprl/scaled_loss.h"

namespace {

class GemanLoss final : public sdprl::ScaledLoss<GemanLoss> {
 public:
  using ScaledLoss::ScaledLoss;
  std::string name() const override { return "geman"; }
  double value(double a) const override { return a / (theta() + a); }
  double derivative(double a) const override { return theta() / ((theta() + a) * (theta() + a)); }
};

}  // namespace

SDPRL_LOSS_PLUGIN("geman", "1.0", "Geman loss a / (theta + a)", sdprl::ScaledLoss<GemanLoss>::make)
