// A regulariser (gamma/2) <X, A X> with A = c I: (gamma c / 2) ||X||_F^2. With c < 0 it rewards
// spread, e.g. A = -I for maximum variance unfolding (tr Z = ||X||_F^2 maximised); then A_+ = 0 and
// the MM surrogate only linearises it (docs/method.md section 1). With c > 0 it acts like the lambda
// term, which the solver already has (prefer lambda then). Never stores anything n x n.
#pragma once

#include <string>

#include "sdprl/export.h"
#include "sdprl/regularizer.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API ScaledIdentityRegularizer final : public Regularizer {
 public:
  // n >= 1, c finite. Throws Error otherwise.
  ScaledIdentityRegularizer(Index n, double c, std::string name = "scaled-identity");
  ~ScaledIdentityRegularizer() override;

  std::string name() const override { return name_; }
  Index dimension() const override { return n_; }
  // out = c X.
  void apply(const Matrix& X, Matrix& out) const override;
  // A_+ = max(c, 0) I.
  bool positive_part_is_zero() const override { return c_ <= 0.0; }
  void apply_positive(const Matrix& X, Matrix& out) const override;
  void positive_diagonal(Vector& d) const override;
  // A_+ is diagonal: d = max(c, 0) 1 is exact.
  bool positive_diagonal_majorant(Vector& d) const override;

  double scale() const { return c_; }

 private:
  Index n_;
  double c_;
  std::string name_;
};

}  // namespace sdprl
