// EntryTerms::apply_adjoint_sym: the scatter of sum_tau y_tau sym(Q_tau) V, reduced over a fixed
// number of term chunks so that the result does not depend on the thread count.
#include <algorithm>

#include "sdprl/terms/entry_terms.h"

namespace sdprl {

void EntryTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  const Index n = V.rows(), k = V.cols();
  out.setZero(n, k);
  // sym(e_i e_j^T) V = (e_i v_j^T + e_j v_i^T) / 2, scattered into two rows per term.
  auto scatter_vector = [&](Index begin, Index end, double* o) {  // k = 1: plain scalars
    const double* v = V.data();
    const double* yt = y.data();
    const std::int32_t* ri = rows().data();
    const std::int32_t* ci = cols().data();
    // Row i's gains are summed in a register while the terms stay on row i (terms come sorted by
    // row in matrix completion): o[i] += ... at every term would chain each addition to the
    // previous store through memory.
    Index row = begin < end ? ri[begin] : 0;
    double sum = 0.0;
    for (Index t = begin; t < end; ++t) {
      const double a = 0.5 * yt[t];
      const Index i = ri[t], j = ci[t];
      if (i != row) {
        o[row] += sum;
        row = i;
        sum = 0.0;
      }
      sum += a * v[j];
      o[j] += a * v[i];
    }
    if (begin < end) o[row] += sum;
  };
  auto scatter = [&](Index begin, Index end, Matrix& acc) {  // k > 1
    for (Index t = begin; t < end; ++t) {
      const double a = 0.5 * y[t];
      acc.row(rows()[t]).noalias() += a * V.row(cols()[t]);
      acc.row(cols()[t]).noalias() += a * V.row(rows()[t]);
    }
  };
  // The terms are cut into a number of contiguous chunks that depends on their count only (at
  // most kMaxChunks), each scattered into a zeroed accumulator, and the accumulators are added in
  // chunk order, so the result is bitwise the same for any thread count. One chunk: scattered
  // into `out` directly.
  constexpr Index kMaxChunks = 8;
  if (k == 1) {
    // The certificate's and the spectral start's Lanczos vectors (one column; a hundred or more
    // products per run: the certificate was 60 ms of a 0.74 s coupled run at m = 2000, 152k
    // terms, on one thread). Chunks of at least kVectorChunkTerms terms, their accumulators side
    // by side in a chunks x n matrix (at most as many doubles as terms, so never more memory than
    // the terms hold), added row by row after one barrier: no hand-off between threads.
    constexpr Index kVectorChunkTerms = 16384;
    const Index chunks = std::min({kMaxChunks, size() / kVectorChunkTerms, n > 0 ? size() / n : Index{0}});
    if (chunks <= 1) return scatter_vector(0, size(), out.data());
    Matrix parts = Matrix::Zero(chunks, n);
    double* o = out.data();
#pragma omp parallel
    {
#pragma omp for schedule(static, 1)
      for (Index c = 0; c < chunks; ++c) scatter_vector(size() * c / chunks, size() * (c + 1) / chunks, parts.row(c).data());
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        double sum = 0.0;
        for (Index c = 0; c < chunks; ++c) sum += parts(c, i);
        o[i] = sum;
      }
    }
    return;
  }
  // k columns (L-BFGS's gradient, the rank staircase's, the sdpa export's): at least kChunkTerms terms a chunk and
  // one n x k accumulator a thread; the in-order additions are hand-offs between threads, which a
  // spinning thread on a busy machine slows down (OMP_WAIT_POLICY=passive, as for the row loops).
  constexpr Index kChunkTerms = 100000;
  const Index chunks = std::min(kMaxChunks, size() / kChunkTerms);
  if (chunks <= 1) return scatter(0, size(), out);
#pragma omp parallel
  {
    Matrix acc;
#pragma omp for ordered schedule(static, 1)
    for (Index c = 0; c < chunks; ++c) {
      acc.setZero(n, k);
      scatter(size() * c / chunks, size() * (c + 1) / chunks, acc);
#pragma omp ordered
      out += acc;
    }
  }
}

}  // namespace sdprl
