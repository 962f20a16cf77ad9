// Starting points (docs/method.md section 2: X = 0 is stationary, a small Gaussian start stalls the
// relative-change test, so the spectral start is the default).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "linalg/symmetric_eigen.h"
#include "mm/solve_checks.h"
#include "sdprl/error.h"
#include "sdprl/solver.h"

namespace sdprl {
namespace {

// alpha minimising sum_tau |alpha v_tau - t_tau|: the weighted median of t/v with weights |v|.
// An l1 fit, so the outliers the robust losses are there for do not bias the scale.
double robust_scale(const Vector& v, const Vector& t) {
  std::vector<std::pair<double, double>> ratio;
  ratio.reserve(v.size());
  double total = 0.0;
  for (Index k = 0; k < v.size(); ++k) {
    if (std::abs(v[k]) > 0.0 && std::isfinite(t[k])) {
      ratio.emplace_back(t[k] / v[k], std::abs(v[k]));
      total += std::abs(v[k]);
    }
  }
  if (ratio.empty()) return 1.0;
  // The smallest ratio whose cumulative weight, in increasing order, reaches half the total: by
  // quickselect, O(m) expected, where sorting all m pairs took a second at m = 10^5. Invariant:
  // every pair left of lo is <= every pair in [lo, hi), `below` is their weight, the answer is in [lo, hi).
  const double half = 0.5 * total;
  auto lo = ratio.begin(), hi = ratio.end();
  double below = 0.0;
  while (hi - lo > 64) {
    const auto mid = lo + (hi - lo) / 2;
    std::nth_element(lo, mid, hi);  // [lo, mid] <= *mid <= (mid, hi)
    double through_mid = below;
    for (auto it = lo; it <= mid; ++it) through_mid += it->second;
    if (through_mid >= half) {
      hi = mid + 1;
    } else {
      below = through_mid;
      lo = mid + 1;
    }
  }
  std::sort(lo, hi);
  for (auto it = lo; it != hi; ++it) {
    below += it->second;
    if (below >= half) return it->first;
  }
  return (hi - 1)->first;  // half not reached by rounding: the largest candidate
}

void gaussian(Index n, Index r, double scale, std::uint64_t seed, Matrix& X) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, scale);
  X.resize(n, r);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < r; ++j) X(i, j) = normal(rng);
}

// Top-r (largest algebraic) eigenpairs of S = sum_tau t_tau sym(Q_tau), through the constraint
// set (for entry terms, the symmetrised observed matrix).
bool top_eigenpairs(const ConstraintSet& terms, Index r, Eigen::VectorXd& values,
                    Eigen::MatrixXd& vectors) {
  const linalg::SymmetricOperator S = [&terms](const Matrix& x, Matrix& y) {
    terms.apply_adjoint_sym(terms.targets(), x, y);
  };
  return linalg::extreme_eigenpairs(S, terms.dimension(), r, linalg::Extreme::kLargest, values, vectors);
}

// The rows of X at which MM is stuck: zero, used by some term, and with every term's gradient
// there zero (each is a multiple of row i of sym(Q_tau) X, docs/method.md section 2), so that no
// surrogate ever moves them, e.g. a row that only a diagonal term touches. With random y > 0 and a
// Gaussian g, row i of sum_tau y_tau sym(Q_tau) g is nonzero with probability 1 exactly when row i
// of some sym(Q_tau) is, and row i of sum_tau y_tau sym(Q_tau) X is zero (for every such y) when
// no term's gradient moves it.
std::vector<bool> stuck_rows(const ConstraintSet& terms, const Matrix& X) {
  std::mt19937_64 rng(0x5bd1e995u);
  std::uniform_real_distribution<double> positive(0.5, 1.5);
  std::normal_distribution<double> normal(0.0, 1.0);
  Vector y(terms.size());
  for (Index t = 0; t < y.size(); ++t) y[t] = positive(rng);
  Matrix g(terms.dimension(), 1), used, moved;
  for (Index i = 0; i < g.rows(); ++i) g(i, 0) = normal(rng);
  terms.apply_adjoint_sym(y, g, used);
  terms.apply_adjoint_sym(y, X, moved);
  std::vector<bool> stuck(static_cast<std::size_t>(terms.dimension()), false);
  for (Index i = 0; i < X.rows(); ++i)
    stuck[static_cast<std::size_t>(i)] =
        used(i, 0) != 0.0 && X.row(i).squaredNorm() == 0.0 && moved.row(i).squaredNorm() == 0.0;
  return stuck;
}

}  // namespace

