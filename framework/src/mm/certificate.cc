// The certificate of the convex SDP behind a factored model (mm/certificate.h; docs/method.md
// section 7.3).
#include "mm/certificate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/loss_chunks.h"
#include "linalg/symmetric_eigen.h"
#include "mm/loop_support.h"

namespace sdprl::mm {
// A concave phi with phi(0) = 0 (Assumption 3) is convex only when linear: phi(a) = phi'(0) a.
// Checked at points spread over the scales residuals take.
bool linear_loss(const Loss& loss) {
  const double slope = loss.derivative(0.0);
  if (!std::isfinite(slope)) return false;
  for (const double a : {1e-6, 1e-3, 1.0, 1e3, 1e6})
    if (std::abs(loss.value(a) - slope * a) > 1e-12 * slope * a || loss.derivative(a) != slope) return false;
  return true;
}

void apply_dual_operator(const Model& model, const RegularizationWeights& weights, const Vector& y, const Matrix& V,
                         Matrix& out, Matrix& scratch) {
  model.terms->apply_adjoint_sym(y, V, out);
  if (model.quadratic && weights.gamma != 0.0) {
    model.quadratic->apply(V, scratch);
    out += 0.5 * weights.gamma * scratch;
  }
  out += 0.5 * weights.lambda * V;
}

double regularizer_value(const Model& model, const RegularizationWeights& weights, const Matrix& X) {
  double f = 0.5 * weights.lambda * X.squaredNorm();
  if (model.quadratic && weights.gamma != 0.0) {
    Matrix AX;
    model.quadratic->apply(X, AX);
    f += 0.5 * weights.gamma * AX.cwiseProduct(X).sum();
  }
  return f;
}

double objective_value(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X,
                       Vector& residuals, Vector& weights_scratch) {
  const ConstraintSet& terms = *model.terms;
  terms.evaluate(X, residuals);
  residuals -= terms.targets();
  weights_scratch.resize(residuals.size());
  double loss_sum = 0.0, weighted_abs = 0.0;
  detail::chunked_loss(
      loss, residuals.size(),
      [&residuals](Index start, Index len, Vector& a) { a = residuals.segment(start, len).cwiseAbs(); },
      weights_scratch.data(), &loss_sum, &weighted_abs);
  return loss_sum + regularizer_value(model, weights, X);
}

namespace {

// Lanczos' relative tolerance for a first, coarse lambda_min(S(y)), and the relative gap above
// which the bound from it stands (certify()): where the certificate is far from closing (a rank
// below the optimum's, a concave loss's surrogate) the eigenvalue's last digits change nothing a
// user reads. The quickstart at m = 20000 (n = 20000, 2.3M terms, leaky-MCP, lambda = 1, relative
// gap 1e2): 0.14 s at 1e-2 against 0.96 s at 1e-6 and 1.1 s at 1e-8.
constexpr double kCoarseTolerance = 1e-2;
constexpr double kCoarseGap = 1e-2;
// Lanczos' relative tolerance and Krylov space otherwise (40 vectors: 221 products at m = 20000
// where 20 took 321 at 1e-8).
constexpr double kFineTolerance = 1e-6;
constexpr Index kKrylovVectors = 40;
// The staircase's first request of eigenpairs (certify(): doubled while all are negative), and
// Lanczos' restarts for each request: one that reaches into the cluster of S(y)'s eigenvalues
// near 0 does not converge (m = 500, lambda = 10, rank 94: 32 eigenpairs, 1000 restarts, 0.8 s
// each time), and the request before it stands.
constexpr Index kFirstDirections = 16;
constexpr Index kDirectionRestarts = 100;

// The k smallest eigenpairs of S (k <= n) to a relative tolerance; false when the eigensolver
// does not converge.
bool smallest_eigenpairs(const linalg::SymmetricOperator& S, Index n, Index k, double tolerance,
                         Eigen::VectorXd& values, Eigen::MatrixXd& vectors, Index max_restarts = 1000,
                         bool dense_vectors = true) {
  linalg::LanczosSettings lanczos;
  lanczos.dense_vectors = dense_vectors;
  lanczos.min_ncv = kKrylovVectors;
  lanczos.tolerance = tolerance;
  lanczos.max_restarts = max_restarts;
  return linalg::extreme_eigenpairs(S, n, std::clamp<Index>(k, 1, n), linalg::Extreme::kSmallest, values, vectors,
                                    lanczos);
}

}  // namespace

Certificate certify(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X,
                    const Vector& multipliers, Index directions, Descent* descent, bool boxed, double known_lambda_min) {
  Certificate c;
  if (model.constraint) {
    c.note = "no certificate under the constraint X in " + model.constraint->name();
    return c;
  }
  c.surrogate = !linear_loss(loss);
  const ConstraintSet& terms = *model.terms;
  const Index n = terms.dimension(), m = terms.size();
  // The residuals r, the weights w = phi'(|r|) and y, each one pass over the m terms on every
  // thread, with no other m-vector: at m = 10^5 (11.5M terms, leaky-MCP) a serial loss over
  // |r| and phi as fresh m-vectors took 0.83 s of the certificate's 2.4 s.
  Vector r;
  terms.evaluate(X, r);
  r -= terms.targets();
  Vector w(m);
  double phi_sum = 0.0, weighted_abs = 0.0;
  detail::chunked_loss(
      loss, m, [&r](Index start, Index len, Vector& a) { a = r.segment(start, len).cwiseAbs(); }, w.data(), &phi_sum,
      &weighted_abs);

  // y: the multipliers in the box |y| <= w, or w sign(r) without them; in w's place unless the
  // staircase reads w (one m-vector less: its fresh pages cost 0.13 s at m = 10^5).
  Vector y_own;
  if (descent) y_own.resize(m);
  Vector& y = descent ? y_own : w;
  const bool given = multipliers.size() == m;
#pragma omp parallel for schedule(static) if (m > detail::kParallelWork)
  for (Index h = 0; h < m; ++h) {
    const double s = given ? (boxed ? std::clamp(multipliers[h], -1.0, 1.0) : multipliers[h])
                           : (r[h] > 0.0 ? 1.0 : (r[h] < 0.0 ? -1.0 : 0.0));
    y[h] = w[h] * s;
  }

  const bool has_a = model.quadratic && weights.gamma != 0.0;
  c.value = weighted_abs + regularizer_value(model, weights, X);

  Matrix scratch;
  const linalg::SymmetricOperator S = [&](const Matrix& v, Matrix& out) {
    apply_dual_operator(model, weights, y, v, out, scratch);
  };
  c.computed = true;
  c.dual_value = -y.dot(terms.targets());
  // kappa = lambda + gamma min(0, lambda_min(A)): f(Z) >= (kappa/2) tr Z on PSD Z. Computed once,
  // when a negative lambda_min(S) first needs R.
  double kappa = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd eigenvalues;
  Eigen::MatrixXd eigenvectors;
  const auto bound_at = [&](double lambda_min) {
    c.lambda_min = lambda_min;
    c.lower_bound = c.dual_value;
    c.trace_bound = 0.0;
    if (lambda_min < 0.0) {
      if (std::isnan(kappa)) {
        kappa = weights.lambda;
        if (has_a && weights.gamma < 0.0) {
          kappa = -std::numeric_limits<double>::infinity();
        } else if (has_a && weights.lambda > 0.0) {  // (with lambda = 0, kappa <= 0 whatever A's spectrum)
          const Regularizer& a = *model.quadratic;
          Eigen::VectorXd a_values;
          Eigen::MatrixXd a_vectors;
          const bool converged =
              smallest_eigenpairs([&a](const Matrix& v, Matrix& out) { a.apply(v, out); }, a.dimension(), 1,
                                  kFineTolerance, a_values, a_vectors, 1000, false);
          kappa += converged ? weights.gamma * std::min(0.0, a_values[0]) : -std::numeric_limits<double>::infinity();
        }
      }
      if (kappa > 0.0 && c.value >= 0.0) {
        c.trace_bound = 2.0 * c.value / kappa;
        c.lower_bound += c.trace_bound * lambda_min;
      } else {
        c.trace_bound = std::numeric_limits<double>::infinity();
        c.lower_bound = -std::numeric_limits<double>::infinity();
        c.note = "lambda_min(S) < 0 and tr Z is not bounded (lambda + gamma lambda_min(A) <= 0, or gamma < 0)";
      }
    }
    c.gap = c.value - c.lower_bound;
    c.relative_gap = c.gap / std::max(std::abs(c.value), 1e-300);
  };
  // First lambda_min to kCoarseTolerance (not for the staircase, whose directions need the fine
  // solve; nor where the solve is dense, n <= kDenseEigenSize, and exact anyway). Lanczos' Ritz
  // value theta is within its residual, at most the tolerance times |theta|, of the eigenvalue it
  // found, so theta - tolerance |theta| is a lower estimate of lambda_min, and the bound from it
  // stands when its gap is above kCoarseGap. Not with lambda = 0 either: kappa <= 0 there, so a
  // negative lambda_min leaves no finite bound to stand (the sdpa models, whose lambda_min is their
  // dual infeasibility and wants the fine solve; mcp500-1's coarse one was 15% of its run).
  if (std::isfinite(known_lambda_min) && !descent) {
    bound_at(known_lambda_min);
    return c;
  }
  const bool dense = n <= linalg::kDenseEigenSize;
  if (!descent && !dense && weights.lambda > 0.0 && smallest_eigenpairs(S, n, 1, kCoarseTolerance, eigenvalues, eigenvectors)) {
    bound_at(eigenvalues[0] - kCoarseTolerance * std::abs(eigenvalues[0]));
    // (Not where tr Z has no bound, the sdpa models, whose lambda_min is their dual infeasibility.)
    if (std::isfinite(c.lower_bound) && c.relative_gap > kCoarseGap) {
      if (c.note == Certificate().note) c.note = "lambda_min(S) to 1e-2 (from below): the gap is far from closing";
      return c;
    }
  }
  // The staircase wants every negative eigenvalue there is room for (`directions`), but asking
  // Lanczos for all of them at once costs O(n directions^2) in Spectra's own work whatever their
  // number: at m = 2000 (l1, lambda = 30, rank "auto", room 550) each stair's 550 eigenpairs with
  // 1101 Krylov vectors took about 7 s, for 3 negative ones. So (beyond the dense solver's size,
  // which gives all at once) lambda_min comes first, then k eigenpairs from kFirstDirections on, doubling
  // while the k-th smallest is still negative: the same negative eigenpairs, at a cost set by how
  // many there are. Those k are computed for S + lambda_min I: Spectra's tolerance is relative to
  // each Ritz value, and near a solution S(y) has a cluster of eigenvalues near 0 (X's columns
  // span its null space) that a relative 1e-6 never resolves (m = 500, lambda = 10, rank 94: "did
  // not converge", and the staircase stopped with lambda_min(S) = -0.12); shifted, every wanted
  // one is at least |lambda_min| away from 0, so the tolerance is 1e-6 |lambda_min| for all.
  // (Without `descent` only lambda_min is read: the dense solve skips the vectors.)
  bool solved = smallest_eigenpairs(S, n, descent && dense ? directions : 1, kFineTolerance, eigenvalues, eigenvectors,
                                    1000, descent != nullptr);
  if (solved && descent && !dense && directions > 1 && eigenvalues[0] < 0.0) {
    const double shift = eigenvalues[0];
    const linalg::SymmetricOperator shifted = [&](const Matrix& v, Matrix& out) {
      S(v, out);
      out += shift * v;
    };
    Eigen::VectorXd values;
    Eigen::MatrixXd vectors;
    for (Index want = std::min(directions, kFirstDirections);; want = std::min(directions, 2 * want)) {
      // Where the shifted solve fails, the directions already found stand.
      if (!smallest_eigenpairs(shifted, n, want, kFineTolerance, values, vectors, kDirectionRestarts)) break;
      eigenvalues = values.array() - shift;
      eigenvectors = std::move(vectors);
      if (want >= directions || eigenvalues.size() < want || !(eigenvalues[want - 1] < 0.0)) break;
    }
  }
  if (!solved) {
    const double value = c.value;
    c = Certificate();
    c.surrogate = !linear_loss(loss);
    c.value = value;
    c.note = "the eigensolver did not converge on S(y)";
    return c;
  }
  if (descent) {
    Index negative = 0;
    while (negative < eigenvalues.size() && eigenvalues[negative] < 0.0) ++negative;
    descent->values = eigenvalues.head(negative);
    descent->vectors = eigenvectors.leftCols(negative);
    descent->residuals = std::move(r);
    descent->weights = std::move(w);
  }
  bound_at(eigenvalues[0]);
  return c;
}

double best_column_step(const Vector& residuals, const Vector& weights, const Vector& q, double c, double* fall) {
  // The right derivative of g(s) = sum w |r + s q| + s c is c + sum w q sign(r + s q), with
  // sign(0) taken as sign(q) (the term grows from there). It rises by 2 w |q| at each breakpoint
  // s_tau = -r_tau / q_tau > 0; g is minimal at the first breakpoint where it turns >= 0.
  double slope = c;
  std::vector<std::pair<double, double>> breaks;  // (s_tau, the rise there)
  for (Index h = 0; h < q.size(); ++h) {
    if (q[h] == 0.0 || weights[h] == 0.0) continue;
    const double rise = 2.0 * weights[h] * std::abs(q[h]);
    const double s = -residuals[h] / q[h];
    if (s > 0.0) {
      slope -= 0.5 * rise;  // r and q of opposite signs: the term falls until s_tau
      breaks.emplace_back(s, rise);
    } else {
      slope += 0.5 * rise;
    }
  }
  double best = 0.0, value_change = 0.0;
  if (slope < 0.0) {
    std::sort(breaks.begin(), breaks.end());
    double at = 0.0;
    for (const auto& [s, rise] : breaks) {
      value_change += slope * (s - at);
      at = s;
      slope += rise;
      if (slope >= 0.0) break;
    }
    // A slope still negative after the last breakpoint: g falls without bound along v v^T (an
    // unbounded model; the caller's own checks say so), so no finite step is the best.
    best = slope >= 0.0 ? at : 0.0;
    if (slope < 0.0) value_change = 0.0;
  }
  if (fall) *fall = -value_change;
  return best;
}

ConstrainedAnswer constrained_answer(const Model& model, const RegularizationWeights& weights, const Matrix& X,
                                     double infeasibility, const Certificate& certificate, double tolerance) {
  ConstrainedAnswer a;
  if (!model.infeasibility || X.size() == 0) return a;
  const double scale = weights.gamma > 0.0 ? 0.5 * weights.gamma : 1.0;
  a.objective = mm::regularizer_value(model, weights, X) / scale;
  a.primal_infeasibility = infeasibility;
  if (!certificate.computed || certificate.surrogate || !std::isfinite(certificate.dual_value)) return a;
  a.dual_bound = certificate.dual_value / scale;
  const double size = std::max(1.0, 0.5 * (std::abs(a.objective) + std::abs(a.dual_bound)));
  a.relative_gap = (a.objective - a.dual_bound) / size;
  a.dual_infeasibility = std::max(0.0, -certificate.lambda_min) * X.squaredNorm() / scale / size;
  a.optimal = std::abs(a.relative_gap) <= tolerance && a.dual_infeasibility <= tolerance &&
              a.primal_infeasibility <= tolerance;
  return a;
}

}  // namespace sdprl::mm
