// SDPs given by constraints, by an augmented Lagrangian on the factor (sdp/augmented_lagrangian.h;
// docs/method.md section 9.2).
#include "sdp/augmented_lagrangian.h"

#include <Eigen/QR>
#include <unsupported/Eigen/Polynomials>

#include <complex>
#include <string>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "mm/certificate.h"
#include "mm/loop_support.h"
#include "sdprl/error.h"
#include "sdprl/regularizers/symmetric_sparse_regularizer.h"
#include "sdprl/terms/sparse_matrix_terms.h"
#include "sdp/judge.h"
#include "sdp/solve_start.h"

namespace sdprl::sdp {
namespace {

using mm::Clock;
using mm::fmt;
using mm::seconds_since;

// The multiplier step and the penalty's growth (SDPLR's rule): y -= sigma r / s after every inner
// solve; sigma grows tenfold when the violation fell by less than a quarter.
constexpr double kFirstSigma = 10.0;
constexpr double kSigmaGrowth = 10.0;
constexpr double kEnoughFall = 0.25;
constexpr double kLargestSigma = 1e14;
// An inner solve ends when |grad L| <= kInnerTolerance / sigma (relative to the objective's gradient
// at the start), never below kFinestGradient of it: early outer steps are solved loosely, later
// ones as tightly as the multipliers need.
constexpr double kInnerTolerance = 1.0;
constexpr double kFinestGradient = 1e-13;
constexpr int kMaxOuter = 200;
constexpr int kPatience = 10;
// L-BFGS iterations in all, at most (solver.max_mm_iterations counts outer steps here).
constexpr long kMaxInnerIterations = 40000;

// mu = argmin |(A - sum_i mu_i sym(Q_i)) X|_F by a column-pivoted QR of B, B's columns
// vec(sym(Q_i) X) (rank-deficient B allowed: the minimum-norm-like basic solution); AX = A X.
// Dense, so only for m <= kDenseMultipliers and n r m <= kDenseEntries; false otherwise.
constexpr Index kDenseMultipliers = 2000;
constexpr double kDenseEntries = 5e7;
bool least_squares_multipliers(const ConstraintSet& terms, const Matrix& X, const Matrix& AX, Vector& mu) {
  const Index m = terms.size(), size = X.rows() * X.cols();
  if (m > kDenseMultipliers || static_cast<double>(size) * static_cast<double>(m) > kDenseEntries ||
      AX.size() != X.size())
    return false;
  Eigen::MatrixXd B(size, m);
  Vector e = Vector::Zero(m);
  Matrix column;
  for (Index i = 0; i < m; ++i) {
    e[i] = 1.0;
    terms.apply_adjoint_sym(e, X, column);
    e[i] = 0.0;
    B.col(i) = Eigen::Map<const Vector>(column.data(), size);
  }
  mu = B.colPivHouseholderQr().solve(Eigen::Map<const Vector>(AX.data(), size));
  return mu.allFinite();
}

}  // namespace

std::string augmented_lagrangian_problem(const Model& model, const Loss& loss, const SolverOptions& options,
                                         const RegularizationWeights& weights) {
  if (!model.infeasibility) return "the model's terms are not constraints (only sdpa models have them)";
  if (!mm::linear_loss(loss)) return "the loss '" + loss.name() + "' is not linear (l1): its terms are a fit, not constraints";
  if (model.constraint) return "the model constrains X to " + model.constraint->name();
  if (weights.lambda != 0.0) return "lambda is not 0 (the constrained problem's objective would depend on gamma)";
  if (options.max_rank > 0) return "solver.max_rank is set (the staircase is the MM solver's)";
  if (options.l1_warm_start) return "solver.l1_warm_start is set (a start for the MM solver)";
  return "";
}

Summary solve_augmented_lagrangian(const Model& model, const Loss& loss, RegularizationWeights& weights,
                                   const SolverOptions& options, Matrix& X, const IterationCallback& callback) {
  const auto t0 = Clock::now();
  if (const std::string problem = augmented_lagrangian_problem(model, loss, options, weights); !problem.empty())
    throw Error("solver.type", "\"augmented-lagrangian\" does not apply to this model: " + problem);
  Summary summary = begin_solve(model, options, SolverType::kAugmentedLagrangian);
  const ConstraintSet& terms = *model.terms;
  const Index n = terms.dimension(), m = terms.size(), rank = summary.rank;
  initialize(model, options, rank, X);
  summary.init_time = seconds_since(t0);

  const auto t1 = Clock::now();
  const Vector& t = terms.targets();
  // Scaled as SDPLR scales: each constraint by ||sym(Q_i)||_F (sparse-matrix terms; other families
  // by max(1, |t_i|)), the objective by 1 / ||A||_F, so that sigma means the same on data from 1
  // to 1e4 (SDPLIB's control1). The violation is measured as Model::infeasibility measures it.
  Vector scale = t.cwiseAbs().cwiseMax(1.0);
  if (const auto* sparse = dynamic_cast<const SparseMatrixTerms*>(&terms)) {
    for (Index k = 0; k < m; ++k) {
      double sum = 0.0;
      for (Index e = sparse->entry_begin(k); e < sparse->entry_begin(k + 1); ++e) {
        const auto u = static_cast<std::size_t>(e);
        const double value = sparse->upper_values()[u];
        sum += (sparse->upper_rows()[u] == sparse->upper_cols()[u] ? 1.0 : 2.0) * value * value;
      }
      if (sum > 0.0) scale[k] = std::sqrt(sum);
    }
  }
  const Vector measure = t.cwiseAbs().cwiseMax(1.0);
  double kappa = 1.0;
  if (const auto* a = dynamic_cast<const SymmetricSparseRegularizer*>(model.quadratic.get()))
    if (const double norm = a->matrix().norm(); norm > 0.0) kappa = 1.0 / norm;
  const RegularizationWeights unit{0.0, 2.0 * kappa};  // (gamma/2) <X, A X> = kappa <A, Z>
  const double gamma_from = weights.gamma > 0.0 ? weights.gamma : 2.0;
  Vector y = Vector::Zero(m), values, rs, v;
  Matrix G, AX, Xm(n, X.cols());
  double sigma = kFirstSigma;
  double scaled_objective = 0.0;  // kappa <A, X X^T> where L was last evaluated, beside `values`
  // L and its gradient at x (X's column-major entries).
  const auto lagrangian = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) -> double {
    Xm = Eigen::Map<const Matrix>(x.data(), n, rank);
    terms.evaluate(Xm, values);
    rs = (values - t).cwiseQuotient(scale);
    v = (sigma * rs - y).cwiseQuotient(scale);
    mm::apply_dual_operator(model, unit, v, Xm, G, AX);  // sum v_i sym(Q_i) X + kappa A X; AX = A X
    scaled_objective = AX.size() == Xm.size() ? kappa * AX.cwiseProduct(Xm).sum() : 0.0;
    g = 2.0 * Eigen::Map<const Eigen::VectorXd>(G.data(), n * rank);
    return scaled_objective - y.dot(rs) + 0.5 * sigma * rs.squaredNorm();
  };
  Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(X.data(), n * rank), g(n * rank);
  // The gradient's scale: that of <A, Z> at the start, or of the constraints' part where A X = 0.
  {
    const double keep = sigma;
    sigma = 0.0;
    lagrangian(x, g);
    sigma = keep;
  }
  const double gradient_scale = std::max(1.0, g.norm());
  const double f0 = objective(model, loss, RegularizationWeights{0.0, gamma_from}, X);

