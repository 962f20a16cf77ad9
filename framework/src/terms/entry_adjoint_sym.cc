// EntryTerms::apply_adjoint_sym: the scatter of sum_tau y_tau sym(Q_tau) V, reduced over a fixed
// number of term chunks so that the result does not depend on the thread count.
#include <algorithm>

#include "sdprl/terms/entry_terms.h"

namespace sdprl {

void EntryTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  out.setZero(V.rows(), V.cols());
  // sym(e_i e_j^T) V = (e_i v_j^T + e_j v_i^T) / 2, scattered into two rows per term.
  auto scatter = [&](Index begin, Index end, Matrix& acc) {
    if (V.cols() == 1) {  // the spectral start's Lanczos vectors: plain scalars, no 1-wide row views
      const double* v = V.data();
      double* o = acc.data();
      for (Index k = begin; k < end; ++k) {
        const double a = 0.5 * y[k];
        const Index i = rows()[k], j = cols()[k];
        o[i] += a * v[j];
        o[j] += a * v[i];
      }
      return;
    }
    for (Index k = begin; k < end; ++k) {
      const double a = 0.5 * y[k];
      acc.row(rows()[k]).noalias() += a * V.row(cols()[k]);
      acc.row(cols()[k]).noalias() += a * V.row(rows()[k]);
    }
  };
  // The spectral start applies this some hundred times (a third of the start at m = 10^5). The
  // terms are cut into a number of contiguous chunks that depends on their count only (each at
  // least kChunkTerms terms, at most kMaxChunks chunks); each chunk is scattered into a zeroed
  // n x k matrix and the chunks are added to `out` in chunk order, so the result is bitwise the
  // same for any thread count. Fewer than 2 kChunkTerms terms: one chunk, scattered into `out`
  // directly (as before chunking). At most kMaxChunks threads share the work, each holding one
  // n x k matrix; the in-order additions are hand-offs between threads, which a spinning thread
  // on a busy machine slows down (OMP_WAIT_POLICY=passive, as for the row loops).
  constexpr Index kChunkTerms = 100000, kMaxChunks = 8;
  const Index chunks = std::min(kMaxChunks, size() / kChunkTerms);
  if (chunks <= 1) {
    scatter(0, size(), out);
    return;
  }
#pragma omp parallel
  {
    Matrix acc;
#pragma omp for ordered schedule(static, 1)
    for (Index c = 0; c < chunks; ++c) {
      acc.setZero(V.rows(), V.cols());
      scatter(size() * c / chunks, size() * (c + 1) / chunks, acc);
#pragma omp ordered
      out += acc;
    }
  }
}

}  // namespace sdprl