// docs/method.md section 2: every term's gradient is a multiple of sym(Q) X, so a zero column
// stays zero for ever, and so does a zero row that only terms on the diagonal touch; X = 0 is the
// extreme case, "converged" at once.
std::string starting_factor_problem(const Model& model, const Matrix& X) {
  for (Index j = 0; j < X.cols(); ++j)
    if (X.col(j).squaredNorm() == 0.0)
      return "column " + std::to_string(j + 1) + " of the starting factor is zero" +
             (X.squaredNorm() == 0.0 ? " (the whole factor is zero)" : "") +
             ": MM never moves a zero column of X (F is stationary along it); give a start without zero "
             "columns, or use init = \"spectral\"";
  const std::vector<bool> stuck = stuck_rows(*model.terms, X);
  for (Index i = 0; i < X.rows() && i < static_cast<Index>(stuck.size()); ++i)
    if (stuck[static_cast<std::size_t>(i)])
      return "row " + std::to_string(i + 1) + " of the starting factor is zero, and no term's gradient moves it "
             "(as for a row that only a term on the diagonal uses): MM would leave it at 0; give it a nonzero "
             "value, or use init = \"spectral\"";
  return {};
}

void initialize(const Model& model, const SolverOptions& options, Index rank, Matrix& X) {
  const ConstraintSet& terms = *model.terms;
  const Index n = terms.dimension();
  switch (options.init) {
    case InitKind::kGiven:
      if (X.rows() != n || X.cols() != rank)
        throw Error("solver.init", "the given starting factor is " + std::to_string(X.rows()) + " x " +
                                       std::to_string(X.cols()) + ", expected " + std::to_string(n) +
                                       " x " + std::to_string(rank));
      if (!X.allFinite()) throw Error("solver.init", "the given starting factor has NaN/Inf entries");
      if (const std::string problem = starting_factor_problem(model, X); !problem.empty())
        throw Error("solver.init_file", problem);
      return;
    case InitKind::kGaussian:
      gaussian(n, rank, options.init_scale, options.seed, X);
      return;
    case InitKind::kModel:
      if (const std::string problem = mm::model_start_problem(model); !problem.empty()) throw Error("solver.init", problem);
      model.start(rank, X);
      if (X.rows() != n || X.cols() != rank || !X.allFinite())
        throw Error("solver.init", "the application '" + model.application + "' gave a starting factor of " +
                                       std::to_string(X.rows()) + " x " + std::to_string(X.cols()) +
                                       (X.allFinite() ? "" : " with NaN/Inf entries") + ", expected " +
                                       std::to_string(n) + " x " + std::to_string(rank));
      return;
    case InitKind::kSpectral: {
      Eigen::VectorXd values;
      Eigen::MatrixXd vectors;
      if (!top_eigenpairs(terms, rank, values, vectors) || !(values.maxCoeff() > 0.0)) {
        // No positive spectrum to start from (e.g. all targets <= 0): fall back to Gaussian.
        gaussian(n, rank, options.init_scale, options.seed, X);
        return;
      }
      X = vectors * values.cwiseMax(0.0).cwiseSqrt().asDiagonal();
      // A column with a zero eigenvalue would leave that direction of X at 0, a stationary
      // direction; give it a small random component.
      Matrix noise;
      gaussian(n, rank, 1e-3 * std::sqrt(values.maxCoeff() / n), options.seed, noise);
      for (Index j = 0; j < rank; ++j)
        if (values[j] <= 0.0) X.col(j) = noise.col(j);
      // Under a constraint the solver starts from the projection of X onto K, which is not
      // invariant under the sign of an eigenvector (Z = X X^T is). The eigensolver's signs are
      // arbitrary, so pick each column's sign to keep the most of it in the projection: for X >= 0
      // an eigenvector of mostly negative entries would otherwise lose nearly all of its mass, and
      // the SNMF runs from such starts ended at poor stationary points (test RMSE 0.86-0.92
      // against 0.12-0.13, m = 1000, 3 of 5 seeds).
      if (model.constraint) {
        for (Index j = 0; j < rank; ++j) {
          Matrix plus = X.col(j), minus = -X.col(j);
          model.constraint->project(plus);
          model.constraint->project(minus);
          if (minus.squaredNorm() > plus.squaredNorm()) X.col(j) *= -1.0;
        }
      }
      // A row that the eigenvectors leave at exactly 0 and that no term's gradient moves (an SDPA
      // LP variable, used by a diagonal term alone) would stay there; it starts from the noise too.
      const std::vector<bool> stuck = stuck_rows(terms, X);
      for (Index i = 0; i < n; ++i)
        if (stuck[static_cast<std::size_t>(i)])
          X.row(i) = model.constraint ? Vector(noise.row(i).cwiseAbs().transpose()) : Vector(noise.row(i).transpose());
      Vector v;
      terms.evaluate(X, v);
      const double alpha = robust_scale(v, terms.targets());
      if (alpha > 0.0 && std::isfinite(alpha)) X *= std::sqrt(alpha);
      return;
    }
  }
}

}  // namespace sdprl
