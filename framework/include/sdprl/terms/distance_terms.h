// Distance terms, Q_tau = (e_i - e_j)(e_i - e_j)^T: <X, Q_tau X> = ||x_i - x_j||^2 (colored MVU, MVU;
// docs/method.md section 1). Q is PSD, so |sym Q| = Q and C = sum w Q is a weighted graph Laplacian.
//
// With u = x_i - x_j at the iterate, the term's linear part is 2 <D, Q X_k> = 2 (d_i - d_j) . u.
//  kCoupled:  one split term per term, P = w (e_i - e_j) u^T, b = w r / 2, and the exact curvature
//             C = sum w Q (sparse Laplacian; the Xt-step is solved by CG).
//  kRowSplit: by the triangle inequality, w |r + 2 d_i.u - 2 d_j.u| <= w |2 d_i.u + r/2| +
//             w |2 d_j.(-u) + r/2|, i.e. two half-terms P' = w e_i (x_i - x_j)^T and
//             P' = w e_j (x_j - x_i)^T with b' = w r / 4 each; and ||d_i - d_j||^2 <=
//             2 ||d_i||^2 + 2 ||d_j||^2 bounds the curvature by the diagonal sum 2 w (e_i e_i^T +
//             e_j e_j^T). The result is a looser majoriser that still touches F at D = 0, with a
//             diagonal B: n independent r x r row systems.
// Nothing n x n is formed in either mode.
#pragma once

#include "sdprl/terms/term_data.h"

namespace sdprl {

class SDPRL_API DistanceTerms final : public PairTerms {
 public:
  // Terms (rows[k], cols[k]) with targets[k] (squared distances); indices 0-based, < n, and
  // rows[k] != cols[k] (a zero Q is refused). Throws Error otherwise.
  DistanceTerms(Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols, Vector targets);
  ~DistanceTerms() override;

  // values[k] = ||x_i - x_j||^2 for term k = (i, j).
  void evaluate(const Matrix& X, Vector& values) const override;

  // out = sum_k y_k Q_k V, a weighted graph Laplacian applied to V: row i gains y_k (v_i - v_j),
  // row j loses it.
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override;

  // kCoupled: whole terms and the Laplacian curvature (the Xt-step by CG); kRowSplit: the two
  // half-terms and the diagonal curvature bound above.
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override;
};

}  // namespace sdprl
