// Robust colored maximum variance unfolding (paper Section "Robust CMVU" and its experiment on
// USPS; docs/method.md sections 1 and 5):
//
//     min_X  sum_{(i,j) in train} phi(| ||x_i - x_j||^2 - t_ij |) - (gamma/2) tr(X^T H T H X)
//            + (lambda/2) ||X||_F^2
//
// i.e. distance terms Q = (e_i - e_j)(e_i - e_j)^T on neighbour pairs and A = -H T H with T = Y Y^T
// the one-hot label kernel (centered_kernel.h: the public sdprl::LowRankRegularizer with
// factor H Y and sign -1, applied in O(n c r)).
//
// Protocol (what the paper says, and what this plugin fixes where it is loose):
//  * Neighbour pairs Omega: the symmetrised k-nearest-neighbour graph (sdprl::graph::knn_pairs) of
//    the CLEAN samples. The paper uses "the nearest 1% neighbors of each sample", so the default k
//    is round(0.01 n) (20 for USPS, n = 2007). The paper's |Omega| = 401,400 = 2007 x 200 does not
//    match 1% (it would be 200 neighbours, or 100 counted in both orders); k = 20 gives ~28,000
//    pairs here. `neighbours = K` overrides.
//  * Omega is split at random 60/20/20 into training / validation / test pairs (paper).
//  * Corruption of the training data. The paper computes t_ij "from the clean data set (before
//    adding noise)" and then corrupts "the training set", which taken literally would leave the
//    training targets clean. sdprl reads it as: TRAINING targets are squared distances of the
//    corrupted data, VALIDATION and TEST targets squared distances of the clean samples (so the
//    test RMSE measures recovery of the clean geometry).
//      "noise":    every sample: x_if += N(0, noise_variance * Var_f), Var_f the variance of
//                  feature f over the samples (paper: N(0, 0.01 Var(x)), a variance).
//      "outliers": the paper "randomly sample[s] some samples (5% and 10%) from the training set"
//                  and adds N(0, 5 x~) to each, x~_f = max_i |x_if|. Its training set is the set
//                  of training PAIRS, so by default (outlier_unit = "pairs") a fraction
//                  outlier_fraction of the training pairs get t_ij = ||x_i + e - x_j||^2 with a
//                  fresh e per pair. outlier_unit = "samples" corrupts that fraction of the
//                  SAMPLES instead (every training pair of such a sample). Measured on USPS (10%,
//                  n = 2007, lambda = 10): with "samples" no loss recovers the clean distances
//                  (test RMSE leaky-MCP 463, l1 2709, against 15-16 for the same losses with
//                  "pairs"): all pairs of a corrupted sample agree that it lies far
//                  from its neighbours, which an embedding can honour, so those residuals are not
//                  outliers. 5 x~_f is taken as a STANDARD DEVIATION (e_f ~ N(0, (outlier_scale
//                  x~_f)^2)): it has the units of x (a variance would need x^2, as the noise case's
//                  0.01 Var(x) has), which also keeps the protocol invariant under rescaling the
//                  data. For USPS (pixels in [-1, 1], x~_f = 1) e adds about 256 * 25 = 6400 to a
//                  squared distance; the median clean neighbour distance is 33.
//      "none":     no corruption.
//    The split and the corruption use independent random streams of `seed`, so that runs with
//    different corruptions share the same split.
//  * Metrics: test_rmse = sqrt(mean over test pairs of (Z_ii + Z_jj - 2 Z_ij - t_ij)^2) (paper),
//    validation_rmse likewise (it chooses lambda from a grid), and test_relative_rmse = test_rmse
//    / sqrt(mean t_ij^2) over the test pairs, a scale-free number.
//  * gamma = 0.01 (paper). rank: the paper takes the largest r with r(r+1)/2 <= |Omega| (~900),
//    far more than a distance-preserving embedding needs and O(n r^3) per MM step; sdprl's default
//    is 10 (= the number of USPS classes). lambda: see kDefaultLambda.
//
// [model] keys:
//   data = FILE            LIBSVM file (.bz2/.gz read directly), labels positive integers (classes);
//                          default "data/usps-test.libsvm.bz2" next to the model file
//   features = INT         the data's dimension d (0: the largest feature index seen; default 0)
//   samples = INT          use only the first N samples (0: all; default 0)
//   neighbours = INT       k of the kNN graph (default round(0.01 n), at least 1)
//   corruption = "none" | "noise" | "outliers"   (default "outliers")
//   noise_variance = X     "noise": variance as a fraction of each feature's variance (0.01)
//   outlier_fraction = X   "outliers": fraction of the training pairs (or samples) corrupted (0.1)
//   outlier_unit = "pairs" | "samples"   "outliers": what is corrupted (default "pairs")
//   outlier_scale = X      "outliers": standard deviation in units of max |x_f| (5)
//   scaling = "none" | "median"   "median" divides the data by the square root of the median
//                          clean neighbour squared distance, so that the median target is 1
//                          (default "none": the data's own units)
//   seed = INT             split and corruption seed (default solver.seed)
//   rank = INT             default rank of the factor (10)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "centered_kernel.h"
#include "sdprl/error.h"
#include "sdprl/graph/knn_graph.h"
#include "sdprl/io/libsvm.h"
#include "sdprl/plugin.h"
#include "sdprl/terms/distance_terms.h"

