// Test helpers for plugin authors (as Ceres ships for users' own subclasses): call them from your
// own tests (GoogleTest or any other) on your Loss or ConstraintSet. Each returns "" when the
// check passes, else a message naming the first failure. Header-only, no test framework needed.
//
//   EXPECT_EQ(sdprl::testing::check_loss(MyLoss(2.0)), "");
//   EXPECT_EQ(sdprl::testing::check_constraint_set(my_terms, dense_Q), "");
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/loss.h"
#include "sdprl/loss_check.h"

namespace sdprl::testing {

// phi' against central finite differences on (0, max_a), then the MM contract (Assumption 3).
// Points where phi' jumps (kinks) are skipped for the finite-difference comparison.
inline std::string check_loss(const Loss& loss, double max_a = 100.0, double rel_tol = 1e-5) {
  std::ostringstream os;
  for (double a = 1e-3; a < max_a; a *= 1.21) {
    const double h = 1e-6 * std::max(1.0, a);
    if (std::abs(loss.derivative(a + h) - loss.derivative(a - h)) > 1e-3 * (1.0 + std::abs(loss.derivative(a))))
      continue;
    const double fd = (loss.value(a + h) - loss.value(a - h)) / (2.0 * h);
    if (!(std::abs(loss.derivative(a) - fd) <= rel_tol * std::max(1.0, std::abs(fd)))) {
      os << "phi'(" << a << ") = " << loss.derivative(a) << " but the finite difference gives " << fd;
      return os.str();
    }
  }
  return loss_contract_violation(loss);
}

// A ConstraintSet against dense reference matrices Q[k] (the terms it claims to represent):
// values <X, Q_k X>, targets' length, the adjoint identity of every linearisation
// <P(D), y> = <D, P*(y)>, and the curvature C = sum w |sym Q| against the eigen-split reference
// (exact in coupled mode; in row-split mode C may be a larger, majorising curvature).
inline std::string check_constraint_set(const ConstraintSet& set, const std::vector<Eigen::MatrixXd>& Q,
                                        Index rank = 3, unsigned seed = 1) {
  std::ostringstream os;
  const Index n = set.dimension(), m = set.size();
  if (static_cast<Index>(Q.size()) != m || set.targets().size() != m) {
    os << "size() = " << m << ", targets " << set.targets().size() << ", reference " << Q.size();
    return os.str();
  }
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  auto random = [&](Index rows, Index cols) {
    Matrix M(rows, cols);
    for (Index i = 0; i < rows; ++i)
      for (Index j = 0; j < cols; ++j) M(i, j) = normal(rng);
    return M;
  };
  const Matrix X = random(n, rank), D = random(n, rank);
  Vector values;
  set.evaluate(X, values);
  Eigen::MatrixXd C_ref = Eigen::MatrixXd::Zero(n, n);
  Vector w(m);
  for (Index k = 0; k < m; ++k) {
    const Eigen::MatrixXd S = 0.5 * (Q[k] + Q[k].transpose());
    const double ref = (S * X).cwiseProduct(X).sum();
    if (!(std::abs(values[k] - ref) <= 1e-10 * (1.0 + std::abs(ref)))) {
      os << "term " << k << ": <X, Q X> = " << values[k] << ", reference " << ref;
      return os.str();
    }
    w[k] = 0.5 + std::abs(normal(rng));
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(S);
    C_ref += w[k] * eig.eigenvectors() * eig.eigenvalues().cwiseAbs().asDiagonal() * eig.eigenvectors().transpose();
  }
  const Vector residuals = values - set.targets();
  for (SplitMode mode : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
    auto lin = set.make_linearization(mode);
    lin->update(X, w, residuals);
    Vector pd, y(lin->size());
    for (Index h = 0; h < y.size(); ++h) y[h] = normal(rng);
    Matrix adj, cd;
    lin->apply(D, pd);
    lin->apply_adjoint(y, adj);
    const double lhs = pd.dot(y), rhs = adj.cwiseProduct(D).sum();
    if (!(std::abs(lhs - rhs) <= 1e-10 * (1.0 + std::abs(lhs)))) {
      os << to_string(mode) << ": adjoint identity fails, <P(D), y> = " << lhs << ", <D, P*(y)> = " << rhs;
      return os.str();
    }
    lin->apply_curvature(D, cd);
    const Matrix cd_ref = C_ref * D;
    if (mode == SplitMode::kCoupled) {
      if (!((cd - cd_ref).norm() <= 1e-10 * (1.0 + cd_ref.norm()))) {
        os << "coupled: curvature C D differs from sum w |sym Q| D by " << (cd - cd_ref).norm();
        return os.str();
      }
    } else {
      // Row-split may bound the curvature by a larger one: <D, C D> >= <D, sum w |sym Q| D>.
      const double q = cd.cwiseProduct(D).sum(), q_ref = cd_ref.cwiseProduct(D).sum();
      if (!(q >= q_ref - 1e-10 * (1.0 + std::abs(q_ref)))) {
        os << "row-split: curvature <D, C D> = " << q << " is below <D, sum w |sym Q| D> = " << q_ref;
        return os.str();
      }
    }
  }
  return {};
}

}  // namespace sdprl::testing
