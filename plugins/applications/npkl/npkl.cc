// Nonparametric kernel learning (paper Section "Example Robust SDP Applications", NPKL;
// docs/method.md sections 1 and 5): learn a kernel Z = X X^T from must-link (T_ij = 1) and
// cannot-link (T_ij = 0) pairs, smoothed along the data manifold by the Laplacian L of the
// k-nearest-neighbour graph of the samples:
//   min sum_{(i,j) in train} phi(|Z_ij - T_ij|) + (gamma/2) tr(X^T L X) + (lambda/2)||X||^2.
//
// [model] keys:
//   data = FILE             LIBSVM samples (default: none, required), .gz/.bz2 accepted
//   features = INT          declared feature count (a1a: 123; 0 = highest index seen)
//   samples = INT           use only the first N samples (0 = all)
//   pairs = FILE            optional CSV "i,j,T" (1-based sample indices, T in {0, 1}); else
//   pairs_per_sample = 6    the paper's protocol: pairs_per_sample * n random pairs of distinct
//                           samples, T_ij = 1 for the same label else 0
//   split = [0.6, 0.2, 0.2] train / validation / test fractions of the pairs (random, seeded)
//   flip_fraction = 0.05    fraction of training pairs whose T is flipped (1 - T): the outliers
//   neighbours = 2          k of the kNN graph (Euclidean distance on the raw features)
//   seed = INT              pair sampling, split and flips (default: solver.seed)
// Default rank: the largest r with r(r+1)/2 <= number of training pairs (paper). Default
// gamma = 1, lambda = 1. Metrics: test_rmse and validation_rmse of Z_ij against the true T_ij.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include "sdprl/error.h"
#include "sdprl/graph/knn_graph.h"
#include "sdprl/io/libsvm.h"
#include "sdprl/io/matrix_market.h"
#include "sdprl/plugin.h"
#include "sdprl/regularizers/sparse_regularizer.h"
#include "sdprl/terms/entry_terms.h"

namespace sdprl::npkl {

// What `sdprl plugins` says of this application.
constexpr char kDescription[] =
    "nonparametric kernel learning: must/cannot-link pairs, kNN-graph Laplacian";

namespace {

struct Pairs {
  std::vector<std::int32_t> i, j;
  std::vector<double> t;
  void add(std::int32_t a, std::int32_t b, double v) { i.push_back(a), j.push_back(b), t.push_back(v); }
  std::size_t size() const { return i.size(); }
};

double pair_rmse(const Pairs& p, const Matrix& X) {
  if (p.size() == 0) return std::nan("");
  double s = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    const double e = X.row(p.i[k]).dot(X.row(p.j[k])) - p.t[k];
    s += e * e;
  }
  return std::sqrt(s / static_cast<double>(p.size()));
}

class Npkl final : public Application {
 public:
  std::string name() const override { return "npkl"; }

