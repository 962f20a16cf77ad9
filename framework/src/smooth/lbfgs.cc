// L-BFGS (LBFGSpp, Debian liblbfgspp-dev) on F(X) for a loss that is differentiable at 0.
// Gradient: with r_tau = <X, Q_tau X> - t_tau and y_tau = phi'(|r_tau|) sign(r_tau),
//   grad F = 2 sum_tau y_tau sym(Q_tau) X + gamma A X + lambda X.
#include "smooth/lbfgs.h"

#include <LBFGS.h>

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

namespace sdprl::smooth {

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
  double best = std::numeric_limits<double>::infinity();
  Matrix best_X = X;
  bool stop = false;
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
      // One trace row per improvement (LBFGSpp has no per-iteration hook).
      // Row 0 is the start (its objective is summary.json's objective.initial): the rows after it
      // count as the iterations do (trace.csv had one row more than mm_iterations).
      TraceRow row;
      row.mm_iteration = static_cast<int>(s.trace.size());
      row.objective = fx;
      row.relative_change = std::isfinite(best) ? std::abs(best - fx) / std::max(std::abs(best), 1e-300) : 0.0;
      row.time = std::chrono::duration<double>(Clock::now() - t0).count();
      best = fx;
      best_X = Xm;
      s.trace.push_back(row);
      if (options.verbose && (row.mm_iteration <= 1 || row.mm_iteration % options.print_every == 0))
        std::fprintf(stderr, "%5d  %11.6e  %10.3e  %5s  %10s  %9s  %7.2fs\n", row.mm_iteration, fx,
                     row.relative_change, "-", "-", "-", row.time);
      if (callback && !callback(row, best_X)) stop = true;
    }
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
  LBFGSpp::LBFGSSolver<double, LBFGSpp::LineSearchNocedalWright> solver(param);
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
    s.mm_iterations = iterations;
    if (iterations >= options.max_mm_iterations) s.status = SolverStatus::kIterationLimit;
  } catch (const std::exception& e) {
    // LBFGSpp ends with an exception when the line search cannot progress. At the attainable
    // accuracy (gradient tiny against F) that is convergence; otherwise it is a failure, reported
    // as such, with the best point seen kept.
    s.mm_iterations = static_cast<int>(s.trace.size());
    Eigen::VectorXd g(n * r);
    const double f_best = f(Eigen::Map<const Eigen::VectorXd>(best_X.data(), n * r), g);
    const double scale = std::max({1.0, std::abs(f_best), best_X.norm()});
    if (g.norm() > 1e-6 * scale) {
      s.status = SolverStatus::kNumericalError;
      s.message = std::string("L-BFGS line search failed (") + e.what() + "), gradient norm " + std::to_string(g.norm());
    } else {
      s.message = std::string("L-BFGS stopped at the attainable accuracy: ") + e.what();
    }
  }
  if (stop) s.status = SolverStatus::kInterrupted;
  if (!std::isfinite(best)) {
    s.status = SolverStatus::kNumericalError;
    s.message = "no finite objective value";
    return s;
  }
  X = best_X;
  s.initial_objective = s.trace.front().objective;
  s.final_objective = best;
  s.admm_iterations = 0;
  s.solve_time = std::chrono::duration<double>(Clock::now() - t0).count();
  if (model.evaluator) s.metrics = model.evaluator->evaluate(X);
  if (options.verbose) std::fprintf(stderr, "%s (%ld function evaluations)\n", s.brief_report().c_str(), evaluations);
  return s;
}

}  // namespace sdprl::smooth
