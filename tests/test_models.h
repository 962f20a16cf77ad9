// Small random models for the mathematical tests (docs/method.md section 6).
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <atomic>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sdprl/config.h"
#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/plugin_host.h"
#include "sdprl/regularizer.h"
#include "sdprl/solver.h"
#include "sdprl/terms/dense_terms.h"
#include "sdprl/terms/distance_terms.h"
#include "sdprl/terms/entry_terms.h"

namespace sdprl::testing_support {

// A dense symmetric A with its positive part from an eigen-split; indefinite in general.
class DenseRegularizer final : public Regularizer {
 public:
  explicit DenseRegularizer(Eigen::MatrixXd A) : A_(0.5 * (A + A.transpose())) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(A_);
    A_plus_ = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * eig.eigenvectors().transpose();
  }
  std::string name() const override { return "dense-test"; }
  Index dimension() const override { return A_.rows(); }
  void apply(const Matrix& X, Matrix& out) const override { out = A_ * X; }
  bool positive_part_is_zero() const override { return A_plus_.norm() == 0.0; }
  void apply_positive(const Matrix& X, Matrix& out) const override { out = A_plus_ * X; }
  void positive_diagonal(Vector& d) const override { d = A_plus_.diagonal(); }
  // Gershgorin: diag(sum_j |A+_ij|) - A_+ is diagonally dominant, hence PSD.
  bool positive_diagonal_majorant(Vector& d) const override {
    d = A_plus_.cwiseAbs().rowwise().sum();
    return true;
  }

 private:
  Eigen::MatrixXd A_, A_plus_;
};

struct EntryData {
  Index n = 0;
  std::vector<std::int32_t> rows, cols;
  Vector targets;
};

// m random entries of an n x n matrix (both orders and diagonal entries occur), with targets of a
// random rank-2 matrix plus a few large outliers.
inline EntryData random_entries(Index n, Index m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> idx(0, static_cast<int>(n) - 1);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd V(n, 2);
  for (Index i = 0; i < n; ++i) V(i, 0) = normal(rng), V(i, 1) = normal(rng);
  EntryData d;
  d.n = n;
  d.targets.resize(m);
  for (Index k = 0; k < m; ++k) {
    const int i = idx(rng), j = idx(rng);
    d.rows.push_back(i);
    d.cols.push_back(j);
    d.targets[k] = V.row(i).dot(V.row(j)) + (k % 7 == 0 ? 8.0 * normal(rng) : 0.1 * normal(rng));
  }
  return d;
}

// random_entries with each unordered pair kept once: (i, j) and (j, i) with different targets
// would make Z_ij free between them at an l1 optimum (|z - t_1| + |z - t_2| is flat there), so Z
// would not be unique.
inline EntryData unique_pair_entries(Index n, Index m, std::uint64_t seed) {
  const EntryData all = random_entries(n, m, seed);
  EntryData d;
  d.n = n;
  std::set<std::pair<int, int>> seen;
  std::vector<double> t;
  for (std::size_t k = 0; k < all.rows.size(); ++k) {
    if (!seen.insert(std::minmax(all.rows[k], all.cols[k])).second) continue;
    d.rows.push_back(all.rows[k]);
    d.cols.push_back(all.cols[k]);
    t.push_back(all.targets[static_cast<Index>(k)]);
  }
  d.targets = Eigen::Map<Vector>(t.data(), static_cast<Index>(t.size()));
  return d;
}

inline std::shared_ptr<EntryTerms> entry_terms(const EntryData& d) {
  return std::make_shared<EntryTerms>(d.n, d.rows, d.cols, d.targets);
}

// The entries as dense matrices Q = e_i e_j^T.
inline std::vector<Eigen::MatrixXd> entry_matrices(const EntryData& d) {
  std::vector<Eigen::MatrixXd> Q;
  for (std::size_t k = 0; k < d.rows.size(); ++k) {
    Eigen::MatrixXd q = Eigen::MatrixXd::Zero(d.n, d.n);
    q(d.rows[k], d.cols[k]) = 1.0;
    Q.push_back(q);
  }
  return Q;
}

// The same entries as dense terms.
inline std::shared_ptr<DenseTerms> dense_terms(const EntryData& d) {
  return std::make_shared<DenseTerms>(d.n, entry_matrices(d), d.targets);
}

// m random distance terms (i != j) with targets of squared distances of a random 2-D embedding plus
// a few large outliers.
inline EntryData random_pairs(Index n, Index m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> idx(0, static_cast<int>(n) - 1);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd V(n, 2);
  for (Index i = 0; i < n; ++i) V(i, 0) = normal(rng), V(i, 1) = normal(rng);
  EntryData d;
  d.n = n;
  d.targets.resize(m);
  for (Index k = 0; k < m; ++k) {
    int i = idx(rng), j = idx(rng);
    while (j == i) j = idx(rng);
    d.rows.push_back(i);
    d.cols.push_back(j);
    d.targets[k] = (V.row(i) - V.row(j)).squaredNorm() + (k % 7 == 0 ? 8.0 * std::abs(normal(rng)) : 0.1 * normal(rng));
  }
  return d;
}

