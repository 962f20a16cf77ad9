// Robust maximum variance unfolding (MVU) as an sdprl application plugin, written against the
// installed package only (README "Write your own model"). MVU finds the most spread-out embedding
// Z = X X^T of points that keeps each point's distances to its k nearest neighbours; as an SDP-RL
// model (docs/method.md section 1):
//
//   min_X  sum_{(i,j) in kNN} phi(| ||x_i - x_j||^2 - d_ij |)    distance terms, t = squared distance
//        + phi(| ||1^T X||^2 - 0 |)                              rank-one term: Z centered, 1^T Z 1 = 0
//        + (gamma/2) <X, A X>,  A = -I                           -(gamma/2) tr Z: maximise the variance
//
// With the l1 loss this is an exact penalty of the MVU SDP when gamma is small enough (the
// multipliers of the constraints stay below phi'(0) = 1), and it shrugs off a few corrupted targets
// d_ij. outlier_fraction corrupts some on purpose (too short by default: the short-circuits MVU is
// known to be fragile to); the metrics compare the embedding with the clean distances.
//
// [model] keys:
//   data = FILE              "label x1 ... xd" lines, one point each ('#' comments); label ignored
//   neighbours = K           k of the kNN graph (default 6)
//   outlier_fraction = F     fraction of neighbour targets multiplied by outlier_factor (default 0)
//   outlier_factor = C       (default 0.1)
//   seed = S                 which targets are corrupted (default solver.seed)
//   rank = R                 default rank of X (default 3)
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Eigenvalues>
#include <sdprl/graph/knn_graph.h>
#include <sdprl/io/libsvm.h>
#include <sdprl/plugin.h>
#include <sdprl/regularizers/scaled_identity_regularizer.h>
#include <sdprl/terms/composite_terms.h>
#include <sdprl/terms/distance_terms.h>
#include <sdprl/terms/rank_one_terms.h>

namespace {

using sdprl::Index;
using sdprl::Matrix;
using sdprl::Metric;
using sdprl::NumberRule;
using sdprl::Vector;

struct Pairs {
  std::vector<std::int32_t> i, j;
  Vector d;  // squared distances ||p_i - p_j||^2 of the input points
};

// Variance of the rows, sum_i ||x_i - mean||^2 = tr(H Z H), and the share of its top direction.
double variance(const Matrix& X) { return (X.rowwise() - X.colwise().mean()).squaredNorm(); }
double top_share(const Matrix& X) {
  const Matrix C = X.rowwise() - X.colwise().mean();
  const Eigen::MatrixXd S = C.transpose() * C;
  const Vector ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S).eigenvalues();
  return ev.sum() > 0.0 ? ev.maxCoeff() / ev.sum() : 0.0;
}

// Metrics of an embedding X against the CLEAN neighbour distances and the input's spread.
class MvuEvaluator final : public sdprl::Evaluator {
 public:
  MvuEvaluator(Pairs clean, double input_variance) : clean_(std::move(clean)), input_variance_(input_variance) {}

  std::vector<Metric> evaluate(const Matrix& X) const override {
    double err = 0.0;
    for (Index k = 0; k < clean_.d.size(); ++k) {
      const double e = (X.row(clean_.i[k]) - X.row(clean_.j[k])).squaredNorm() - clean_.d[k];
      err += e * e;
    }
    const double trace = X.squaredNorm();  // tr Z
    return {{"distance_relative_rmse", std::sqrt(err / clean_.d.squaredNorm())},
            {"centering", trace > 0.0 ? X.colwise().sum().squaredNorm() / trace : 0.0},  // 1^T Z 1 / tr Z
            {"variance_ratio", variance(X) / input_variance_},
            {"top_eigenvalue_share", top_share(X)}};
  }

 private:
  Pairs clean_;
  double input_variance_;
};

class RobustMvu final : public sdprl::Application {
 public:
  std::string name() const override { return "robust-mvu"; }

  sdprl::Model build(const sdprl::ConfigTable& table, const sdprl::BuildContext& context) const override {
    // Read every key first: a bad value is reported (file:line:column) before any work is done.
    const auto file = table.file("data");
    if (!file) table.fail("", "missing required key 'data = \"FILE\"' (the points, one per line)");
    const Index k = table.integer("neighbours", 6, NumberRule::at_least(1));
    const double fraction = table.number("outlier_fraction", 0.0, NumberRule::closed(0.0, 1.0));
    const double factor = table.number("outlier_factor", 0.1, NumberRule::positive());
    const auto seed = table.integer("seed", static_cast<std::int64_t>(context.seed), NumberRule::non_negative());
    const Index rank = table.integer("rank", 3, NumberRule::at_least(1));

    // The framework's reader gives located errors; the label column is not needed here.
    const Matrix points = sdprl::io::read_dense_labeled(*file).samples;
    const Index n = points.rows();
    if (k > n - 1)
      table.fail("neighbours", "neighbours = " + std::to_string(k) + " needs at least " + std::to_string(k + 1) +
                                   " points, " + file->string() + " has " + std::to_string(n));

    // Neighbour pairs (i < j, each once) of the symmetrised kNN graph and their squared distances.
    Pairs clean;
    for (const auto& [i, j] : sdprl::graph::knn_pairs(points, k)) {
      clean.i.push_back(static_cast<std::int32_t>(i));
      clean.j.push_back(static_cast<std::int32_t>(j));
    }
    const Index m = static_cast<Index>(clean.i.size());
    clean.d.resize(m);
    for (Index p = 0; p < m; ++p) clean.d[p] = (points.row(clean.i[p]) - points.row(clean.j[p])).squaredNorm();

    // Targets the solver sees: a fraction of them corrupted (a robust loss should ignore those).
    Vector targets = clean.d;
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    std::bernoulli_distribution corrupt(fraction);
    Index corrupted = 0;
    for (Index p = 0; p < m; ++p)
      if (corrupt(rng)) targets[p] *= factor, ++corrupted;

    // The model: two term families mixed in one ConstraintSet, and A = -I.
    auto distances = std::make_shared<sdprl::DistanceTerms>(n, clean.i, clean.j, targets);
    auto centering = std::make_shared<sdprl::RankOneTerms>(sdprl::RankOneTerms::centering(n));
    sdprl::Model model;
    model.application = name();
    model.terms = std::make_shared<sdprl::CompositeTerms>(
        std::vector<std::shared_ptr<const sdprl::ConstraintSet>>{distances, centering});
    model.quadratic = std::make_shared<sdprl::ScaledIdentityRegularizer>(n, -1.0, "minus-identity");
    model.default_gamma = 0.01;  // see the note on exact penalties above; the TOML may override it
    model.default_lambda = 0.0;  // lambda > gamma would shrink the embedding instead
    model.default_rank = rank;
    const double input_variance = variance(points);
    model.facts = {{"n", static_cast<double>(n)},
                   {"neighbour_pairs", static_cast<double>(m)},
                   {"corrupted_pairs", static_cast<double>(corrupted)},
                   {"input_variance", input_variance},
                   {"input_top_eigenvalue_share", top_share(points)}};
    model.evaluator = std::make_shared<MvuEvaluator>(std::move(clean), input_variance);
    return model;
  }
};

}  // namespace

SDPRL_APPLICATION_PLUGIN("robust-mvu", "1.0",
                         "robust maximum variance unfolding (kNN distance terms + centering term, A = -I)",
                         RobustMvu)
