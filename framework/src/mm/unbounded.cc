// The unboundedness certificate (mm/unbounded.h).
#include "mm/unbounded.h"

#include <Spectra/SymEigsSolver.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>

#include "mm/loop_support.h"

namespace sdprl::mm {

RaySlope ray_slope(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X) {
  RaySlope s;
  const double slope0 = loss.derivative(0.0);
  if (!std::isfinite(slope0) || (model.constraint && !model.constraint->is_cone())) {
    s.slope = std::numeric_limits<double>::infinity();
    return s;
  }
  Vector values;
  model.terms->evaluate(X, values);
  s.terms = slope0 * values.cwiseAbs().sum();
  s.ridge = 0.5 * weights.lambda * X.squaredNorm();
  if (model.quadratic && weights.gamma > 0.0) {
    Matrix AX;
    model.quadratic->apply(X, AX);
    s.quadratic = 0.5 * weights.gamma * AX.cwiseProduct(X).sum();
  }
  s.slope = s.terms + s.quadratic + s.ridge;
  return s;
}

namespace {

// A as a Spectra operator (matrix-free, through Regularizer::apply).
class AOperator {
 public:
  using Scalar = double;
  explicit AOperator(const Regularizer& a) : a_(a) {}
  Index rows() const { return a_.dimension(); }
  Index cols() const { return a_.dimension(); }
  void perform_op(const double* x_in, double* y_out) const {
    const Index n = a_.dimension();
    const Matrix x = Eigen::Map<const Eigen::VectorXd>(x_in, n);
    Matrix y;
    a_.apply(x, y);
    Eigen::Map<Eigen::VectorXd>(y_out, n) = Eigen::Map<const Eigen::VectorXd>(y.data(), n);
  }

 private:
  const Regularizer& a_;
};

// The smallest eigenpair of A: dense for small n, Lanczos (Spectra) otherwise; false on failure.
bool smallest_eigenpair(const Regularizer& a, double& value, Vector& vector) {
  const Index n = a.dimension();
  AOperator op(a);
  if (n <= 300) {
    Eigen::MatrixXd dense(n, n);
    Vector e = Vector::Zero(n), col(n);
    for (Index j = 0; j < n; ++j) {
      e.setZero();
      e[j] = 1.0;
      op.perform_op(e.data(), col.data());
      dense.col(j) = col;
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (dense + dense.transpose()));
    if (eig.info() != Eigen::Success) return false;
    value = eig.eigenvalues()[0];
    vector = eig.eigenvectors().col(0);
    return true;
  }
  Spectra::SymEigsSolver<AOperator> eigs(op, 1, std::min<Index>(n, 20));
  eigs.init();
  eigs.compute(Spectra::SortRule::SmallestAlge, 1000, 1e-8);
  if (eigs.info() != Spectra::CompInfo::Successful) return false;
  value = eigs.eigenvalues()[0];
  vector = eigs.eigenvectors().col(0);
  return true;
}

}  // namespace

RaySlope lowest_a_ray_slope(const Model& model, const Loss& loss, const RegularizationWeights& weights, Index rank) {
  RaySlope best;
  best.slope = std::numeric_limits<double>::infinity();
  if (!model.quadratic || !(weights.gamma > 0.0)) return best;
  double value = 0.0;
  Vector v;
  if (!smallest_eigenpair(*model.quadratic, value, v) || !(value < 0.0)) return best;
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
