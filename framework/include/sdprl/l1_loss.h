// The l1 loss phi(a) = a (phi(0) = 0, phi'(a) = 1): every MM weight is 1, so the MM surrogate is
// the convex SDP in Z = X X^T linearised at X_k (paper Alg. 2; docs/method.md section 2). The
// plugin "l1" serves it by name; the solver uses it for the l1 warm start.
#pragma once

#include <string>
#include <utility>

#include "sdprl/loss.h"

namespace sdprl {

class L1Loss final : public Loss {
 public:
  // `name` is what the iteration table and messages call it ("l1 (warm start)" for the warm start).
  explicit L1Loss(std::string name = "l1") : name_(std::move(name)) {}

  std::string name() const override { return name_; }
  double value(double a) const override { return a; }
  double derivative(double) const override { return 1.0; }
  void evaluate(const Vector& a, Vector& phi, Vector& dphi) const override { evaluate_inline(*this, a, phi, dphi); }

 private:
  std::string name_;
};

}  // namespace sdprl