namespace sdprl::cmvu {

// What `sdprl plugins` says of this application.
constexpr char kDescription[] =
    "robust colored MVU (distance terms on kNN pairs, A = -H T H label kernel; LIBSVM data)";

namespace {

constexpr double kPaperGamma = 0.01;  // paper: "The tradeoff parameter gamma is fixed at 0.01".
// lambda by default: max(10, 3 * gamma * top_eigenvalue(H T H)), gamma = 0.01.
// The quadratic part (gamma/2)<X, A X> + (lambda/2)||X||^2 is convex only for lambda >=
// gamma * top_eigenvalue (the eigenvalue is about the size of the largest class: 331 on USPS,
// threshold 3.3). Below it the objective is bounded only by the loss terms, which grow slowly (l1
// diverges at lambda = 1 on USPS) or hardly at all (leaky-MCP beyond theta); the second term keeps a
// margin of 3 for data with large classes. 10 itself was measured on USPS with 10% outlier pairs:
// for l1, lambda = 10 beats 3 and 30 on the validation pairs (n = 2007) and 5 and 1.7 (n = 300,
// 10 neighbours: test RMSE 32 against 418 and 560, the long outlier pairs pull harder when a sample
// has fewer pairs); for leaky-MCP it is within 0.5 of the best of 1, 3, 10.
constexpr double kDefaultLambda = 10.0, kLambdaMargin = 3.0;
constexpr std::int64_t kDefaultRank = 10;
constexpr double kTrainFraction = 0.6, kValidationFraction = 0.2;  // the rest tests (paper)

struct PairSet {
  std::vector<std::int32_t> rows, cols;
  Vector targets;
};

// Eigen's stableNorm scales before it squares: data near 1e-150 (targets near 1e-300) gave an RMSE
// of 0 and no relative RMSE.
double pair_rmse(const PairSet& set, const Matrix& X) {
  if (set.rows.empty()) return std::nan("");
  Vector e(static_cast<Index>(set.rows.size()));
  for (std::size_t k = 0; k < set.rows.size(); ++k)
    e[static_cast<Index>(k)] =
        (X.row(set.rows[k]) - X.row(set.cols[k])).squaredNorm() - set.targets[static_cast<Index>(k)];
  return e.stableNorm() / std::sqrt(static_cast<double>(e.size()));
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = 0.5 * (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
  return m;
}

// Class index (0-based) of each sample: the distinct labels in increasing order. Labels must be
// positive integers (USPS: 1..10 = digit + 1); only their equality matters for T = Y Y^T.
std::vector<std::int32_t> classes_of(const std::vector<double>& labels, const std::filesystem::path& file,
                                     Index* num_classes) {
  std::vector<double> distinct;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double y = labels[i];
    if (!(std::isfinite(y) && y >= 1.0 && y == std::floor(y) && y < 2147483648.0)) {
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", y);
      throw Error(file.string(), "sample " + std::to_string(i + 1) + " has label " + text +
                                     "; cmvu needs class labels that are positive integers (1, 2, ...)");
    }
    distinct.push_back(y);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<std::int32_t> classes(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i)
    classes[i] = static_cast<std::int32_t>(std::lower_bound(distinct.begin(), distinct.end(), labels[i]) - distinct.begin());
  *num_classes = static_cast<Index>(distinct.size());
  return classes;
}

class Cmvu final : public Application {
 public:
  std::string name() const override { return "cmvu"; }

  Model build(const ConfigTable& table, const BuildContext& context) const override {
    // Every option is read up front (so a bad value is reported before the data is read, and no
    // option counts as unknown because the chosen corruption does not use it).
    const std::int64_t features = table.integer("features", 0, NumberRule::non_negative());
    const std::int64_t samples = table.integer("samples", 0, NumberRule::non_negative());
    if (samples == 1) table.fail("samples", "expected 0 (all samples) or at least 2, got 1");
    const bool neighbours_given = table.contains("neighbours");
    const std::int64_t neighbours_opt = table.integer("neighbours", 1, NumberRule::at_least(1));
    const std::string corruption = table.string("corruption", "outliers", {"none", "noise", "outliers"});
    const double noise_variance = table.number("noise_variance", 0.01, NumberRule::non_negative());
    const double outlier_fraction = table.number("outlier_fraction", 0.1, NumberRule::closed(0.0, 1.0));
    const double outlier_scale = table.number("outlier_scale", 5.0, NumberRule::non_negative());
    const std::string outlier_unit = table.string("outlier_unit", "pairs", {"pairs", "samples"});
    const std::string scaling = table.string("scaling", "none", {"none", "median"});
    const auto seed = static_cast<std::uint64_t>(
        table.integer("seed", static_cast<std::int64_t>(context.seed), NumberRule::non_negative()));
    const std::int64_t rank = table.integer("rank", kDefaultRank, NumberRule::at_least(1));

    const std::filesystem::path data_file = table.file("data", "data/usps-test.libsvm.bz2");

    // ---- data
    io::LabeledData data = io::read_libsvm(data_file, static_cast<Index>(features));
    Index n = data.samples.rows();
    if (samples > 0) {
      if (samples > n)
        table.fail("samples", "samples = " + std::to_string(samples) + " exceeds the " + std::to_string(n) +
                                  " samples of " + data_file.string());
      n = static_cast<Index>(samples);
    }
    if (n < 2) throw Error(data_file.string(), "cmvu needs at least 2 samples, the file has " + std::to_string(n));
    if (n > 2000000000) throw Error(data_file.string(), "too many samples (at most 2^31 - 1)");
    Matrix clean = data.samples.topRows(n);
    data.labels.resize(static_cast<std::size_t>(n));
    const Index d = clean.cols();
    if (!clean.allFinite()) throw Error(data_file.string(), "the samples contain NaN/Inf values");
    Index num_classes = 0;
    const std::vector<std::int32_t> classes = classes_of(data.labels, data_file, &num_classes);

    // ---- neighbour pairs of the clean samples
    const Index k = neighbours_given ? static_cast<Index>(neighbours_opt)
                                     : std::max<Index>(1, static_cast<Index>(std::llround(0.01 * static_cast<double>(n))));
    if (k > n - 1)
      table.fail("neighbours", "neighbours = " + std::to_string(k) + " is too many for " + std::to_string(n) +
                                   " samples (at most n - 1 = " + std::to_string(n - 1) + ")");
    const std::vector<std::pair<Index, Index>> pairs = graph::knn_pairs(clean, k);
    const Index m = static_cast<Index>(pairs.size());

    // ---- scaling (the kNN graph does not depend on it)
    double scale = 1.0;
    if (scaling == "median") {
      std::vector<double> dist(pairs.size());
      for (std::size_t p = 0; p < pairs.size(); ++p)
        dist[p] = (clean.row(pairs[p].first) - clean.row(pairs[p].second)).squaredNorm();
      const double med = median(std::move(dist));
      if (!(med > 0.0)) throw Error(data_file.string(), "scaling = \"median\": the median neighbour distance is 0");
      scale = std::sqrt(med);
      clean /= scale;
    }

    // ---- split 60/20/20 (stream 1 of the seed)
    std::vector<Index> order(static_cast<std::size_t>(m));
    std::iota(order.begin(), order.end(), Index(0));
    {
      std::mt19937_64 split_rng(seed);
      std::shuffle(order.begin(), order.end(), split_rng);
    }
    const Index m_train = static_cast<Index>(std::llround(kTrainFraction * static_cast<double>(m)));
    const Index m_val = static_cast<Index>(std::llround(kValidationFraction * static_cast<double>(m)));
    if (m_train < 1) throw Error(data_file.string(), "too few neighbour pairs (" + std::to_string(m) + ") to train on");

    // ---- corruption (stream 2 of the seed)
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32), 0x636d7675u /* "cmvu" */};
    std::mt19937_64 rng(seq);
    std::normal_distribution<double> normal(0.0, 1.0);
    const Eigen::RowVectorXd outlier_sd = outlier_scale * clean.cwiseAbs().colwise().maxCoeff();
    Matrix corrupted = clean;
    Index corrupted_samples = 0;
    if (corruption == "noise") {
      const Eigen::RowVectorXd mean = clean.colwise().mean();
      const Eigen::RowVectorXd var = (clean.rowwise() - mean).colwise().squaredNorm() / static_cast<double>(n);
      const Eigen::RowVectorXd sd = (noise_variance * var).cwiseSqrt();
      for (Index i = 0; i < n; ++i)
        for (Index f = 0; f < d; ++f) corrupted(i, f) += sd[f] * normal(rng);
      corrupted_samples = n;
    } else if (corruption == "outliers" && outlier_unit == "samples") {
      corrupted_samples = static_cast<Index>(std::llround(outlier_fraction * static_cast<double>(n)));
      std::vector<Index> who(static_cast<std::size_t>(n));
      std::iota(who.begin(), who.end(), Index(0));
      std::shuffle(who.begin(), who.end(), rng);
      for (Index q = 0; q < corrupted_samples; ++q) {
        const Index i = who[static_cast<std::size_t>(q)];
        for (Index f = 0; f < d; ++f) corrupted(i, f) += outlier_sd[f] * normal(rng);
      }
    }

    // ---- terms and evaluation sets
    auto make_set = [&](Index begin, Index end, const Matrix& points) {
      PairSet set;
      set.rows.reserve(static_cast<std::size_t>(end - begin));
      set.cols.reserve(static_cast<std::size_t>(end - begin));
      set.targets.resize(end - begin);
      for (Index q = begin; q < end; ++q) {
        const auto& [i, j] = pairs[static_cast<std::size_t>(order[static_cast<std::size_t>(q)])];
        set.rows.push_back(static_cast<std::int32_t>(i));
        set.cols.push_back(static_cast<std::int32_t>(j));
        set.targets[q - begin] = (points.row(i) - points.row(j)).squaredNorm();
      }
      return set;
    };
    PairSet train = make_set(0, m_train, corrupted);
    if (corruption == "outliers" && outlier_unit == "pairs") {
      // A fraction of the training pairs: t_ij = ||x_i + e - x_j||^2 with a fresh e per pair.
      const Index count = static_cast<Index>(std::llround(outlier_fraction * static_cast<double>(m_train)));
      std::vector<Index> which(static_cast<std::size_t>(m_train));
      std::iota(which.begin(), which.end(), Index(0));
      std::shuffle(which.begin(), which.end(), rng);
      Eigen::RowVectorXd diff(d);
      for (Index q = 0; q < count; ++q) {
        const auto p = static_cast<std::size_t>(which[static_cast<std::size_t>(q)]);
        diff = clean.row(train.rows[p]) - clean.row(train.cols[p]);
        for (Index f = 0; f < d; ++f) diff[f] += outlier_sd[f] * normal(rng);
        train.targets[static_cast<Index>(p)] = diff.squaredNorm();
      }
    }
    PairSet validation = make_set(m_train, m_train + m_val, clean);
    PairSet test = make_set(m_train + m_val, m, clean);
    const double median_train_target = median(std::vector<double>(train.targets.data(), train.targets.data() + train.targets.size()));
    const PairSet train_clean = make_set(0, m_train, clean);
    const double median_clean_target =
        median(std::vector<double>(train_clean.targets.data(), train_clean.targets.data() + train_clean.targets.size()));
    const Index corrupted_pairs = (train.targets.array() != train_clean.targets.array()).count();

    auto kernel = centered_label_kernel(classes, num_classes);

    Model model;
    model.application = name();
    model.default_gamma = kPaperGamma;
    model.default_lambda = std::max(kDefaultLambda, kLambdaMargin * kPaperGamma * kernel->spectral_norm());
    model.default_rank = rank;
    model.facts = {{"n", static_cast<double>(n)},
                   {"d", static_cast<double>(d)},
                   {"classes", static_cast<double>(num_classes)},
                   {"neighbours", static_cast<double>(k)},
                   {"pairs", static_cast<double>(m)},
                   {"train_pairs", static_cast<double>(train.rows.size())},
                   {"validation_pairs", static_cast<double>(validation.rows.size())},
                   {"test_pairs", static_cast<double>(test.rows.size())},
                   {"corrupted_samples", static_cast<double>(corrupted_samples)},
                   {"corrupted_train_pairs", static_cast<double>(corrupted_pairs)},
                   {"data_scale", scale},
                   {"median_clean_distance", median_clean_target},
                   {"median_train_target", median_train_target},
                   {"kernel_top_eigenvalue", kernel->spectral_norm()}};
    model.terms = std::make_shared<DistanceTerms>(n, std::move(train.rows), std::move(train.cols), std::move(train.targets));
    model.quadratic = std::move(kernel);
    // Relative to the RMS of the test targets, so that data sets of any scale compare.
    const double test_scale =
        test.rows.empty() ? 0.0 : test.targets.stableNorm() / std::sqrt(static_cast<double>(test.rows.size()));
    auto rmse_of = [](PairSet set) -> HeldOutEvaluator::Rmse {
      if (set.rows.empty()) return {};
      return [set = std::move(set)](const Matrix& X) { return pair_rmse(set, X); };
    };
    model.evaluator =
        std::make_shared<HeldOutEvaluator>(rmse_of(std::move(validation)), rmse_of(std::move(test)), test_scale);
    return model;
  }
};

}  // namespace
}  // namespace sdprl::cmvu

SDPRL_APPLICATION_PLUGIN("cmvu", "1.0", sdprl::cmvu::kDescription, sdprl::cmvu::Cmvu)
