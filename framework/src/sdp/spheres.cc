// SDPs with one fixed diagonal entry per row, solved on spheres (sdp/spheres.h; docs/method.md
// section 9.1).
#include "sdp/spheres.h"

#include <Eigen/Eigenvalues>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

#include "mm/certificate.h"
#include "mm/loop_support.h"
#include "sdprl/error.h"
#include "sdprl/regularizers/symmetric_sparse_regularizer.h"
#include "sdprl/terms/sparse_matrix_terms.h"
#include "sdp/solve_start.h"

namespace sdprl::sdp {
namespace {

using mm::Clock;
using mm::fmt;
using mm::seconds_since;

// The problem on the spheres: ||x_i||^2 = s_i, objective <A, X X^T> (A may be absent: then every
// feasible X is optimal).
struct Spheres {
  Vector radius2;                          // s_i
  std::vector<Index> term;                 // the term that fixes row i
  const Eigen::SparseMatrix<double>* A = nullptr;
};

std::string read_spheres(const Model& model, const Loss& loss, Spheres* out) {
  if (!model.infeasibility) return "the model's terms are not constraints (only sdpa models have them)";
  if (!mm::linear_loss(loss)) return "the loss '" + loss.name() + "' is not linear (l1): its terms are a fit, not constraints";
  if (model.constraint) return "the model constrains X to " + model.constraint->name();
  const auto* terms = dynamic_cast<const SparseMatrixTerms*>(model.terms.get());
  if (!terms) return "its terms are not sparse matrices";
  const Index n = terms->dimension(), m = terms->size();
  if (m != n) return "it has " + std::to_string(m) + " constraints for " + std::to_string(n) + " rows, not one per row";
  Spheres s;
  s.radius2 = Vector::Constant(n, -1.0);
  s.term.assign(static_cast<std::size_t>(n), -1);
  const Vector& t = terms->targets();
  for (Index k = 0; k < m; ++k) {
    const Index e = terms->entry_begin(k);
    const auto u = static_cast<std::size_t>(e);
    if (terms->entry_begin(k + 1) != e + 1 || terms->upper_rows()[u] != terms->upper_cols()[u])
      return "constraint " + std::to_string(k + 1) + " is not a single diagonal entry";
    const Index i = terms->upper_rows()[u];
    const double a = terms->upper_values()[u];
    if (s.term[static_cast<std::size_t>(i)] >= 0)
      return "row " + std::to_string(i + 1) + " is fixed by two constraints";
    if (!(t[k] / a > 0.0))
      return "constraint " + std::to_string(k + 1) + " fixes Z_" + std::to_string(i + 1) + std::to_string(i + 1) +
             " at " + fmt("%g", t[k] / a) + ", not a positive value";
    s.radius2[i] = t[k] / a;
    s.term[static_cast<std::size_t>(i)] = k;
  }
  if (model.quadratic) {
    const auto* a = dynamic_cast<const SymmetricSparseRegularizer*>(model.quadratic.get());
    if (!a) return "its objective is not an explicit sparse matrix";
    s.A = &a->matrix();
  }
  if (out) *out = std::move(s);
  return "";
}

// A's off-diagonal entries row by row (A is symmetric: column i is row i), and each row's radius
// sqrt(s_i): what a sweep reads, laid out once.
struct Rows {
  std::vector<Index> start, column;
  std::vector<double> value;
  Vector radius;
  explicit Rows(const Spheres& s) : radius(s.radius2.cwiseSqrt()) {
    const Eigen::SparseMatrix<double>& A = *s.A;
    start.push_back(0);
    for (Index i = 0; i < A.outerSize(); ++i) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(A, i); it; ++it)
        if (it.row() != i && it.value() != 0.0) {
          column.push_back(it.row());
          value.push_back(it.value());
        }
      start.push_back(static_cast<Index>(column.size()));
    }
  }
};

// One pass over the rows (X is row-major): each row moved to its sphere's minimiser of <A, X X^T>
// given the others, x_i = -sqrt(s_i) g / |g| with g = sum_j a_ij x_j. Returns the decrease of
// <A, X X^T>; each row's is 2 (<x_i, g> + sqrt(s_i) |g|). Raw loops over the rank: at max-cut's
// ranks (about 20) and a few neighbours per row, Eigen's per-expression set-up is a large share of
// the work (mcp250-1's 929 sweeps: 135M instructions with Eigen's row expressions, 98M so).
double sweep(const Rows& a, Matrix& X, double* g) {
  const Index r = X.cols();
  double* x = X.data();
  double decrease = 0.0;
  for (Index i = 0; i < X.rows(); ++i) {
    std::fill(g, g + r, 0.0);
    for (Index e = a.start[i]; e < a.start[i + 1]; ++e) {
      const double v = a.value[e];
      const double* xj = x + a.column[e] * r;
      for (Index c = 0; c < r; ++c) g[c] += v * xj[c];
    }
    double* xi = x + i * r;
    double norm2 = 0.0, dot = 0.0;
    for (Index c = 0; c < r; ++c) {
      norm2 += g[c] * g[c];
      dot += xi[c] * g[c];
    }
    if (!(norm2 > 0.0)) continue;
    const double norm = std::sqrt(norm2), radius = a.radius[i];
    decrease += 2.0 * (dot + radius * norm);
    const double step = -radius / norm;
    for (Index c = 0; c < r; ++c) xi[c] = step * g[c];
  }
  return decrease;
}

