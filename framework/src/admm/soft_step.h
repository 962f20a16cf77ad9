// Internal (not installed): the ADMM's e- and nu-steps over a run of split terms (formulas in
// mm/surrogate.h), shared by the generic iteration (admm.cc) and the dense fused pass
// (xt_step/dense_rows.cc).
#pragma once

#include <algorithm>
#include <cmath>

#include "sdprl/types.h"

namespace sdprl::detail {

// v = P(D) + b, z = v + nu / rho, e = soft(z, 2 w / rho) = z - clamp(z, -2 w / rho, 2 w / rho),
// nu += rho (v - e), for h split terms. Branch-free (min/max) so that the loop vectorises; w = 1
// unless kWeighted.
template <bool kWeighted>
void soft_step(const double* __restrict pd, const double* __restrict b, const double* __restrict w, double rho,
               Index h, double* __restrict e, double* __restrict nu) {
  const double threshold = 2.0 / rho, inv_rho = 1.0 / rho;
  for (Index k = 0; k < h; ++k) {
    const double v = pd[k] + b[k];
    const double z = v + nu[k] * inv_rho;
    const double t = kWeighted ? threshold * w[k] : threshold;
    const double ek = z - std::min(std::max(z, -t), t);
    e[k] = ek;
    nu[k] += rho * (v - ek);
  }
}

// nu = clamp(u, -bound, bound): the multiplier a packed value u stands for (bound = 2 w).
inline double packed_nu(double u, double bound) { return std::min(std::max(u, -bound), bound); }

// The same steps on a state packed with the weights' bounds (AdmmState::u: u = nu + rho e,
// nu = clamp(u, -2 w, 2 w)): u' = rho z = rho v + nu, nu' = clamp(u', -2 w, 2 w). On entry pd
// holds P(D); on return it holds nu' (for P*(nu')). Returns sum w |v| (H's terms at D) and
// <nu', b>, summed in the order of k.
struct PackedStepSums {
  double weighted_abs = 0.0, nu_b = 0.0;
};
// The sums go to kLanes partial sums (lane k mod kLanes), added in lane order at the end, so that the
// loop vectorises; the order is fixed by the code, not by the thread count.
constexpr Index kLanes = 8;
inline PackedStepSums packed_soft_step(double* __restrict pd, const double* __restrict b,
                                       const double* __restrict w, double rho, Index h, double* __restrict u) {
  double abs_lanes[kLanes] = {}, nub_lanes[kLanes] = {};
  auto step = [&](Index k, Index lane) {
    const double v = pd[k] + b[k], bound = 2.0 * w[k];
    const double nu = packed_nu(u[k], bound);
    const double next = rho * v + nu;
    const double nu_next = packed_nu(next, bound);
    u[k] = next;
    pd[k] = nu_next;
    abs_lanes[lane] += w[k] * std::abs(v);
    nub_lanes[lane] += nu_next * b[k];
  };
  Index k = 0;
  for (; k + kLanes <= h; k += kLanes)
    for (Index l = 0; l < kLanes; ++l) step(k + l, l);
  for (; k < h; ++k) step(k, 0);
  PackedStepSums sums;
  for (Index l = 0; l < kLanes; ++l) {
    sums.weighted_abs += abs_lanes[l];
    sums.nu_b += nub_lanes[l];
  }
  return sums;
}

// y = nu + rho (b - e) = rho b + 2 nu - u on a packed state: the vector whose P* enters the Xt-step.
inline void packed_multiplier_sum(const double* __restrict b, const double* __restrict w, const double* __restrict u,
                                  double rho, Index h, double* __restrict y) {
  for (Index k = 0; k < h; ++k) {
    y[k] = rho * b[k] + 2.0 * packed_nu(u[k], 2.0 * w[k]) - u[k];
  }
}

// sum w |p + b| over h split terms, in the order of k: H's terms at a step whose P(step) is p.
// In kLanes partial sums, as packed_soft_step.
inline double weighted_abs_sum(const double* __restrict p, const double* __restrict b, const double* __restrict w,
                               Index h) {
  double lanes[kLanes] = {};
  Index k = 0;
  for (; k + kLanes <= h; k += kLanes)
    for (Index l = 0; l < kLanes; ++l) lanes[l] += w[k + l] * std::abs(p[k + l] + b[k + l]);
  for (; k < h; ++k) lanes[0] += w[k] * std::abs(p[k] + b[k]);
  double sum = 0.0;
  for (Index l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

}  // namespace sdprl::detail