  // The inner solve: L-BFGS (two-loop recursion, options.lbfgs_memory pairs) with an exact line
  // search. Along X + t D every residual is a quadratic in t, r_i(t) = r_i + t b_i + t^2 c_i
  // (b_i = <Q_i, X D^T + D X^T>, c_i = <Q_i, D D^T>, from three evaluations), and so is <A, Z(t)>:
  // L(t) is a quartic, minimised exactly over t > 0 (SDPLR's search), which no curvature of L at
  // a large sigma can make fail.
  const int memory = std::max(1, options.lbfgs_memory);
  std::vector<Eigen::VectorXd> s_pairs, y_pairs;
  std::vector<double> rho_pairs;
  Vector e_d, e_xd, b, c;
  Matrix D(n, rank), XD(n, rank);
  const auto inner_solve = [&](double tolerance, long max_iterations) {
    s_pairs.clear();
    y_pairs.clear();
    rho_pairs.clear();
    Eigen::VectorXd g_now(n * rank), g_next(n * rank), d(n * rank), q;
    lagrangian(x, g_now);
    long it = 0;
    while (it < max_iterations && g_now.norm() > tolerance) {
      // d = -H g by the two-loop recursion.
      q = g_now;
      const std::size_t k = s_pairs.size();
      std::vector<double> alpha(k);
      for (std::size_t j = k; j-- > 0;) {
        alpha[j] = rho_pairs[j] * s_pairs[j].dot(q);
        q -= alpha[j] * y_pairs[j];
      }
      if (k > 0) q *= s_pairs[k - 1].dot(y_pairs[k - 1]) / y_pairs[k - 1].squaredNorm();
      for (std::size_t j = 0; j < k; ++j) q += (alpha[j] - rho_pairs[j] * y_pairs[j].dot(q)) * s_pairs[j];
      d = -q;
      if (!(d.dot(g_now) < 0.0)) {  // not a descent direction: start the memory afresh
        s_pairs.clear();
        y_pairs.clear();
        rho_pairs.clear();
        d = -g_now;
      }
      // The quartic L(t).
      Xm = Eigen::Map<const Matrix>(x.data(), n, rank);
      D = Eigen::Map<const Matrix>(d.data(), n, rank);
      // (`values` and `scaled_objective` are L's last evaluation's: at x.)
      terms.evaluate(D, e_d);
      XD = Xm + D;
      terms.evaluate(XD, e_xd);
      const Vector r0 = (values - t).cwiseQuotient(scale);
      b = (e_xd - values - e_d).cwiseQuotient(scale);
      c = e_d.cwiseQuotient(scale);
      const double q0 = scaled_objective, q2 = mm::regularizer_value(model, unit, D);
      const double q1 = mm::regularizer_value(model, unit, XD) - q0 - q2;
      const double a1 = q1 - y.dot(b) + sigma * r0.dot(b);
      const double a2 = q2 - y.dot(c) + 0.5 * sigma * (b.squaredNorm() + 2.0 * r0.dot(c));
      const double a3 = sigma * b.dot(c), a4 = 0.5 * sigma * c.squaredNorm();
      const auto quartic = [&](double u) { return u * (a1 + u * (a2 + u * (a3 + u * a4))); };  // L(u) - L(0)
      double step = 0.0, best = 0.0;
      Eigen::Vector4d derivative(a1, 2.0 * a2, 3.0 * a3, 4.0 * a4);
      if (a4 > 0.0) {
        Eigen::PolynomialSolver<double, 3> roots(derivative);
        for (Index j = 0; j < 3; ++j) {
          const std::complex<double> z = roots.roots()[j];
          if (std::abs(z.imag()) > 1e-12 * std::max(1.0, std::abs(z.real())) || !(z.real() > 0.0)) continue;
          const double fall = quartic(z.real());
          if (fall < best) {
            best = fall;
            step = z.real();
          }
        }
      } else if (a2 > 0.0 && a1 < 0.0) {
        step = -a1 / (2.0 * a2);
        best = quartic(step);
      }
      if (!(step > 0.0) || !std::isfinite(step)) break;  // no fall along d: as far as this goes
      const Eigen::VectorXd x_next = x + step * d;
      // The quartic's own fall decides (L's values differ below their rounding at a large sigma).
      if (!(best < 0.0)) break;
      lagrangian(x_next, g_next);
      ++it;
      Eigen::VectorXd sk = x_next - x, yk = g_next - g_now;
      const double sy = sk.dot(yk);
      if (sy > 1e-12 * sk.norm() * yk.norm()) {
        if (static_cast<int>(s_pairs.size()) == memory) {
          s_pairs.erase(s_pairs.begin());
          y_pairs.erase(y_pairs.begin());
          rho_pairs.erase(rho_pairs.begin());
        }
        s_pairs.push_back(std::move(sk));
        y_pairs.push_back(std::move(yk));
        rho_pairs.push_back(1.0 / sy);
      }
      x = x_next;
      g_now.swap(g_next);
    }
    return it;
  };

