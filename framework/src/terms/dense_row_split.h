// Internal (not installed): the row-split structure of all n^2 entry terms (AllEntriesTerms), on
// which the dense fused pass (xt_step/dense_rows.h) runs. Split term (i, j) is number i n + j with
// P_(i,j) = e_i x_j^T for the rows x_j of X_k, so that, on row-major n x n views of the split-term
// vectors, P(D) = D X_k^T and P*(y) = Y X_k; the loss weights stay outside P (ExternalWeights).
// A linearisation in row-split mode that derives from this class promises exactly that layout.
#pragma once

namespace sdprl {

class DenseRowSplit {
 public:
  virtual ~DenseRowSplit() = default;
};

}  // namespace sdprl
