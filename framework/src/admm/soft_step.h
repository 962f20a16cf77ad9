// Internal (not installed): the ADMM's e- and nu-steps over a run of split terms (formulas in
// mm/surrogate.h), shared by the generic iteration (admm.cc) and the dense fused pass
// (xt_step/dense_rows.cc).
#pragma once

#include <algorithm>
#include <cmath>

#include "sdprl/types.h"

namespace sdprl::detail {

// What the dense pass sums while it runs the steps: sum w |v| (H's terms at D) and <nu', b>.
struct SoftStepSums {
  double weighted_abs = 0.0, nu_b = 0.0;
};

// v = P(D) + b, z = v + nu / rho, e = soft(z, 2 w / rho) = z - clamp(z, -2 w / rho, 2 w / rho),
// nu += rho (v - e), for h split terms. Branch-free (min/max) so that the loop vectorises; w = 1
// unless kWeighted. With kSums also the sums above, in the order of k (the same bits wherever the
// run of terms is processed).
template <bool kWeighted, bool kSums = false>
SoftStepSums soft_step(const double* __restrict pd, const double* __restrict b, const double* __restrict w,
                       double rho, Index h, double* __restrict e, double* __restrict nu) {
  const double threshold = 2.0 / rho, inv_rho = 1.0 / rho;
  SoftStepSums sums;
  for (Index k = 0; k < h; ++k) {
    const double v = pd[k] + b[k];
    const double z = v + nu[k] * inv_rho;
    const double t = kWeighted ? threshold * w[k] : threshold;
    const double ek = z - std::min(std::max(z, -t), t);
    e[k] = ek;
    nu[k] += rho * (v - ek);
    if constexpr (kSums) {
      sums.weighted_abs += (kWeighted ? w[k] : 1.0) * std::abs(v);
      sums.nu_b += nu[k] * b[k];
    }
  }
  return sums;
}

// sum w |p + b| over h split terms, in the order of k: H's terms at a step whose P(step) is p.
inline double weighted_abs_sum(const double* __restrict p, const double* __restrict b, const double* __restrict w,
                               Index h) {
  double sum = 0.0;
  for (Index k = 0; k < h; ++k) sum += w[k] * std::abs(p[k] + b[k]);
  return sum;
}

}  // namespace sdprl::detail
