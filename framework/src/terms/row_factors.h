// Internal (not installed): a capability of the framework's own term families that the Xt-step
// finds by dynamic_cast (as Ceres' strategies look behind an interface): row block i of P*P
// (TermLinearization::gram_row_blocks) as the sum of its rank-one parts,
//   G_i = sum_q p_q^T p_q,   q = factor_order()[factor_offsets()[i] .. factor_offsets()[i + 1]),
//   p_q = factors().row(q).
// A row with fewer parts d_i than r / 2 then keeps K_i = rho G_i + s_i I by Woodbury's identity,
// O(d_i^2 r) to factor and O(d_i r) to apply instead of O(r^3) and O(r^2) (xt_step/blocks.cc): an
// SDPA max-cut constraint X_ii = 1 is one part, and the dense inverses were 73% of SDPLIB
// mcp500-1's run (n = 500, rank 32).
#pragma once

#include <vector>

#include "sdprl/types.h"

namespace sdprl::terms {

class RowFactors {
 public:
  virtual ~RowFactors() = default;
  // n + 1 offsets into factor_order().
  virtual const std::vector<Index>& factor_offsets() const = 0;
  // The rows of factors() of each row block, row after row.
  virtual const std::vector<Index>& factor_order() const = 0;
  // The parts p_q, one per row (r columns), as of the last update().
  virtual const Matrix& factors() const = 0;
};

}  // namespace sdprl::terms
