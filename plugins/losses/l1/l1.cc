// l1 loss: phi(a) = a.  phi(0) = 0, phi'(a) = 1 (so every MM weight is 1 and the MM surrogate is
// the exact convex l1 problem in Z = X X^T linearised at X_k; paper Alg. 2).
#include "sdprl/plugin.h"

namespace {

class L1Loss final : public sdprl::Loss {
 public:
  std::string name() const override { return "l1"; }
  double value(double a) const override { return a; }
  double derivative(double) const override { return 1.0; }
  void evaluate(const sdprl::Vector& a, sdprl::Vector& phi, sdprl::Vector& dphi) const override {
    sdprl::evaluate_inline(*this, a, phi, dphi);
  }
};

std::unique_ptr<sdprl::Loss> make(const sdprl::ConfigTable&) { return std::make_unique<L1Loss>(); }

}  // namespace

SDPRL_LOSS_PLUGIN("l1", "1.0", "l1 loss phi(a) = a (convex; the SDP in Z is convex)", make)
