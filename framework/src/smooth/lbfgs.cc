// L-BFGS (LBFGSpp, Debian liblbfgspp-dev) on F(X) for a loss that is differentiable at 0.
// Gradient: with r_tau = <X, Q_tau X> - t_tau and y_tau = phi'(|r_tau|) sign(r_tau),
//   grad F = 2 sum_tau y_tau sym(Q_tau) X + gamma A X + lambda X.
#include "smooth/lbfgs.h"

#include <LBFGS.h>

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

namespace sdprl::smooth {
namespace {

// The per-iteration hook LBFGSpp 0.1 lacks: its solver calls LineSearch<Scalar>::LineSearch once
// per iteration and holds the accepted point in x and fx on return, so Nocedal-Wright's search
// followed by a report gives trace.csv one row per iteration (a row per improving evaluation gave
// 94 rows for 82 iterations: the line searches' trial points improve too). The report goes
// through a thread-local pointer, as the search is a static function; one solve per thread.
// The report returns true to stop the run: the search then zeroes the gradient, which ends LBFGSpp
// at its next test, before another iteration.
using Report = std::function<bool(double, const Eigen::VectorXd&)>;
thread_local const Report* current_report = nullptr;

template <typename Scalar>
class ReportingLineSearch {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  template <typename Foo>
  static void LineSearch(Foo& f, Scalar& fx, Vector& x, Vector& grad, Scalar& step, const Vector& drt,
                         const Vector& xp, const LBFGSpp::LBFGSParam<Scalar>& param) {
    LBFGSpp::LineSearchNocedalWright<Scalar>::LineSearch(f, fx, x, grad, step, drt, xp, param);
    if (current_report && (*current_report)(fx, x)) grad.setZero();
  }
};

}  // namespace

Summary solve_lbfgs(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                    const SolverOptions& options, Matrix& X, const IterationCallback& callback) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const ConstraintSet& terms = *model.terms;
  const Index n = X.rows(), r = X.cols();
  Summary s;
  s.solver = SolverType::kLbfgs;
  s.n = n;
  s.rank = r;
  s.terms = terms.size();
  s.weights = weights;