  if (options.verbose)
    std::fprintf(stderr,
                 "-------------------------------------------------------------------------------\n"
                 "  sdprl: an SDP given by constraints, by an augmented Lagrangian on the factor\n"
                 "  (L-BFGS inner solves, no penalty to tune; docs/method.md section 9.2)\n"
                 "  n = %ld, rank = %ld, constraints = %ld\n"
                 "-------------------------------------------------------------------------------\n"
                 "outer  L-BFGS       <A, Z>   violation      sigma      time\n",
                 static_cast<long>(n), static_cast<long>(rank), static_cast<long>(m));
  long inner_total = 0;
  int outer = 0;
  double previous_violation = std::numeric_limits<double>::infinity();
  bool certified = false, interrupted = false, over_time = false, failed = false, stalled = false;
  double best_distance = std::numeric_limits<double>::infinity();
  struct Best {
    Matrix X;
    Vector multipliers;
    double gamma = 0.0;
    Certificate certificate;
    mm::ConstrainedAnswer answer;
  } best;
  bool has_best = false;
  int unimproved = 0;
  Certificate certificate;
  mm::ConstrainedAnswer answer;
  Vector multipliers;
  const int cap = std::min(options.max_mm_iterations, kMaxOuter);
  while (outer < cap && inner_total < kMaxInnerIterations) {
    ++outer;
    // Stationarity as tight as feasibility: the multipliers' accuracy (S(y) X = grad L / 2) then
    // keeps pace with the violation's.
    const double tolerance =
        std::max(std::min(kInnerTolerance / sigma, previous_violation), kFinestGradient) * gradient_scale;
    const long its = inner_solve(tolerance, std::min<long>(kMaxInnerIterations - inner_total, 20000));
    inner_total += its;
    if (!x.allFinite()) {
      failed = true;
      break;
    }
    lagrangian(x, g);  // rs and A X at x
    const double violation = (values - t).cwiseAbs().cwiseQuotient(measure).maxCoeff();
    const double value = AX.size() == Xm.size() ? AX.cwiseProduct(Xm).sum() : 0.0;
    y -= sigma * rs;
    // The SDP's multipliers mu_i = y_i / (kappa s_i) (S = A - sum mu_i sym(Q_i)); F's at gamma are
    // -(gamma / 2) mu, within the l1 penalty's box |.| <= phi'(0) for the largest gamma of the path.
    X = Xm;
    // F's multipliers and penalty from the SDP's mu (above), and the constrained answer by them.
    const auto judge = [&](const Vector& mu) {
      return judge_multipliers(model, loss, weights, gamma_from, options.feasibility_tolerance, X, violation, mu);
    };
    Judgement chosen = judge(y.cwiseQuotient(scale) / kappa);
    // Once feasible, also the least-squares multipliers at X (the first-order estimate): near the
    // end the inner solves stop on rounding and the steps' mu drift by their noise (qap5 in clang's
    // build: dual infeasibility 1.4e-4, then 2.8e-3 ten steps on), which these do not carry.
    Vector mu_ls;
    if (violation <= options.feasibility_tolerance && least_squares_multipliers(terms, X, AX, mu_ls))
      if (Judgement other = judge(mu_ls); other.distance < chosen.distance) chosen = std::move(other);
    const double distance = chosen.distance;
    const RegularizationWeights& w = chosen.weights;
    Vector& f_multipliers = chosen.multipliers;
    const Certificate& c = chosen.certificate;
    const mm::ConstrainedAnswer& a = chosen.answer;
    weights.gamma = w.gamma;
    multipliers = f_multipliers;
    if (violation <= options.feasibility_tolerance) {
      certificate = c;
      answer = a;
      certified = answer.optimal;
      if (distance < best_distance) {
        // The best point met is what a stalled run ends with.
        best = {X, multipliers, weights.gamma, certificate, answer};
        has_best = true;
      }
      if (distance < 0.5 * best_distance) {
        best_distance = distance;
        unimproved = 0;
      } else {
        best_distance = std::min(best_distance, distance);
        ++unimproved;
      }
    }
    const double time = seconds_since(t1);
    if (options.verbose) {
      // Once feasible: how far the constrained answer is from a certificate.
      const std::string judged = certified ? "  certified"
                                 : violation <= options.feasibility_tolerance
                                     ? "  gap " + fmt("%.1e", answer.relative_gap) + ", dual infeasibility " +
                                           fmt("%.1e", answer.dual_infeasibility)
                                     : "";
      std::fprintf(stderr, "%5d  %6ld  %11.6e  %10.3e  %9.2e  %7.3fs%s\n", outer, inner_total, value, violation, sigma,
                   time, judged.c_str());
    }
    TraceRow row;
    row.mm_iteration = outer;
    row.objective = 0.5 * gamma_from * value;
    row.relative_change = violation;
    row.time = time;
    summary.trace.push_back(row);
    if (callback && !callback(row, X)) interrupted = true;
    if (options.interrupt && options.interrupt->load()) interrupted = true;
    over_time = options.time_limit > 0.0 && seconds_since(t0) >= options.time_limit;
    // Feasible, and ten steps have not halved the distance to a certificate: the multipliers have
    // settled where this method leaves them (the caller may polish the point, sdprl::run_model).
    stalled = unimproved >= kPatience;
    if (certified || interrupted || over_time || stalled) break;
    // Feasible already (to a tenth of the tolerance): the multipliers, not the penalty, are what
    // is left to settle, and a larger sigma only magnifies the residuals' rounding in their step.
    if (violation > 0.1 * options.feasibility_tolerance && violation > kEnoughFall * previous_violation)
      sigma = std::min(sigma * kSigmaGrowth, kLargestSigma);
    previous_violation = violation;
  }
  if (stalled && !certified && has_best) {
    X = best.X;
    multipliers = best.multipliers;
    weights.gamma = best.gamma;
    certificate = best.certificate;
    answer = best.answer;
  }
  summary.solve_time = seconds_since(t1);
  summary.weights = weights;
  summary.mm_iterations = outer;
  summary.admm_iterations = inner_total;
  summary.initial_objective = f0;
  summary.final_objective = objective(model, loss, weights, X);
  if (!certificate.computed) certificate = mm::certify(model, loss, weights, X, multipliers);
  certificate.optimal = certificate.computed && certificate.relative_gap <= options.stationarity_tolerance;
  summary.certificate = certificate;
  summary.status = interrupted ? SolverStatus::kInterrupted
                   : failed    ? SolverStatus::kNumericalError
                   : certified || stalled ? SolverStatus::kConverged
                   : over_time ? SolverStatus::kTimeLimit
                               : SolverStatus::kIterationLimit;
  if (failed) summary.message = "the augmented Lagrangian's iterate is not finite";
  if (stalled && !certified)
    summary.message = "feasible, but the multipliers stopped approaching a certificate (relative gap " +
                      fmt("%.1e", answer.relative_gap) + ", dual infeasibility " + fmt("%.1e", answer.dual_infeasibility) + ")";
  if (model.evaluator) summary.metrics = model.evaluator->evaluate(X);
  return summary;
}

}  // namespace sdprl::sdp