  Model build(const ConfigTable& table, const BuildContext& context) const override {
    const auto data_file = table.file("data");
    if (!data_file) table.fail("data", "missing required key 'data' (a LIBSVM file of the samples)");
    const Index features = table.integer("features", 0, NumberRule::at_least(0));
    const Index cap = table.integer("samples", 0, NumberRule::at_least(0));
    const double per_sample = table.number("pairs_per_sample", 6.0, NumberRule::positive());
    const std::vector<double> split = table.numbers("split", {0.6, 0.2, 0.2}, NumberRule::closed(0.0, 1.0));
    if (split.size() != 3 || std::abs(split[0] + split[1] + split[2] - 1.0) > 1e-9 || split[0] <= 0.0)
      table.fail("split", "expected three fractions [train, validation, test] summing to 1 with train > 0");
    const double flip = table.number("flip_fraction", 0.05, NumberRule::closed(0.0, 1.0));
    const Index k = table.integer("neighbours", 2, NumberRule::at_least(1));
    const std::uint64_t seed =
        static_cast<std::uint64_t>(table.integer("seed", static_cast<std::int64_t>(context.seed), NumberRule::non_negative()));

    io::LabeledData data = io::read_libsvm(*data_file, features);
    Index n = data.samples.rows();
    if (cap > 0 && cap < n) {
      data.samples.conservativeResize(cap, Eigen::NoChange);
      data.labels.resize(cap);
      n = cap;
    }
    if (n < 3) throw Error(data_file->string(), "NPKL needs at least 3 samples, got " + std::to_string(n));
    if (k >= n) table.fail("neighbours", "k = " + std::to_string(k) + " must be below the number of samples " + std::to_string(n));

    std::mt19937_64 rng(seed);
    Pairs all;
    if (const auto pair_file = table.file("pairs")) {
      const io::CoordinateMatrix given = io::read_csv_triplets(*pair_file, 1);
      for (const io::Triplet& t : given.entries) {
        if (t.row >= n || t.col >= n)
          throw Error(format_location(pair_file->string(), t.line),
                      "sample index outside [1, " + std::to_string(n) + "]");
        if (t.value != 0.0 && t.value != 1.0)
          throw Error(format_location(pair_file->string(), t.line), "expected T = 0 or 1, got " + std::to_string(t.value));
        all.add(static_cast<std::int32_t>(t.row), static_cast<std::int32_t>(t.col), t.value);
      }
      if (all.size() == 0) throw Error(pair_file->string(), "no pairs");
    } else {
      // pairs_per_sample * n distinct unordered pairs of distinct samples.
      const auto wanted = static_cast<std::size_t>(std::llround(per_sample * static_cast<double>(n)));
      const auto possible = static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) / 2;
      if (wanted > possible) {
        // Blamed at the [model] table when the key is not in the file: it is the default's fault.
        std::ostringstream why;
        why << (table.contains("pairs_per_sample") ? "" : "not set, and its default ") << per_sample << " asks for "
            << wanted << " pairs, more than the " << possible << " pairs of the " << n
            << " samples (give fewer, or a pairs file)";
        table.fail("pairs_per_sample", why.str());
      }
      std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(n - 1));
      std::set<std::pair<std::int32_t, std::int32_t>> seen;
      while (all.size() < wanted) {
        std::int32_t a = pick(rng), b = pick(rng);
        if (a == b) continue;
        if (a > b) std::swap(a, b);
        if (!seen.insert({a, b}).second) continue;
        all.add(a, b, data.labels[a] == data.labels[b] ? 1.0 : 0.0);
      }
    }
    // Split 60/20/20 (default) after a shuffle; flips touch only the training pairs.
    std::vector<std::size_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const auto n_train = static_cast<std::size_t>(std::llround(split[0] * static_cast<double>(all.size())));
    const auto n_valid = static_cast<std::size_t>(std::llround(split[1] * static_cast<double>(all.size())));
    Pairs train, validation, test;
    for (std::size_t q = 0; q < order.size(); ++q) {
      const std::size_t p = order[q];
      Pairs& dst = q < n_train ? train : (q < n_train + n_valid ? validation : test);
      dst.add(all.i[p], all.j[p], all.t[p]);
    }
    std::vector<std::size_t> flip_order(train.size());
    std::iota(flip_order.begin(), flip_order.end(), 0);
    std::shuffle(flip_order.begin(), flip_order.end(), rng);
    const auto flips = static_cast<std::size_t>(std::llround(flip * static_cast<double>(train.size())));
    for (std::size_t q = 0; q < flips; ++q) train.t[flip_order[q]] = 1.0 - train.t[flip_order[q]];

    Model model;
    model.application = name();
    const auto edges = graph::knn_pairs(data.samples, k);
    model.quadratic = std::make_shared<SparseRegularizer>(graph::graph_laplacian(n, edges), true, "knn-laplacian");
    model.default_gamma = 1.0;
    model.default_lambda = 1.0;
    // The paper's rank: the largest r with r (r + 1) / 2 <= number of training pairs (so that a
    // rank-r factor can represent the SDP's solution, Barvinok-Pataki), capped at n.
    Index r = 1;
    while ((r + 1) * (r + 2) / 2 <= static_cast<Index>(train.size()) && r + 1 <= n) ++r;
    model.default_rank = r;
    model.facts = {{"n", static_cast<double>(n)},
                   {"training_pairs", static_cast<double>(train.size())},
                   {"flipped_pairs", static_cast<double>(flips)},
                   {"knn_edges", static_cast<double>(edges.size())}};
    Vector t = Eigen::Map<const Vector>(train.t.data(), static_cast<Index>(train.t.size()));
    model.terms = std::make_shared<EntryTerms>(n, std::move(train.i), std::move(train.j), std::move(t));
    auto rmse_of = [](Pairs set) -> HeldOutEvaluator::Rmse {
      if (set.size() == 0) return {};
      return [set = std::move(set)](const Matrix& X) { return pair_rmse(set, X); };
    };
    model.evaluator = std::make_shared<HeldOutEvaluator>(rmse_of(std::move(validation)), rmse_of(std::move(test)));
    return model;
  }
};

}  // namespace
}  // namespace sdprl::npkl

SDPRL_APPLICATION_PLUGIN("npkl", "1.0", sdprl::npkl::kDescription, sdprl::npkl::Npkl)
