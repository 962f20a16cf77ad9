// Internal (not installed): a loss summed over many residuals, chunk by chunk, so that |r| and
// phi(|r|) are never m-vectors (sparse PCA: 2 n^2 doubles, 64 MB at n = 2000) and the loss runs on
// every thread. The sums are taken per chunk, then added in chunk order: the same bits for any
// thread count (tests/thread_determinism_test.cc).
#pragma once

#include <algorithm>
#include <exception>
#include <vector>

#include "rows/row_blocks.h"
#include "sdprl/loss.h"
#include "sdprl/types.h"

namespace sdprl::detail {

constexpr Index kLossChunk = 4096;

// sum phi(|r|) and sum w |r| over the m residuals, and w = phi'(|r|) into w[0 .. m). `abs_residuals`
// (start, len, a) writes |r| of residuals start .. start + len - 1 into a (resized); it is called
// once per chunk, from several threads at once, so a caller may finish other per-term work there.
template <class AbsResiduals>
void chunked_loss(const Loss& loss, Index m, AbsResiduals&& abs_residuals, double* w, double* phi_sum,
                  double* weighted_abs_sum) {
  const Index chunks = (m + kLossChunk - 1) / kLossChunk;
  std::vector<double> sums(static_cast<std::size_t>(2 * chunks), 0.0);
  // An exception must not leave an OpenMP region (that terminates the program): the first one (a
  // user's loss that throws, an allocation) is kept and rethrown after it.
  std::exception_ptr failure;
#pragma omp parallel if (m > kParallelWork)
  {
    Vector a, phi, dphi;
#pragma omp for schedule(static)
    for (Index c = 0; c < chunks; ++c) {
      try {
        const Index start = c * kLossChunk, len = std::min(kLossChunk, m - start);
        abs_residuals(start, len, a);
        loss.evaluate(a, phi, dphi);
        Eigen::Map<Vector>(w + start, len) = dphi;
        sums[static_cast<std::size_t>(2 * c)] = phi.sum();
        sums[static_cast<std::size_t>(2 * c + 1)] = dphi.dot(a);
      } catch (...) {
#pragma omp critical(sdprl_chunked_loss_failure)
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
  double phi_total = 0.0, abs_total = 0.0;
  for (Index c = 0; c < chunks; ++c) {
    phi_total += sums[static_cast<std::size_t>(2 * c)];
    abs_total += sums[static_cast<std::size_t>(2 * c + 1)];
  }
  *phi_sum = phi_total;
  *weighted_abs_sum = abs_total;
}

}  // namespace sdprl::detail
