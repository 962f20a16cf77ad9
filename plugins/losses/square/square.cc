// Square loss: phi(a) = a^2 / 2, phi'(a) = a.  At 0: phi = 0, phi' = 0.
// Convex and smooth, so it breaks the MM contract (phi'(0) > 0, concave); the solver minimises it
// with L-BFGS on the factored objective instead (solver.type = "auto" or "lbfgs"), the paper's
// strongest square-loss baseline. Not robust: one outlier of size s costs s^2 / 2.
#include "sdprl/plugin.h"

namespace {

class SquareLoss final : public sdprl::Loss {
 public:
  std::string name() const override { return "square"; }
  double value(double a) const override { return 0.5 * a * a; }
  double derivative(double a) const override { return a; }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    sdprl::evaluate_inline(*this, a, phi, dphi);
  }
};

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable&) { return std::make_unique<SquareLoss>(); }

}  // namespace

SDPRL_LOSS_PLUGIN("square", "1.0", "square loss a^2 / 2 (smooth; solved by L-BFGS)", make)