// <A, X X^T> and, per row, <(A X)_i, x_i>.
double quadratic_form(const Spheres& s, const Matrix& X, Vector& per_row) {
  per_row.setZero(X.rows());
  if (!s.A) return 0.0;
  const Matrix AX = (*s.A) * X;
  per_row = AX.cwiseProduct(X).rowwise().sum();
  return per_row.sum();
}

// Rows scaled onto their spheres; a zero row gets the unit vector of its index modulo r.
void onto_spheres(const Spheres& s, Matrix& X) {
  for (Index i = 0; i < X.rows(); ++i) {
    const double norm = X.row(i).norm();
    if (norm > 0.0) {
      X.row(i) *= std::sqrt(s.radius2[i]) / norm;
    } else {
      X.row(i).setZero();
      X(i, i % X.cols()) = std::sqrt(s.radius2[i]);
    }
  }
}

}  // namespace

std::string spheres_problem(const Model& model, const Loss& loss, const SolverOptions& options) {
  if (options.max_rank > 0) return "solver.max_rank is set (the staircase is the MM solver's)";
  if (options.l1_warm_start) return "solver.l1_warm_start is set (a start for the MM solver)";
  return read_spheres(model, loss, nullptr);
}

Summary solve_on_spheres(const Model& model, const Loss& loss, RegularizationWeights& weights,
                         const SolverOptions& options, Matrix& X, const IterationCallback& callback) {
  const auto t0 = Clock::now();
  Spheres s;
  if (const std::string problem = read_spheres(model, loss, &s); !problem.empty())
    throw Error("solver.type", "\"spheres\" does not apply to this model: " + problem);
  Summary summary = begin_solve(model, options, SolverType::kSpheres);
  const Index n = summary.n, rank = summary.rank;
  // The spectral start of sum t_i sym(Q_i) = diag(a_i t_i) is no start at all (its top eigenvectors
  // are coordinate vectors): the spheres start from the Gaussian one instead.
  SolverOptions start = options;
  if (start.init == InitKind::kSpectral) start.init = InitKind::kGaussian;
  initialize(model, start, rank, X);
  onto_spheres(s, X);
  summary.init_time = seconds_since(t0);

  const auto t1 = Clock::now();
  const Vector& t = model.terms->targets();
  const double slope = loss.derivative(0.0);  // the box of the l1 penalty's multipliers, |y| <= phi'(0)
  const double ridge = 0.5 * weights.lambda * s.radius2.sum();  // (lambda/2) ||X||^2, fixed on the spheres
  Vector per_row;
  double f = quadratic_form(s, X, per_row);
  const double f0 = f;
  const double gamma_from = weights.gamma > 0.0 ? weights.gamma : 2.0;
  // A sweep that lowers <A, Z> by at most this share of its size ends a round, which the
  // certificate then judges: its lambda_min is first-order in the distance to the optimum, the
  // objective second-order, so a dual infeasibility of 1e-6 needs about 1e-12 here; a round that
  // ends uncertified tightens it a hundredfold (to kFinestTolerance) or, at a saddle (lambda_min
  // far below 0), first leaves along S's eigenvector.
  constexpr double kFirstTolerance = 1e-12, kFinestTolerance = 1e-16;
  constexpr int kMaxEscapes = 5;
  double tolerance = kFirstTolerance;
  int k = 0, escapes = 0;
  const int cap = options.max_mm_iterations;
  std::vector<double> g(static_cast<std::size_t>(rank));
  const std::optional<Rows> rows = s.A ? std::optional<Rows>(Rows(s)) : std::nullopt;
  std::vector<double> trace_f, trace_change, trace_time;
  bool interrupted = false, certified = false, over_time = false;
  Certificate certificate;
  double dual_infeasibility = std::numeric_limits<double>::infinity();
  if (options.verbose)
    std::fprintf(stderr,
                 "-------------------------------------------------------------------------------\n"
                 "  sdprl: an SDP with one fixed diagonal entry per row, its rows on spheres\n"
                 "  (block coordinate descent, no penalty; docs/method.md section 9.1)\n"
                 "  n = %ld, rank = %ld, constraints = %ld\n"
                 "-------------------------------------------------------------------------------\n"
                 "sweep        <A, Z>     decrease      time\n",
                 static_cast<long>(n), static_cast<long>(rank), static_cast<long>(summary.terms));
  for (;;) {
    while (s.A && k < cap) {
      const double decrease = sweep(*rows, X, g.data());
      f -= decrease;
      ++k;
      const double size = std::max(std::abs(f), 1e-300);
      trace_f.push_back(f);
      trace_change.push_back(decrease / size);
      trace_time.push_back(seconds_since(t1));
      if (options.verbose && (k == 1 || k % options.print_every == 0))
        std::fprintf(stderr, "%5d  %.9e  %.3e  %7.3fs\n", k, f, decrease / size, trace_time.back());
      if (callback) {
        TraceRow row;
        row.mm_iteration = k;
        row.objective = 0.5 * gamma_from * f + ridge;
        row.relative_change = decrease / size;
        row.time = trace_time.back();
        if (!callback(row, X)) interrupted = true;
      }
      if (options.interrupt && options.interrupt->load()) interrupted = true;
      over_time = options.time_limit > 0.0 && seconds_since(t0) >= options.time_limit;
      if (interrupted || over_time || decrease <= tolerance * size) break;
    }
    // The multipliers of S(y) X = 0, row by row: y_i a_i x_i = -((gamma/2) (A X)_i + (lambda/2) x_i),
    // so y_i = -((gamma/2) <(A X)_i, x_i> + (lambda/2) s_i) / t_i. gamma: the largest of the path
    // (gamma_from / 10^j) with |y| <= phi'(0), where the l1 penalty is exact at these y.
    f = quadratic_form(s, X, per_row);  // afresh: the sweeps' running sum drifts by rounding
    Vector y_a(n), y_ridge(n);
    for (Index i = 0; i < n; ++i) {
      const Index term = s.term[static_cast<std::size_t>(i)];
      y_a[term] = -0.5 * per_row[i] / t[term];
      y_ridge[term] = -0.5 * weights.lambda * s.radius2[i] / t[term];
    }
    double gamma = gamma_from;
    for (int j = 0; j < 12 && (gamma * y_a + y_ridge).cwiseAbs().maxCoeff() > slope; ++j) gamma /= 10.0;
    weights.gamma = gamma;
    const Vector multipliers = (gamma * y_a + y_ridge) / slope;
    certificate = mm::certify(model, loss, weights, X, multipliers);
    // Judged as `sdprl run` reports it (summary.json `constrained`).
    const mm::ConstrainedAnswer answer = mm::constrained_answer(model, weights, X, model.infeasibility(X), certificate,
                                                                options.feasibility_tolerance);
    dual_infeasibility = certificate.computed ? answer.dual_infeasibility : std::numeric_limits<double>::infinity();
    certified = answer.optimal;
    if (certified || interrupted || over_time || k >= cap || !s.A) break;
    mm::Descent descent;  // S's eigenvector, only where a saddle is to be left
    if (dual_infeasibility > 1e-3 && escapes < kMaxEscapes) mm::certify(model, loss, weights, X, multipliers, 1, &descent);
    if (options.verbose)
      std::fprintf(stderr, "%5d  not certified: lambda_min(S) = %.3e (dual infeasibility %.1e)%s\n", k,
                   certificate.lambda_min, dual_infeasibility,
                   descent.values.size() > 0 ? ": leaving along its eigenvector" : "; sweeping on, more tightly");
    if (descent.values.size() > 0) {
      // A saddle (or a rank too low): Z + eps v v^T lowers <S, Z>; put v on X's least used column
      // direction and go back onto the spheres.
      ++escapes;
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> columns(X.transpose() * X);
      const Eigen::VectorXd u = columns.eigenvectors().col(0);
      X += (0.5 * std::sqrt(s.radius2.mean() * static_cast<double>(n))) * descent.vectors.col(0) * u.transpose();
      onto_spheres(s, X);
      f = quadratic_form(s, X, per_row);
    } else if (tolerance > kFinestTolerance) {
      tolerance *= 1e-2;
    } else {
      break;
    }
  }
  summary.solve_time = seconds_since(t1);
  summary.weights = weights;
  summary.mm_iterations = k;
  summary.initial_objective = 0.5 * weights.gamma * f0 + ridge;
  summary.final_objective = objective(model, loss, weights, X);
  for (std::size_t h = 0; h < trace_f.size(); ++h) {
    TraceRow row;
    row.mm_iteration = static_cast<int>(h + 1);
    row.objective = 0.5 * weights.gamma * trace_f[h] + ridge;
    row.relative_change = trace_change[h];
    row.time = trace_time[h];
    summary.trace.push_back(row);
  }
  certificate.optimal = certificate.computed && certificate.relative_gap <= options.stationarity_tolerance;
  summary.certificate = certificate;
  summary.status = interrupted ? SolverStatus::kInterrupted
                   : certified || !s.A ? SolverStatus::kConverged
                   : over_time         ? SolverStatus::kTimeLimit
                   : k >= cap ? SolverStatus::kIterationLimit
                              : SolverStatus::kConverged;
  if (!certified && summary.status == SolverStatus::kConverged)
    summary.message = "the sweeps stopped moving before the certificate closed (dual infeasibility " +
                      fmt("%.1e", dual_infeasibility) + ")";
  if (model.evaluator) summary.metrics = model.evaluator->evaluate(X);
  return summary;
}

}  // namespace sdprl::sdp