  Vector values, phi, dphi, y;
  Matrix Xm(n, r), grad, AX;
  long evaluations = 0;
  bool stop = false;
  // Row 0 is the start, row k the point L-BFGS's k-th iteration accepted: the rows after row 0
  // count as summary.json's mm_iterations does.
  auto add_row = [&](double fx, const Matrix& at) {
    TraceRow row;
    row.mm_iteration = static_cast<int>(s.trace.size());
    row.objective = fx;
    const double before = s.trace.empty() ? fx : s.trace.back().objective;
    row.relative_change = s.trace.empty() ? 0.0 : std::abs(before - fx) / std::max(std::abs(before), 1e-300);
    row.time = std::chrono::duration<double>(Clock::now() - t0).count();
    s.trace.push_back(row);
    if (options.verbose && (row.mm_iteration <= 1 || row.mm_iteration % options.print_every == 0))
      std::fprintf(stderr, "%5d  %11.6e  %10.3e  %5s  %10s  %9s  %7.2fs\n", row.mm_iteration, fx,
                   row.relative_change, "-", "-", "-", row.time);
    if (row.mm_iteration > 0 && callback && !callback(row, at)) stop = true;
  };
  double best = std::numeric_limits<double>::infinity();
  Matrix best_X = X;
  auto f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) -> double {
    Xm = Eigen::Map<const Matrix>(x.data(), n, r);
    terms.evaluate(Xm, values);
    const Vector res = values - terms.targets();
    loss.evaluate(res.cwiseAbs(), phi, dphi);
    y = dphi.cwiseProduct(res.cwiseSign());
    terms.apply_adjoint_sym(y, Xm, grad);
    grad *= 2.0;
    double fx = phi.sum() + 0.5 * weights.lambda * Xm.squaredNorm();
    grad.noalias() += weights.lambda * Xm;
    if (model.quadratic && weights.gamma != 0.0) {
      model.quadratic->apply(Xm, AX);
      fx += 0.5 * weights.gamma * AX.cwiseProduct(Xm).sum();
      grad.noalias() += weights.gamma * AX;
    }
    g = Eigen::Map<const Eigen::VectorXd>(grad.data(), n * r);
    ++evaluations;
    if (std::isfinite(fx) && fx < best) {
      // The best point seen, kept when a line search fails.
      best = fx;
      best_X = Xm;
    }
    if (s.trace.empty()) add_row(fx, Xm);  // row 0: the start (summary.json's objective.initial)
    // On every evaluation, not only on an improvement: with a wrong gradient none comes, and SIGTERM
    // went unheard until max_mm_iterations (82 s).
    if (options.interrupt && options.interrupt->load()) stop = true;
    // An interrupt cannot stop LBFGSpp from inside; a zero gradient ends it at the next test.
    if (stop) g.setZero();
    return fx;
  };

  LBFGSpp::LBFGSParam<double> param;
  param.m = options.lbfgs_memory;
  param.epsilon = 1e-10;
  param.epsilon_rel = 1e-8;
  param.past = options.consecutive;
  param.delta = options.relative_tolerance;
  param.max_iterations = options.max_mm_iterations;
  // Strong Wolfe conditions (Nocedal-Wright line search): LBFGSpp 0.1's default Armijo search
  // accepts steps with s^T y <= 0 on a nonconvex F, after which the next direction points uphill
  // and the solve aborts at the start (seen on CMVU).
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  param.max_linesearch = 100;
  LBFGSpp::LBFGSSolver<double, ReportingLineSearch> solver(param);
  Matrix accepted;
  // A point that is not finite gets no row: the run stops there with the best finite point (a
  // search that ends on NaN returns its last trial, and LBFGSpp went on with NaN rows).
  bool diverged = false;
  const Report report = [&](double fx, const Eigen::VectorXd& x) {
    if (!std::isfinite(fx) || !x.allFinite()) {
      diverged = stop = true;
      return true;
    }
    accepted = Eigen::Map<const Matrix>(x.data(), n, r);
    add_row(fx, accepted);
    return stop;
  };
  struct ReportScope {  // restores the outer solve's report (a callback may solve again)
    explicit ReportScope(const Report* r) : outer(current_report) { current_report = r; }
    ~ReportScope() { current_report = outer; }
    const Report* outer;
  } scope(&report);
  Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(X.data(), n * r);
  double fx = 0.0;
  if (options.verbose)
    std::fprintf(stderr,
                 "-------------------------------------------------------------------------------\n"
                 "  sdprl: L-BFGS on the factored objective, n = %ld, rank = %ld, terms = %ld, loss = %s\n"
                 "-------------------------------------------------------------------------------\n"
                 " iter    objective   rel.change   admm        gap      eps_k      time\n",
                 static_cast<long>(n), static_cast<long>(r), static_cast<long>(s.terms), loss.name().c_str());
  s.status = SolverStatus::kConverged;
  try {
    const int iterations = solver.minimize(f, x, fx);
    if (iterations >= options.max_mm_iterations) s.status = SolverStatus::kIterationLimit;
    // The last accepted point (the last row), not a line search's lower trial point: X.mtx, the
    // final objective and the trace agree.
    if (!diverged) best_X = Eigen::Map<const Matrix>(x.data(), n, r);
  } catch (const std::exception& e) {
    // LBFGSpp ends with an exception when the line search cannot progress. At the attainable
    // accuracy (gradient tiny against F) that is convergence; otherwise it is a failure, reported
    // as such, with the best point seen kept.
    Eigen::VectorXd g(n * r);
    const double f_best = f(Eigen::Map<const Eigen::VectorXd>(best_X.data(), n * r), g);
    // The failed search's best trial point is the result: its row ends the trace.
    if (!s.trace.empty() && !(f_best >= s.trace.back().objective)) add_row(f_best, best_X);
    const double scale = std::max({1.0, std::abs(f_best), best_X.norm()});
    if (g.norm() > 1e-6 * scale) {
      s.status = SolverStatus::kNumericalError;
      s.message = std::string("L-BFGS line search failed (") + e.what() + "), gradient norm " + std::to_string(g.norm());
    } else {
      s.message = std::string("L-BFGS stopped at the attainable accuracy: ") + e.what();
    }
  }
  if (diverged) {
    // The best finite point seen is the result; its row ends the trace when it is no accepted one.
    if (best < s.trace.back().objective) add_row(best, best_X);
    s.status = SolverStatus::kNumericalError;
    s.message = "L-BFGS reached a non-finite objective or iterate; the factor is the best finite point seen";
  } else if (stop) {
    s.status = SolverStatus::kInterrupted;
  }
  if (!std::isfinite(best)) {
    s.status = SolverStatus::kNumericalError;
    s.message = "no finite objective value";
    return s;
  }
  X = best_X;
  s.mm_iterations = static_cast<int>(s.trace.size()) - 1;
  s.initial_objective = s.trace.front().objective;
  s.final_objective = s.trace.back().objective;
  s.admm_iterations = 0;
  s.solve_time = std::chrono::duration<double>(Clock::now() - t0).count();
  if (model.evaluator) s.metrics = model.evaluator->evaluate(X);
  if (options.verbose) std::fprintf(stderr, "%s (%ld function evaluations)\n", s.brief_report().c_str(), evaluations);
  return s;
}

}  // namespace sdprl::smooth
