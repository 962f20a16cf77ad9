// The certificate of the convex SDP behind a factored model (mm/certificate.h; docs/method.md
// section 7.3).
#include "mm/certificate.h"

#include <algorithm>
#include <cmath>

#include "linalg/symmetric_eigen.h"
#include "mm/loop_support.h"

namespace sdprl::mm {
namespace {

// A concave phi with phi(0) = 0 (Assumption 3) is convex only when linear: phi(a) = phi'(0) a.
// Checked at points spread over the scales residuals take.
bool linear_loss(const Loss& loss) {
  const double slope = loss.derivative(0.0);
  if (!std::isfinite(slope)) return false;
  for (const double a : {1e-6, 1e-3, 1.0, 1e3, 1e6})
    if (std::abs(loss.value(a) - slope * a) > 1e-12 * slope * a || loss.derivative(a) != slope) return false;
  return true;
}

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
                    const Vector& multipliers) {
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
  c.lambda_min = smallest_eigenvalue(S, n);
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

}  // namespace sdprl::mm
