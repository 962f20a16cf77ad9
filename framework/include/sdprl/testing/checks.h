// Test helpers for plugin authors (as Ceres ships for users' own subclasses): call them from your
// own tests (GoogleTest or any other) on your Loss, ConstraintSet, Regularizer or whole Model. Each
// returns "" when the check passes, else a message naming the first failure. Header-only but for
// check_majoriser (in the library); no test framework needed.
//
//   EXPECT_EQ(sdprl::testing::check_loss(MyLoss(2.0)), "");
//   EXPECT_EQ(sdprl::testing::check_constraint_set(my_terms, dense_Q), "");
//   EXPECT_EQ(sdprl::testing::check_regularizer(my_A, dense_A), "");
//   EXPECT_EQ(sdprl::testing::check_majoriser(my_model, loss, {lambda, gamma}), "");
#pragma once

#include <Eigen/Dense>
#include <atomic>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/loss.h"
#include "sdprl/loss_check.h"
#include "sdprl/model.h"
#include "sdprl/regularizer.h"
#include "sdprl/solver.h"

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

namespace detail {
// Records what a RowConsumer is given, one slot per row (so concurrent calls for different rows
// do not race), for check_constraint_set.
struct RowRecorder final : RowConsumer {
  std::vector<std::atomic<int>> calls;
  std::vector<Index> degree;
  std::vector<std::vector<double>> a;
  std::vector<Matrix> gram;
  std::vector<double> curvature;
  Index rank;
  RowRecorder(Index n, Index r)
      : calls(static_cast<std::size_t>(n)), degree(static_cast<std::size_t>(n), -1), a(static_cast<std::size_t>(n)),
        gram(static_cast<std::size_t>(n)), curvature(static_cast<std::size_t>(n), 0.0), rank(r) {}
  void consume_row(Index i, const double* rows, Index deg, const double* block, double c) override {
    const auto k = static_cast<std::size_t>(i);
    if (calls.at(k)++ > 0) return;  // counted; the first call's data are kept
    degree[k] = deg;
    a[k].assign(rows, rows + deg * rank);
    gram[k] = Eigen::Map<const Matrix>(block, rank, rank);
    curvature[k] = c;
  }
};

// A smooth concave loss for check_constraint_set's test of OnePassUpdate: phi = log(1 + a).
class LogLoss final : public Loss {
 public:
  std::string name() const override { return "check-log"; }
  double value(double a) const override { return std::log1p(a); }
  double derivative(double a) const override { return 1.0 / (1.0 + a); }
};
}  // namespace detail

