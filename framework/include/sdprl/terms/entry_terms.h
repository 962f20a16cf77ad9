// Entry terms, Q_tau = e_i e_j^T: <X, Q_tau X> = x_i . x_j (x_i is row i of X). The term family of
// matrix completion, NPKL, sparse PCA and symmetric NMF (docs/method.md section 1).
//
// sym(Q) = (e_i e_j^T + e_j e_i^T)/2, so |sym Q| = (e_i e_i^T + e_j e_j^T)/2 for i != j and
// e_i e_i^T for i = j: the curvature C is diagonal.
//
// The sparse path (docs/method.md section 4): the linearisation stores, per split term, one column
// index, one scale and one offset, in rows of a CSR structure; one ADMM iteration costs
// O(nnz r + n r^2) and nothing n x n is ever formed.
//  kRowSplit: term (i, j), i != j, becomes two half-terms (w/2) e_i x_j^T and (w/2) e_j x_i^T
//             with offsets w r / 4 each (docs/method.md section 3); a diagonal term stays whole.
//  kCoupled:  one split term per term, P = w sym(Q) X_k, b = w r / 2 (the surrogate of Prop. 2).
#pragma once

#include "sdprl/terms/term_data.h"

namespace sdprl {

class SDPRL_API EntryTerms final : public PairTerms {
 public:
  // Terms (rows[k], cols[k]) with targets[k]; indices 0-based and < n. Throws Error on a bad index
  // or a non-finite target.
  EntryTerms(Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols, Vector targets);
  ~EntryTerms() override;

  void evaluate(const Matrix& X, Vector& values) const override;  // values[k] = x_i . x_j
  // out = sum_k y_k sym(Q_k) V (rows i and j gain y_k v_j / 2 and y_k v_i / 2), summed over a
  // fixed number of term chunks: bitwise the same for any thread count.
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override;
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override;
};

}  // namespace sdprl
