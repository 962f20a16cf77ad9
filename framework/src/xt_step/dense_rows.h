// Internal: the kDenseRows strategy (xt_step/xt_step.h). Row-split on all n^2 entry terms
// (terms/dense_row_split.h: P(D) = D X_k^T, P*(y) = Y X_k, one shared Gram block, weights outside
// P) with a diagonal B: the Xt-step is the shared block's solve, and the whole ADMM iteration runs
// as one pass over blocks of rows, each block's n^2 / (rows) tile of the state touched once while
// it is in cache: the right-hand side (Y_I X_k), the Xt-step, P(D)_I = D_I X_k^T, the e- and
// nu-steps with the gap's sums, and P*(nu')_I for the dual. A constraint split (sparse PCA's
// Frobenius ball) runs after the pass on the n x r matrices, and its feasible step's value takes a
// second pass (P(Y - X_k) = (Y - X_k) X_k^T). The state is packed with the weights' bounds
// (AdmmState::u, packed_weights), and b and w come a tile at a time from their one packed array
// (terms/dense_row_split.h): no n^2-vector beyond that array and u is formed.
#pragma once

#include "xt_step/blocks.h"

namespace sdprl::xt_step {

class DenseRows final : public ExactBlocks<SharedBlockInverse> {
 public:
  using ExactBlocks<SharedBlockInverse>::ExactBlocks;
  Kind kind() const override { return Kind::kDenseRows; }
  bool iterate_rows(AdmmState& state, double rho, double eps) override;
};

}  // namespace sdprl::xt_step
