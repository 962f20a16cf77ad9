// Composite terms: one ConstraintSet made of several term families on the same n rows, e.g. the
// distance terms of MVU together with its rank-one centering term. The loss is a sum over terms,
// so the surrogate H (docs/method.md section 2) of the union is the sum of the parts' surrogates:
//   terms, targets, values:      the parts' concatenated, part 0 first (term index = offset(p) + k);
//   split terms P_h, b_h:        concatenated in the same fixed order, so that the ADMM's (e, nu) of
//                                one MM step still line up with the next (warm start, section 3);
//   P*(y), C, diag(C), Gram:     sums of the parts' (each split term belongs to one part);
//   rows_decoupled(), curvature_is_diagonal(): true only when true for every part.
//
// SplitMode: kCoupled is handed to every part. kRowSplit is handed to every part only when all of
// them then split by rows (e.g. entry + distance terms): the union's Xt-step is then n independent
// r x r solves, the reason to accept the looser row-split majoriser (docs/method.md section 3). When
// one part cannot split (dense, rank-one), the Xt-step is a CG solve whatever the other parts do,
// so every part is built kCoupled and H is the exact surrogate of Prop. 2. Measured on robust MVU
// (examples/robust-mvu: 100 points on a spiral, distance terms + the centering term, A = -I, l1,
// gamma = 0.001, no outliers): with the distance terms row-split the MM stalls in a collapsed
// embedding (variance 0.045 times the input's, neighbour-distance relative RMSE 0.09), because
// 2||d_i||^2 + 2||d_j||^2 charges the smooth, whole-chain motions of an unfolding most; coupled it
// unfolds (variance ratio 6.3, RMSE 2e-4). The choice is made at the first update() and then fixed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"

namespace sdprl {

class SDPRL_API CompositeTerms final : public ConstraintSet {
 public:
  // At least one part; all parts non-null with the same dimension n. Throws Error otherwise.
  explicit CompositeTerms(std::vector<std::shared_ptr<const ConstraintSet>> parts);
  ~CompositeTerms() override;

  // "composite(" + the parts' families joined by '+' + ")", e.g. "composite(distance+rank-one)".
  std::string family() const override;
  Index dimension() const override { return n_; }
  Index size() const override { return targets_.size(); }
  const Vector& targets() const override { return targets_; }
  void evaluate(const Matrix& X, Vector& values) const override;
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override;
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override;

  const std::vector<std::shared_ptr<const ConstraintSet>>& parts() const { return parts_; }
  // Index of part p's first term among all terms (offset(parts().size()) = size()).
  Index offset(std::size_t p) const { return offsets_[p]; }

 private:
  std::vector<std::shared_ptr<const ConstraintSet>> parts_;
  std::vector<Index> offsets_;
  Index n_ = 0;
  Vector targets_;
};

}  // namespace sdprl
