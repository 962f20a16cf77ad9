// The convex l1 problem of any model, in SDPA form (see l1_problem_as_sdpa in sdprl/io/sdpa.h).
#include <cmath>
#include <cstdio>
#include <string>

#include "sdprl/error.h"
#include "sdprl/io/sdpa.h"

namespace sdprl::io {

SdpaProblem l1_problem_as_sdpa(const Model& model, const RegularizationWeights& weights, Index max_dimension) {
  if (!model.terms) throw Error("", "export: the model has no terms");
  const ConstraintSet& terms = *model.terms;
  const Index n = terms.dimension(), m = terms.size();
  if (model.constraint)
    throw Error("", "export: the model constrains X (" + model.constraint->name() +
                        "); Z = X X^T with X in that set is not an SDP constraint, so the l1 problem has no "
                        "SDPA form");
  if (n > max_dimension)
    throw Error("", "export: n = " + std::to_string(n) + " exceeds " + std::to_string(max_dimension) +
                        "; the export probes each Q_tau as a dense n x n matrix (O(m n^2)) and an "
                        "interior-point solver could not take such a problem anyway");
  if (m < 1) throw Error("", "export: the model has no terms (SDPA needs m >= 1)");
  // The probe's work for the sparse families (see sdpa.h); beyond this budget it would run for
  // minutes to hours, and no SDP solver could take the result (its Schur complement is m x m).
  constexpr double kMaxProbeWork = 2e10;
  const double work = static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(n) +
                      static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(n);
  if (work > kMaxProbeWork) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.1e", work);
    throw Error("", "export: m = " + std::to_string(m) + " terms on n = " + std::to_string(n) +
                        " would take about m^2 n + m n^2 = " + buf +
                        " operations to probe (limit 2e10), and an SDP solver an m x m Schur complement; "
                        "export a smaller instance");
  }
  if (!(weights.lambda >= 0.0) || !(weights.gamma >= 0.0) || !std::isfinite(weights.lambda) ||
      !std::isfinite(weights.gamma))
    throw Error("", "export: lambda and gamma must be finite and >= 0");

  SdpaProblem p;
  p.m = m;
  p.blocks = {n, -2 * m};
  p.c = terms.targets();

  // F_0 (matrix 0) first: -(gamma/2 A + lambda/2 I) on block 1, -1 on the 2m slacks of block 2.
  Matrix F0 = Matrix::Zero(n, n);
  if (model.quadratic && weights.gamma != 0.0) {
    Matrix A;
    model.quadratic->apply(Matrix::Identity(n, n), A);
    if (A.rows() != n || A.cols() != n) throw Error("", "export: the regularizer's A is not n x n");
    // A is symmetric by contract; symmetrizing only removes rounding of its apply().
    F0 = -0.25 * weights.gamma * (A + A.transpose());
  }
  F0.diagonal().array() -= 0.5 * weights.lambda;
  auto add_upper = [&p](std::int32_t matrix, const Matrix& S) {
    for (Index i = 0; i < S.rows(); ++i)
      for (Index j = i; j < S.cols(); ++j)
        if (S(i, j) != 0.0)
          p.entries.push_back({matrix, 0, static_cast<std::int32_t>(i), static_cast<std::int32_t>(j), S(i, j), 0});
  };
  add_upper(0, F0);
  for (Index h = 0; h < 2 * m; ++h)
    p.entries.push_back({0, 1, static_cast<std::int32_t>(h), static_cast<std::int32_t>(h), -1.0, 0});

  // F_tau: sym(Q_tau) probed by the adjoint at y = e_tau, V = I (exact: every other term enters
  // with coefficient 0), and the slack pair tr(Z Q) - p_tau + q_tau = t_tau.
  const Matrix I = Matrix::Identity(n, n);
  Vector y = Vector::Zero(m);
  Matrix S;
  for (Index k = 0; k < m; ++k) {
    y[k] = 1.0;
    terms.apply_adjoint_sym(y, I, S);
    y[k] = 0.0;
    if (!S.allFinite()) throw Error("", "export: term " + std::to_string(k + 1) + " has a non-finite entry");
    const auto matrix = static_cast<std::int32_t>(k + 1);
    // S is symmetric up to rounding; its upper triangle and lower triangle are averaged.
    const Matrix Ssym = 0.5 * (S + S.transpose());
    add_upper(matrix, Ssym);
    p.entries.push_back({matrix, 1, static_cast<std::int32_t>(k), static_cast<std::int32_t>(k), -1.0, 0});
    p.entries.push_back({matrix, 1, static_cast<std::int32_t>(m + k), static_cast<std::int32_t>(m + k), 1.0, 0});
  }
  return p;
}

}  // namespace sdprl::io
