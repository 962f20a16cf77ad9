// All entry terms of an n x n matrix, Q_(i,j) = e_i e_j^T for every ordered pair (i, j), held
// implicitly: no list of pairs, term (i, j) is number i n + j. <X, Q_(i,j) X> = Z_ij with
// Z = X X^T. The family of sparse PCA (sum_ij phi(|Z_ij|), targets 0; docs/method.md section 1) and
// of fully observed matrix fitting.
//
// Every operation is a dense product with X (cost O(n^2 r), BLAS-3 shaped) instead of a loop over
// n^2 index pairs. What still has n^2 entries are the per-term vectors the method itself keeps:
// b = r / 2 and the weights in the linearisation (its one-pass rebuild forms them without the
// solver's residual and weight vectors), and the ADMM's nu and e packed in one vector (one dual per
// term): three n^2-vectors in a row-split solve.
//
// The linearisation (docs/method.md sections 2 and 3), with W_ij = phi'(|r_ij|) and r = Z - T. The
// weights stay outside P (ExternalWeights::term_weights()), so P*P does not depend on the loss:
//  kRowSplit: each off-diagonal term splits into two half-terms (w/2)|xt_i.x_j + r/2| and
//             (w/2)|xt_j.x_i + r/2|. Terms (i, j) and (j, i) have the same residual and weight
//             (Z and T symmetric), so the two half-terms they put on row i are identical, and
//             2 |a| = |2 a| merges them into one split term per ordered pair:
//                 W_ij |<D, P_(i,j)> + b_(i,j)|,   P_(i,j) = e_i x_j^T,   b_(i,j) = r_ij / 2,
//             the same formula as a diagonal term. (update() symmetrises W and W o r if a caller
//             passes asymmetric ones; the solver never does.) Then P(D) = vec(D X^T),
//             P*(y) = Y X, and every row block of P*P is X^T X (GramSummary::shared_gram_block(): one r x r
//             eigendecomposition per MM step instead of n weighted blocks, O(n r^2) instead of
//             O(n^2 r^2) time and n r^2 memory).
//  kCoupled:  P_(i,j) = sym(Q_(i,j)) X, b = r_ij / 2: P(D) = vec(sym(D X^T)), P*(y) = sym(Y) X.
// Both have the diagonal curvature C_ii = sum_j W_ij (|sym Q| = (e_i e_i^T + e_j e_j^T)/2).
#pragma once

#include <memory>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"

namespace sdprl {

class Loss;

class SDPRL_API AllEntriesTerms final : public ConstraintSet {
 public:
  // Targets 0 (sparse PCA: the terms are |Z_ij|). Their n^2-vector is formed only if targets() is
  // called (the solver's rebuild never reads zero targets).
  explicit AllEntriesTerms(Index n);
  // Targets T (n x n, symmetric, finite). Throws Error otherwise.
  AllEntriesTerms(Index n, const Matrix& targets);
  ~AllEntriesTerms() override;

  std::string family() const override { return "all-entries"; }
  Index dimension() const override { return n_; }
  Index size() const override { return n_ * n_; }
  const Vector& targets() const override;
  // True for AllEntriesTerms(n): the targets are zeros that need not be formed to be read.
  bool zero_targets() const { return zero_; }
  // values = vec(X X^T), exactly symmetric (the row-split linearisation relies on it).
  void evaluate(const Matrix& X, Vector& values) const override;
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override;
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override;
  // sum_ij phi(|(X X^T - T)_ij|), tile by tile of the product: no n^2-vector (evaluate() forms
  // one), the same sum as the rebuild's (same tiles, same order: the same bits). The solver's
  // over-relaxation trials (docs/method.md section 7.5).
  double loss_sum(const Matrix& X, const Loss& loss) const;

 private:
  Index n_;
  bool zero_ = true;
  mutable Vector targets_;  // empty while the targets are the implicit zeros of AllEntriesTerms(n)
};

}  // namespace sdprl
