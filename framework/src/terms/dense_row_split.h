// Internal (not installed): the row-split structure of all n^2 entry terms (AllEntriesTerms), on
// which the dense fused pass (xt_step/dense_rows.h) runs. Split term (i, j) is number i n + j with
// P_(i,j) = e_i x_j^T for the rows x_j of X_k, so that, on row-major n x n views of the split-term
// vectors, P(D) = D X_k^T and P*(y) = Y X_k; the loss weights stay outside P (ExternalWeights).
// A linearisation in row-split mode that derives from this class promises exactly that layout.
//
// b and W are symmetric n x n matrices (b = R / 2 with R = Z - T, W = phi'(|R|)), so the class
// may keep them in one n^2 array (b below the diagonal and on it, W above it, W's diagonal beside)
// and hand them out a tile of rows at a time: the dense pass then holds one n^2-vector of them
// instead of two (sparse PCA at n = 2000: 32 MB of its 124). offsets() and term_weights() stay
// available to other readers, formed on their first call after each rebuild.
#pragma once

#include <functional>

#include "sdprl/types.h"

namespace sdprl {

class DenseRowSplit {
 public:
  virtual ~DenseRowSplit() = default;
  // Rows i0 .. i0 + m - 1 of b and of W into b and w (each m x n, row-major), for the dense pass.
  virtual void row_tile(Index i0, Index m, double* b, double* w) const = 0;
  // The same rows a block of columns at a time, j0 .. j0 + k - 1 in column order: visit(j0, k, b, w,
  // stride) with b and w m x k, row stride `stride`, valid during the call. Where the layout is
  // blocked the blocks stay in L1, where row_tile() writes two m x n tiles (512 KB at n = 2000).
  using BlockVisitor = std::function<void(Index j0, Index k, const double* b, const double* w, Index stride)>;
  virtual void visit_row_blocks(Index i0, Index m, const BlockVisitor& visit) const = 0;
};

}  // namespace sdprl
