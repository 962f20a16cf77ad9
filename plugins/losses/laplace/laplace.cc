// Laplace loss (paper Table "Example nonconvex loss functions"):
//   phi(a)  = 1 - exp(-a / theta)
//   phi'(a) = exp(-a / theta) / theta.   At 0: phi = 0, phi' = 1 / theta.
// Parameter: theta > 0 (default 1).
#include <cmath>

#include "sdprl/plugin.h"
#include "sdprl/scaled_loss.h"

namespace {

class LaplaceLoss final : public sdprl::ScaledLoss<LaplaceLoss> {
 public:
  using ScaledLoss::ScaledLoss;
  std::string name() const override { return "laplace"; }
  // -expm1 keeps full relative accuracy for a << theta.
  double value(double a) const override { return -std::expm1(-a / theta()); }
  double derivative(double a) const override { return std::exp(-a / theta()) / theta(); }
};

}  // namespace

SDPRL_LOSS_PLUGIN("laplace", "1.0", "Laplace loss 1 - exp(-a / theta)", sdprl::ScaledLoss<LaplaceLoss>::make)