// A ConstraintSet against dense reference matrices Q[k] (the terms it claims to represent):
// values <X, Q_k X>, targets' length, the adjoint identity of every linearisation
// <P(D), y> = <D, P*(y)>, the curvature C = sum w |sym Q| against the eigen-split reference
// (exact in coupled mode; in row-split mode C may be a larger, majorising curvature), and the
// claims curvature_is_diagonal() and rows_decoupled() against C and P*P; and each capability a
// linearisation offers (TermLinearization::row_split(), one_pass(), external_weights(),
// gram_summary()) against the core maps: a RowSplitView's a_h against P and P*, a OnePassUpdate's
// b, C, P, Gram blocks, sums and rows against evaluate + loss + update(), ExternalWeights against
// H(0) = F(X_k), a GramSummary against gram_row_blocks().
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
    // H(0) = F(X_k): sum_h 2 w_h |b_h| = sum_tau w_tau |r_tau| (w_h = 1 when the weights are in P).
    const Vector* tw = term_weights(*lin);
    if (tw && (tw->size() != lin->size() || !(tw->minCoeff() >= 0.0))) {
      os << to_string(mode) << ": ExternalWeights::term_weights() has length " << tw->size() << " (expected " << lin->size()
         << ") or a negative entry";
      return os.str();
    }
    const double h0 = 2.0 * (tw ? lin->offsets().cwiseAbs().dot(*tw) : lin->offsets().cwiseAbs().sum());
    const double f0 = w.dot(residuals.cwiseAbs());
    if (!(std::abs(h0 - f0) <= 1e-10 * (1.0 + f0))) {
      os << to_string(mode) << ": sum_h 2 w_h |b_h| = " << h0 << " but sum_tau w_tau |r_tau| = " << f0
         << " (H(0) must equal F(X_k))";
      return os.str();
    }
    // The flags the ADMM trusts: a diagonal C must be diag(curvature_diagonal()), and with
    // rows_decoupled() P*P must be exactly the row blocks of gram_row_blocks() (the Xt-step then
    // solves them directly instead of running CG).
    Vector diag;
    lin->curvature_diagonal(diag);
    if (diag.size() != n) {
      os << to_string(mode) << ": curvature_diagonal has length " << diag.size() << ", expected " << n;
      return os.str();
    }
    if (lin->curvature_is_diagonal() && !((cd - diag.asDiagonal() * D).norm() <= 1e-10 * (1.0 + cd.norm()))) {
      os << to_string(mode) << ": curvature_is_diagonal() but C D != diag(curvature_diagonal()) D";
      return os.str();
    }
    if (lin->rows_decoupled()) {
      Matrix blocks, E = Matrix::Zero(n, rank), PtP, shared;
      lin->gram_row_blocks(blocks);
      const bool is_shared = shared_gram_block(*lin, shared);
      for (Index i = 0; i < n; ++i) {
        for (Index c = 0; c < rank; ++c) {
          E(i, c) = 1.0;
          lin->apply(E, pd);
          lin->apply_adjoint(pd, PtP);
          E(i, c) = 0.0;
          Matrix expected = Matrix::Zero(n, rank);
          expected.row(i) = blocks.middleRows(i * rank, rank).col(c).transpose();
          if (is_shared && !((blocks.middleRows(i * rank, rank) - shared).norm() <= 1e-12 * (1.0 + shared.norm()))) {
            os << to_string(mode) << ": GramSummary::shared_gram_block() differs from row block " << i << " of gram_row_blocks()";
            return os.str();
          }
          if (!((PtP - expected).norm() <= 1e-10 * (1.0 + PtP.norm()))) {
            os << to_string(mode) << ": rows_decoupled() but P*P e_(" << i << "," << c
               << ") differs from the row block of gram_row_blocks() by " << (PtP - expected).norm();
            return os.str();
          }
        }
      }
    }
    // A RowSplitView: only with rows_decoupled(), n + 1 offsets from 0 to size(), and its a_h give
    // P (<D, P_h> = <d_i, a_h>) and P* (row i of P*(y) = sum_h y_h a_h).
    if (const RowSplitView* view = lin->row_split()) {
      const Index* off = view->row_offsets();
      if (!lin->rows_decoupled() || off == nullptr || off[0] != 0 || off[n] != lin->size()) {
        os << to_string(mode) << ": a RowSplitView needs rows_decoupled() and row_offsets() from 0 to size() = "
           << lin->size();
        return os.str();
      }
      Vector ones = Vector::Ones(lin->size()), pd_ref;
      Matrix adj_ref;
      lin->apply(D, pd_ref);
      lin->apply_adjoint(ones, adj_ref);
      std::vector<double> a;
      for (Index i = 0; i < n; ++i) {
        const Index deg = off[i + 1] - off[i];
        if (deg < 0) {
          os << to_string(mode) << ": row_offsets() decrease at row " << i;
          return os.str();
        }
        a.assign(static_cast<std::size_t>(deg * rank), 0.0);
        if (deg > 0) view->row_vectors(i, a.data());
        Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(rank);
        for (Index q = 0; q < deg; ++q) {
          double dot = 0.0;
          for (Index c = 0; c < rank; ++c) {
            dot += D(i, c) * a[static_cast<std::size_t>(c * deg + q)];
            sum[c] += a[static_cast<std::size_t>(c * deg + q)];
          }
          const double want = pd_ref[off[i] + q];
          if (!(std::abs(dot - want) <= 1e-10 * (1.0 + std::abs(want)))) {
            os << to_string(mode) << ": row_vectors(" << i << ") gives <d_i, a_h> = " << dot << " for split term "
               << off[i] + q << " but apply() gives " << want;
            return os.str();
          }
        }
        if (!((sum - adj_ref.row(i)).norm() <= 1e-10 * (1.0 + adj_ref.row(i).norm()))) {
          os << to_string(mode) << ": row " << i << " of P*(1) differs from the sum of row_vectors(" << i << ")";
          return os.str();
        }
      }
    }
    // The traces of gram_row_blocks() (GramSummary's, or the generic ones): the row-scaled
    // preconditioner's input.
    {
      Matrix blocks;
      Vector traces;
      lin->gram_row_blocks(blocks);
      gram_row_traces(*lin, traces);
      if (traces.size() != n) {
        os << to_string(mode) << ": gram_row_traces has length " << traces.size() << ", expected " << n;
        return os.str();
      }
      for (Index i = 0; i < n; ++i) {
        const double t = blocks.middleRows(i * rank, rank).trace();
        if (!(std::abs(traces[i] - t) <= 1e-10 * (1.0 + std::abs(t)))) {
          os << to_string(mode) << ": gram_row_traces()[" << i << "] = " << traces[i]
             << " but the trace of row block " << i << " of gram_row_blocks() is " << t;
          return os.str();
        }
      }
    }
    // The one-pass rebuild, where offered, must leave the linearisation as the three steps do.
    const detail::LogLoss loss;
    auto fast = set.make_linearization(mode);
    double phi_sum = 0.0, weighted_abs = 0.0;
    // With a RowSplitView, it also hands every row to a RowConsumer: recorded here, compared below.
    const bool has_rows = fast->row_split() != nullptr;
    detail::RowRecorder recorder(n, rank);
    if (OnePassUpdate* one_pass = fast->one_pass()) {
      one_pass->update_with_loss(X, loss, &phi_sum, &weighted_abs, has_rows ? &recorder : nullptr);
      Vector phi, lw;
      const Vector abs_r = residuals.cwiseAbs();
      loss.evaluate(abs_r, phi, lw);
      auto slow = set.make_linearization(mode);
      slow->update(X, lw, residuals);
      Vector pd_fast, pd_slow, c_fast, c_slow;
      fast->apply(D, pd_fast);
      slow->apply(D, pd_slow);
      fast->curvature_diagonal(c_fast);
      slow->curvature_diagonal(c_slow);
      Matrix g_fast, g_slow;
      fast->gram_row_blocks(g_fast);
      slow->gram_row_blocks(g_slow);
      auto near = [](double a, double b) { return std::abs(a - b) <= 1e-10 * (1.0 + std::abs(b)); };
      if (!near(phi_sum, phi.sum()) || !near(weighted_abs, lw.dot(abs_r))) {
        os << to_string(mode) << ": OnePassUpdate::update_with_loss() sums " << phi_sum << ", " << weighted_abs
           << " but sum phi(|r|) = " << phi.sum() << ", sum w |r| = " << lw.dot(abs_r);
        return os.str();
      }
      if (fast->size() != slow->size() || !((fast->offsets() - slow->offsets()).norm() <= 1e-10 * (1.0 + slow->offsets().norm())) ||
          !((pd_fast - pd_slow).norm() <= 1e-10 * (1.0 + pd_slow.norm())) ||
          !((c_fast - c_slow).norm() <= 1e-10 * (1.0 + c_slow.norm())) ||
          !((g_fast - g_slow).norm() <= 1e-10 * (1.0 + g_slow.norm()))) {
        os << to_string(mode) << ": OnePassUpdate::update_with_loss() leaves b, P, C or the Gram blocks unlike update()";
        return os.str();
      }
      const Vector* w_fast = term_weights(*fast);
      const Vector* w_slow = term_weights(*slow);
      if ((w_fast == nullptr) != (w_slow == nullptr) ||
          (w_fast && !((*w_fast - *w_slow).norm() <= 1e-10 * (1.0 + w_slow->norm())))) {
        os << to_string(mode) << ": OnePassUpdate::update_with_loss() leaves the term weights unlike update()";
        return os.str();
      }
      if (has_rows) {
        const RowSplitView& view = *fast->row_split();
        const Index* offsets = view.row_offsets();
        std::vector<double> a;
        for (Index i = 0; i < n; ++i) {
          const Index deg = offsets[i + 1] - offsets[i];
          if (recorder.calls[static_cast<std::size_t>(i)].load() != 1 || recorder.degree[static_cast<std::size_t>(i)] != deg) {
            os << to_string(mode) << ": update_with_loss() gave row " << i << " to its RowConsumer "
               << recorder.calls[static_cast<std::size_t>(i)].load() << " times (deg "
               << recorder.degree[static_cast<std::size_t>(i)] << ", row_offsets() says " << deg << "), expected once";
            return os.str();
          }
          a.assign(static_cast<std::size_t>(deg * rank), 0.0);
          if (deg > 0) view.row_vectors(i, a.data());
          const Eigen::Map<const Vector> got(recorder.a[static_cast<std::size_t>(i)].data(), deg * rank);
          const Eigen::Map<const Vector> want(a.data(), deg * rank);
          const Matrix& gram_got = recorder.gram[static_cast<std::size_t>(i)];
          const Matrix gram_want = g_fast.middleRows(i * rank, rank);
          if (!((got - want).norm() <= 1e-12 * (1.0 + want.norm())) ||
              !((gram_got - gram_want).norm() <= 1e-12 * (1.0 + gram_want.norm())) ||
              !near(recorder.curvature[static_cast<std::size_t>(i)], c_fast[i])) {
            os << to_string(mode) << ": the RowConsumer saw row " << i
               << " with a_h, Gram block or C_ii unlike row_vectors(), gram_row_blocks() or curvature_diagonal()";
            return os.str();
          }
        }
      }
    }
  }
  return {};
}