inline std::shared_ptr<DistanceTerms> distance_terms(const EntryData& d) {
  return std::make_shared<DistanceTerms>(d.n, d.rows, d.cols, d.targets);
}

// The same pairs as dense matrices Q = (e_i - e_j)(e_i - e_j)^T.
inline std::vector<Eigen::MatrixXd> distance_matrices(const EntryData& d) {
  std::vector<Eigen::MatrixXd> Q;
  for (std::size_t k = 0; k < d.rows.size(); ++k) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(d.n);
    e[d.rows[k]] = 1.0;
    e[d.cols[k]] = -1.0;
    Q.push_back(e * e.transpose());
  }
  return Q;
}

// General dense terms: random non-symmetric Q (indefinite sym part).
inline std::shared_ptr<DenseTerms> random_dense_terms(Index n, Index m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<Eigen::MatrixXd> Q;
  Vector t(m);
  for (Index k = 0; k < m; ++k) {
    Eigen::MatrixXd q(n, n);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) q(i, j) = normal(rng);
    Q.push_back(q);
    t[k] = 3.0 * normal(rng);
  }
  return std::make_shared<DenseTerms>(n, Q, t);
}

inline Matrix random_matrix(Index n, Index r, double scale, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, scale);
  Matrix X(n, r);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < r; ++j) X(i, j) = normal(rng);
  return X;
}

// The shipped loss plugins, loaded from the build tree.
inline std::shared_ptr<Loss> load_loss(const std::string& name) {
  static PluginHost host({SDPRL_PLUGIN_BUILD_DIR});
  return host.create_loss(name, ConfigTable());
}

// The state an MM run from X0 checkpoints when an interrupt stops it at the end of MM step k (for
// resume tests; `options` may carry a checkpoint interval, but one that is due before k would be a
// second state and fails the test).
inline SolverState state_at_interrupt(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                                      SolverOptions options, const Matrix& X0, int k) {
  std::atomic<bool> stop{false};
  options.interrupt = &stop;
  std::vector<SolverState> saved;
  Matrix X = X0;
  const Summary s = solve(
      model, loss, weights, options, X,
      [&](const TraceRow& row, const Matrix&) {
        if (row.mm_iteration == k) stop = true;
        return true;
      },
      nullptr, [&](const SolverState& st) { saved.push_back(st); });
  EXPECT_EQ(s.status, SolverStatus::kInterrupted);
  EXPECT_EQ(saved.size(), 1u);
  return saved.empty() ? SolverState{} : saved.front();
}

// Runs the same MM (tight CG) on two models from the same start and expects the same iterates:
// same ADMM counts per step, same objectives, same final factor (docs/method.md check 5).
inline void expect_same_iterates(const Model& a, const Model& b, const char* loss_name, int steps, unsigned seed,
                                 SplitMode split = SplitMode::kCoupled,
                                 const RegularizationWeights& w = {0.4, 0.0}) {
  auto loss = load_loss(loss_name);
  std::mt19937_64 rng(seed);
  const Matrix X0 = random_matrix(a.terms->dimension(), 2, 1.0, rng);
  SolverOptions o;
  o.rank = 2;
  o.verbose = false;
  o.init = InitKind::kGiven;
  o.max_mm_iterations = steps;
  o.relative_tolerance = 0.0;
  o.admm.split = split;
  // CG solved tightly: the same iterates from two representations of the terms. (The linearised
  // step's iterates depend on the row blocks' majorant scale, which each representation estimates.)
  o.admm.coupled_step = CoupledStep::kCg;
  o.admm.cg_tolerance = 1e-12;
  o.admm.cg_max_iterations = 2000;
  Matrix Xa = X0, Xb = X0;
  const Summary sa = solve(a, *loss, w, o, Xa);
  const Summary sb = solve(b, *loss, w, o, Xb);
  ASSERT_EQ(sa.trace.size(), sb.trace.size());
  for (std::size_t k = 0; k < sa.trace.size(); ++k) {
    EXPECT_EQ(sa.trace[k].admm_iterations, sb.trace[k].admm_iterations) << "MM step " << k + 1;
    EXPECT_NEAR(sa.trace[k].objective, sb.trace[k].objective, 1e-8 * std::abs(sb.trace[k].objective));
  }
  EXPECT_LE((Xa - Xb).norm(), 1e-7 * Xb.norm());
}

}  // namespace sdprl::testing_support
