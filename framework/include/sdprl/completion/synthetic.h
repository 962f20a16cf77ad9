// The paper's synthetic robust matrix-completion instance (docs/method.md section 5), generated for
// the matrix-completion and snmf applications and the benchmarks:
//   M = V V^T, V in R^{m x k}, V_ij ~ N(0, 1);  M' = M + N + S,
//   N_ij ~ N(0, noise_variance) (variance, not standard deviation: the paper's N(0, 0.1)),
//   S_ij = +-sigma with probability o (each sign equally likely), else 0;
// each entry of M' is observed with probability p = s k ln(m) / m.
// Symmetric NMF variant (factor = exponential, outliers = positive): V_ij ~ Exp(1) and each outlier
// is +sigma (the paper's "outliers from {0, sigma}"), so M' stays nonnegative; or V given (e.g. the
// one-hot label matrix of USPS).
//   sampling = independent (default): N, S non-symmetric, each of the m^2 entries independently;
//   sampling = symmetric: the upper triangle (diagonal included) is sampled and mirrored.
// Validation and test sets: the unobserved entries, compared with the clean M. When m^2 <= 10^7
// all of them are used, shuffled and split in half; otherwise `eval_samples` of each are drawn
// uniformly from the unobserved entries.
#pragma once

#include <cstdint>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl::mc {

struct SyntheticSpec {
  std::int64_t m = 500;
  std::int64_t rank = 5;
  double s = 2.0;
  double outlier_fraction = 0.05;
  double outlier_magnitude = 10.0;
  double noise_variance = 0.1;
  bool symmetric = false;
  std::uint64_t seed = 1;
  std::int64_t eval_samples = 1000000;
  bool exponential_factor = false;   // V_ij ~ Exp(1) instead of N(0, 1)
  bool positive_outliers = false;    // outliers +sigma only, instead of +-sigma
  const Matrix* given_factor = nullptr;  // use this V (m x rank) instead of a random one
};

struct EntrySet {
  std::vector<std::int32_t> rows, cols;
  std::vector<double> values;
};

struct SyntheticInstance {
  Matrix V;               // the ground-truth factor, m x k
  EntrySet observed;      // with values of M'
  EntrySet validation;    // values of M
  EntrySet test;          // values of M
  std::int64_t outliers = 0;
  double sampling_probability = 0.0;
};

SDPRL_API SyntheticInstance generate(const SyntheticSpec& spec);

}  // namespace sdprl::mc
