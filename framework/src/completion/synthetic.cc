// The generator of sdprl/completion/synthetic.h.
#include "sdprl/completion/synthetic.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace sdprl::mc {

SyntheticInstance generate(const SyntheticSpec& spec) {
  SyntheticInstance out;
  const std::int64_t m = spec.m, k = spec.rank;
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::exponential_distribution<double> exponential(1.0);
  if (spec.given_factor) {
    out.V = *spec.given_factor;
  } else {
    out.V.resize(m, k);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < k; ++j) out.V(i, j) = spec.exponential_factor ? exponential(rng) : normal(rng);
  }

  const double p = std::min(1.0, spec.s * static_cast<double>(k) * std::log(static_cast<double>(m)) / m);
  out.sampling_probability = p;
  const double noise_sd = std::sqrt(spec.noise_variance);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  auto value_at = [&](std::int64_t i, std::int64_t j) {
    double v = out.V.row(i).dot(out.V.row(j)) + noise_sd * normal(rng);
    if (uniform(rng) < spec.outlier_fraction) {
      v += spec.positive_outliers || uniform(rng) < 0.5 ? spec.outlier_magnitude : -spec.outlier_magnitude;
      ++out.outliers;
    }
    return v;
  };

  // Geometric skipping: the gap to the next observed position is Geometric(p), so generation
  // costs O(observed) rather than O(m^2).
  std::vector<std::vector<std::int32_t>> row_cols(m);
  std::geometric_distribution<std::int64_t> gap(p);
  auto& obs = out.observed;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t start = spec.symmetric ? i : 0;
    for (std::int64_t j = start + (p < 1.0 ? gap(rng) : 0); j < m; j += 1 + (p < 1.0 ? gap(rng) : 0)) {
      const double v = value_at(i, j);
      obs.rows.push_back(static_cast<std::int32_t>(i));
      obs.cols.push_back(static_cast<std::int32_t>(j));
      obs.values.push_back(v);
      row_cols[i].push_back(static_cast<std::int32_t>(j));
      if (spec.symmetric && i != j) {
        obs.rows.push_back(static_cast<std::int32_t>(j));
        obs.cols.push_back(static_cast<std::int32_t>(i));
        obs.values.push_back(v);
        row_cols[j].push_back(static_cast<std::int32_t>(i));
      }
    }
  }
  for (auto& cols : row_cols) std::sort(cols.begin(), cols.end());
  auto observed = [&](std::int64_t i, std::int64_t j) {
    return std::binary_search(row_cols[i].begin(), row_cols[i].end(), static_cast<std::int32_t>(j));
  };
  auto add = [&](EntrySet& set, std::int64_t i, std::int64_t j) {
    set.rows.push_back(static_cast<std::int32_t>(i));
    set.cols.push_back(static_cast<std::int32_t>(j));
    set.values.push_back(out.V.row(i).dot(out.V.row(j)));
  };

  if (static_cast<double>(m) * m <= 1e7) {
    std::vector<std::int64_t> unobserved;
    unobserved.reserve(static_cast<std::size_t>(m * m) - obs.rows.size());
    for (std::int64_t i = 0; i < m; ++i) {
      auto it = row_cols[i].begin();
      for (std::int64_t j = 0; j < m; ++j) {
        if (it != row_cols[i].end() && *it == j) {
          ++it;
          continue;
        }
        unobserved.push_back(i * m + j);
      }
    }
    std::shuffle(unobserved.begin(), unobserved.end(), rng);
    const std::size_t half = unobserved.size() / 2;
    for (std::size_t q = 0; q < unobserved.size(); ++q)
      add(q < half ? out.validation : out.test, unobserved[q] / m, unobserved[q] % m);
  } else {
    std::uniform_int_distribution<std::int64_t> index(0, m - 1);
    for (EntrySet* set : {&out.validation, &out.test}) {
      while (static_cast<std::int64_t>(set->rows.size()) < spec.eval_samples) {
        const std::int64_t i = index(rng), j = index(rng);
        if (!observed(i, j)) add(*set, i, j);
      }
    }
  }
  return out;
}

}  // namespace sdprl::mc