// A Regularizer against its dense A (symmetric n x n): A X, A_+ X and diag(A_+) against the
// eigen-split A_+, positive_part_is_zero() only when A_+ = 0, and a diagonal majorant d, when
// offered, with diag(d) - A_+ PSD (else the row-split surrogate would not majorise).
inline std::string check_regularizer(const Regularizer& reg, const Eigen::MatrixXd& A, Index rank = 3,
                                     unsigned seed = 1) {
  std::ostringstream os;
  const Index n = A.rows();
  if (reg.dimension() != n) {
    os << "dimension() = " << reg.dimension() << ", reference " << n;
    return os.str();
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (A + A.transpose()));
  const Eigen::MatrixXd A_plus =
      eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * eig.eigenvectors().transpose();
  const double tol = 1e-10 * (1.0 + A.norm());
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  Matrix X(n, rank);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < rank; ++j) X(i, j) = normal(rng);
  Matrix out;
  reg.apply(X, out);
  if (!(out.rows() == n && out.cols() == rank && (out - A * X).norm() <= tol * (1.0 + X.norm()))) {
    os << "apply: A X differs from the reference";
    return os.str();
  }
  reg.apply_positive(X, out);
  if (!(out.rows() == n && out.cols() == rank && (out - A_plus * X).norm() <= tol * (1.0 + X.norm()))) {
    os << "apply_positive: A_+ X differs from the eigen-split reference (largest eigenvalue of A "
       << eig.eigenvalues().maxCoeff() << ")";
    return os.str();
  }
  if (reg.positive_part_is_zero() && A_plus.norm() > tol) {
    os << "positive_part_is_zero() but A has the positive eigenvalue " << eig.eigenvalues().maxCoeff();
    return os.str();
  }
  Vector d;
  reg.positive_diagonal(d);
  if (!(d.size() == n && (d - A_plus.diagonal()).norm() <= tol)) {
    os << "positive_diagonal differs from diag(A_+)";
    return os.str();
  }
  if (reg.positive_diagonal_majorant(d)) {
    if (d.size() != n) {
      os << "positive_diagonal_majorant: length " << d.size() << ", expected " << n;
      return os.str();
    }
    const Eigen::MatrixXd gap = Eigen::MatrixXd(d.asDiagonal()) - A_plus;
    const double low = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gap, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
    if (!(low >= -tol)) {
      os << "positive_diagonal_majorant: diag(d) - A_+ has the negative eigenvalue " << low;
      return os.str();
    }
  }
  return {};
}

// A whole Model with a loss: for both split modes and random iterates X_k, the surrogate of one MM
// step touches F at 0, H(0) = F(X_k), and majorises it, H(D) >= F(X_k + D), for random steps D at
// scales 1e-3 .. 3 (docs/method.md section 6, check 1). This is what every term family, regularizer
// and their mixture must satisfy for the MM to descend. (In the library: the surrogate is internal.)
SDPRL_API std::string check_majoriser(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                                      Index rank = 2, unsigned seed = 1, int steps_per_scale = 50);

}  // namespace sdprl::testing
