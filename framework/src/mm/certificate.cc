// The certificate of the convex SDP behind a factored model (mm/certificate.h; docs/method.md
// section 7.3).
#include "mm/certificate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

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

namespace {

// lambda_min(A) through the eigensolver; NaN when it does not converge.
double smallest_eigenvalue(const linalg::SymmetricOperator& S, Index n) {
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
  if (!linalg::extreme_eigenpairs(S, n, 1, linalg::Extreme::kSmallest, values, vectors))
    return std::numeric_limits<double>::quiet_NaN();
  return values[0];
}

}  // namespace

Certificate certify(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X,
                    const Vector& multipliers, Index directions, Descent* descent) {
  Certificate c;
  if (model.constraint) {
    c.note = "no certificate under the constraint X in " + model.constraint->name();
    return c;
  }
  c.surrogate = !linear_loss(loss);
  const ConstraintSet& terms = *model.terms;
  const Index n = terms.dimension(), m = terms.size();
  Vector values;
  terms.evaluate(X, values);
  const Vector r = values - terms.targets();
  Vector w(m), phi;
  loss.evaluate(r.cwiseAbs(), phi, w);

  // y: the multipliers in the box |y| <= w, or w sign(r) without them.
  Vector y(m);
  for (Index h = 0; h < m; ++h) {
    const double s = multipliers.size() == m ? std::clamp(multipliers[h], -1.0, 1.0)
                                             : (r[h] > 0.0 ? 1.0 : (r[h] < 0.0 ? -1.0 : 0.0));
    y[h] = w[h] * s;
  }

  const bool has_a = model.quadratic && weights.gamma != 0.0;
  double quadratic = 0.0;
  if (has_a) {
    Matrix AX;
    model.quadratic->apply(X, AX);
    quadratic = 0.5 * weights.gamma * AX.cwiseProduct(X).sum();
  }
  c.value = w.cwiseProduct(r.cwiseAbs()).sum() + quadratic + 0.5 * weights.lambda * X.squaredNorm();

  const linalg::SymmetricOperator S = [&](const Matrix& v, Matrix& out) {
    terms.apply_adjoint_sym(y, v, out);
    if (has_a) {
      Matrix Av;
      model.quadratic->apply(v, Av);
      out += 0.5 * weights.gamma * Av;
    }
    out += 0.5 * weights.lambda * v;
  };
  if (descent) {
    Eigen::VectorXd values;
    Eigen::MatrixXd vectors;
    const Index k = std::clamp<Index>(directions, 1, n);
    c.lambda_min = linalg::extreme_eigenpairs(S, n, k, linalg::Extreme::kSmallest, values, vectors)
                       ? values[0]
                       : std::numeric_limits<double>::quiet_NaN();
    if (!std::isnan(c.lambda_min)) {
      Index negative = 0;
      while (negative < values.size() && values[negative] < 0.0) ++negative;
      descent->values = values.head(negative);
      descent->vectors = vectors.leftCols(negative);
    }
  } else {
    c.lambda_min = smallest_eigenvalue(S, n);
  }
  if (std::isnan(c.lambda_min)) {
    c.note = "the eigensolver did not converge on S(y)";
    return c;
  }
  c.computed = true;
  c.lower_bound = -y.dot(terms.targets());
  if (c.lambda_min < 0.0) {
    // kappa = lambda + gamma min(0, lambda_min(A)): f(Z) >= (kappa/2) tr Z on PSD Z.
    double kappa = weights.lambda;
    if (has_a && weights.gamma < 0.0) {
      kappa = -std::numeric_limits<double>::infinity();
    } else if (has_a) {
      const Regularizer& a = *model.quadratic;
      const double a_min =
          smallest_eigenvalue([&a](const Matrix& v, Matrix& out) { a.apply(v, out); }, a.dimension());
      kappa += std::isnan(a_min) ? -std::numeric_limits<double>::infinity() : weights.gamma * std::min(0.0, a_min);
    }
    if (kappa > 0.0 && c.value >= 0.0) {
      c.trace_bound = 2.0 * c.value / kappa;
      c.lower_bound += c.trace_bound * c.lambda_min;
    } else {
      c.trace_bound = std::numeric_limits<double>::infinity();
      c.lower_bound = -std::numeric_limits<double>::infinity();
      c.note = "lambda_min(S) < 0 and tr Z is not bounded (lambda + gamma lambda_min(A) <= 0, or gamma < 0)";
    }
  }
  c.gap = c.value - c.lower_bound;
  c.relative_gap = c.gap / std::max(std::abs(c.value), 1e-300);
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

}  // namespace sdprl::mm
