// The unboundedness certificate (mm/unbounded.h).
#include "mm/unbounded.h"

#include <cmath>
#include <limits>

#include "linalg/symmetric_eigen.h"
#include "mm/loop_support.h"

namespace sdprl::mm {

RaySlope ray_slope(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X) {
  RaySlope s;
  const double slope0 = loss.derivative(0.0);
  if (!std::isfinite(slope0) || (model.constraint && !model.constraint->is_cone())) {
    s.slope = std::numeric_limits<double>::infinity();
    return s;
  }
  s.ridge = 0.5 * weights.lambda * X.squaredNorm();
  if (model.quadratic && weights.gamma > 0.0) {
    Matrix AX;
    model.quadratic->apply(X, AX);
    s.quadratic = 0.5 * weights.gamma * AX.cwiseProduct(X).sum();
  }
  // The terms' part is >= 0: without a negative A-term there is nothing to prove, and the m-vector
  // of term values (7 MB at the quickstart's m = 10^4) is not made.
  if (!(s.quadratic + s.ridge < 0.0)) {
    s.slope = std::numeric_limits<double>::infinity();
    return s;
  }
  Vector values;
  model.terms->evaluate(X, values);
  s.terms = slope0 * values.cwiseAbs().sum();
  s.slope = s.terms + s.quadratic + s.ridge;
  return s;
}

RaySlope lowest_a_ray_slope(const Model& model, const Loss& loss, const RegularizationWeights& weights, Index rank) {
  RaySlope best;
  best.slope = std::numeric_limits<double>::infinity();
  // No eigenpair when no ray could certify anything (ray_slope's own conditions, checked first:
  // sparse PCA's trace ball would otherwise pay a Lanczos run on Sigma for nothing).
  if (!model.quadratic || !(weights.gamma > 0.0) || !std::isfinite(loss.derivative(0.0)) ||
      (model.constraint && !model.constraint->is_cone()))
    return best;
  const Regularizer& a = *model.quadratic;
  const linalg::SymmetricOperator S = [&a](const Matrix& x, Matrix& y) { a.apply(x, y); };
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
  if (!linalg::extreme_eigenpairs(S, a.dimension(), 1, linalg::Extreme::kSmallest, values, vectors) ||
      !(values[0] < 0.0))
    return best;
  const double value = values[0];
  const Vector v = vectors.col(0);
  for (const double sign : {1.0, -1.0}) {
    Matrix V = Matrix::Zero(v.size(), rank);
    V.col(0) = sign * v;
    if (model.constraint) model.constraint->project(V);
    if (V.squaredNorm() == 0.0) continue;
    RaySlope s = ray_slope(model, loss, weights, V);
    if (s.slope < best.slope) best = s;
  }
  best.ray = "X -> c V, V the eigenvector of A's smallest eigenvalue " + fmt("%.6g", value);
  return best;
}

bool RaySlope::certifies_unbounded() const {
  // Each part is a sum of m or n r products; 1e-10 of their size is far beyond their rounding.
  return slope < -1e-10 * (terms + std::abs(quadratic) + ridge);
}

std::string RaySlope::message(const RegularizationWeights& weights) const {
  return "the objective is unbounded below: along " + ray + ", F <= const + c^2 s with s = " +
         fmt("%.6g", slope) + " < 0 (the terms grow by at most phi'(0) sum |<Q, X X^T>| = " + fmt("%.6g", terms) +
         ", the A-term (gamma/2) <X, A X> = " + fmt("%.6g", quadratic) + ", the ridge (lambda/2) ||X||^2 = " +
         fmt("%.6g", ridge) + "): gamma = " + fmt("%g", weights.gamma) +
         " is too large for what the terms can hold back, or A is indefinite with too little lambda = " +
         fmt("%g", weights.lambda) + "; lower regularizer.gamma or raise regularizer.lambda";
}

}  // namespace sdprl::mm
