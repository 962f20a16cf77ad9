// The sparse matrix term family (sdprl/terms/sparse_matrix_terms.h) and the indefinite sparse
// regulariser (sdprl/regularizers/symmetric_sparse_regularizer.h): the plugin-author checks of
// sdprl/testing/checks.h, the majoriser checks of docs/method.md section 6 (check 1 on random and
// on targeted steps), and agreement with the dense, entry and distance families that represent
// the same Q (check 5).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "sdprl/error.h"
#include "sdprl/regularizers/symmetric_sparse_regularizer.h"
#include "sdprl/solver.h"
#include "admm/admm.h"
#include "mm/surrogate.h"
#include "sdprl/terms/sparse_matrix_terms.h"
#include "sdprl/testing/checks.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;
using Entry = SparseMatrixTerms::Entry;

// Random sparse, non-symmetric Q_k: 1 to 6 entries each, some only on the diagonal, one with a
// support above kMaxExactSupport when `wide` (it then keeps the Gershgorin bound).
struct SparseData {
  Index n = 0;
  std::vector<std::vector<Entry>> Q;
  Vector t;
};

SparseData random_sparse(Index n, Index m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> pick(0, static_cast<int>(n) - 1);
  SparseData d;
  d.n = n;
  d.Q.resize(static_cast<std::size_t>(m));
  d.t.resize(m);
  for (Index k = 0; k < m; ++k) {
    const int entries = 1 + static_cast<int>(k % 6);
    for (int e = 0; e < entries; ++e) {
      const int i = pick(rng);
      const int j = k % 4 == 0 ? i : pick(rng);  // every 4th term diagonal
      d.Q[k].push_back({i, j, normal(rng)});
    }
    d.t[k] = 2.0 * normal(rng);
  }
  return d;
}

std::vector<Eigen::MatrixXd> dense_of(const SparseData& d) {
  std::vector<Eigen::MatrixXd> out;
  for (const auto& q : d.Q) {
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(d.n, d.n);
    for (const Entry& e : q) M(e.row, e.col) += e.value;
    out.push_back(M);
  }
  return out;
}

TEST(SparseMatrixTerms, PassesThePluginAuthorChecks) {
  const SparseData d = random_sparse(9, 40, 1);
  const SparseMatrixTerms terms(d.n, d.Q, d.t);
  EXPECT_EQ(testing::check_constraint_set(terms, dense_of(d)), "");
  EXPECT_EQ(testing::check_constraint_set(terms, dense_of(d), 2, 7), "");
  // Entry- and distance-shaped Q give the same checks.
  const EntryData e = random_entries(8, 30, 2);
  std::vector<std::vector<Entry>> eq;
  for (std::size_t k = 0; k < e.rows.size(); ++k) eq.push_back({{e.rows[k], e.cols[k], 1.0}});
  EXPECT_EQ(testing::check_constraint_set(SparseMatrixTerms(e.n, eq, e.targets), dense_terms(e)->symmetric_parts()), "");
}

// Values, adjoint and exact coupled curvature against DenseTerms on the same Q (the dense family
// eigen-splits every sym(Q)); a support wider than kMaxExactSupport (200 rows here) keeps the
// Gershgorin diagonal.
TEST(SparseMatrixTerms, CoupledCurvatureIsTheExactAbsoluteValue) {
  const SparseData d = random_sparse(10, 25, 3);
  const SparseMatrixTerms sparse(d.n, d.Q, d.t);
  const DenseTerms dense(d.n, dense_of(d), d.t);
  std::mt19937_64 rng(4);
  const Matrix X = random_matrix(d.n, 3, 1.0, rng), D = random_matrix(d.n, 3, 1.0, rng);
  Vector vs, vd;
  sparse.evaluate(X, vs);
  dense.evaluate(X, vd);
  EXPECT_LE((vs - vd).norm(), 1e-12 * vd.norm());
  Vector w = Vector::Random(d.t.size()).cwiseAbs().array() + 0.1;
  const Vector r = vs - d.t;
  auto ls = sparse.make_linearization(SplitMode::kCoupled);
  auto ld = dense.make_linearization(SplitMode::kCoupled);
  ls->update(X, w, r);
  ld->update(X, w, r);
  Matrix cs, cd;
  ls->apply_curvature(D, cs);
  ld->apply_curvature(D, cd);
  EXPECT_LE((cs - cd).norm(), 1e-12 * cd.norm());
  Vector ps, pd;
  ls->apply(D, ps);
  ld->apply(D, pd);
  EXPECT_LE((ps - pd).norm(), 1e-12 * pd.norm());
  EXPECT_LE((ls->offsets() - ld->offsets()).norm(), 1e-15 * ld->offsets().norm());
  Matrix gs, gd;
  ls->gram_row_blocks(gs);
  ld->gram_row_blocks(gd);
  EXPECT_LE((gs - gd).norm(), 1e-12 * gd.norm());

  std::vector<std::vector<Entry>> wide(1);
  for (int i = 0; i + 1 < 200; ++i) wide[0].push_back({i, i + 1, 1.0});
  const SparseMatrixTerms big(200, wide, Vector::Ones(1));
  auto lb = big.make_linearization(SplitMode::kCoupled);
  lb->update(Matrix::Ones(200, 1), Vector::Constant(1, 2.0), Vector::Zero(1));
  EXPECT_TRUE(lb->curvature_is_diagonal());  // the path's G: 1/2 at both ends, 1 inside, times w
  Vector c;
  lb->curvature_diagonal(c);
  EXPECT_EQ(c[0], 1.0);
  EXPECT_EQ(c[100], 2.0);
  EXPECT_EQ(c[199], 1.0);
  EXPECT_FALSE(ls->curvature_is_diagonal());
}

// Row split: -G <= S <= G for the Gershgorin diagonal G of every term, also where G does not
// dominate |S| (the path S = sym(e_1 e_2^T + e_2 e_3^T): G - |S| is indefinite).
TEST(SparseMatrixTerms, GershgorinBoundsEveryTermsSymmetricPart) {
  SparseData d = random_sparse(9, 40, 5);
  d.Q.push_back({{0, 1, 1.0}, {1, 2, 1.0}});
  d.t.conservativeResize(d.t.size() + 1);
  d.t[d.t.size() - 1] = 0.3;
  const SparseMatrixTerms terms(d.n, d.Q, d.t);
  const auto Q = dense_of(d);
  double worst_dominance = 0.0;
  for (Index k = 0; k < terms.size(); ++k) {
    Eigen::VectorXd g = Eigen::VectorXd::Zero(d.n);
    for (Index q = terms.support_begin(k); q < terms.support_begin(k + 1); ++q)
      g[terms.support_rows()[q]] = terms.gershgorin()[q];
    const Eigen::MatrixXd S = 0.5 * (Q[k] + Q[k].transpose());
    const Eigen::MatrixXd G = g.asDiagonal();
    EXPECT_GE(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G - S).eigenvalues().minCoeff(), -1e-12) << k;
    EXPECT_GE(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G + S).eigenvalues().minCoeff(), -1e-12) << k;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(S);
    const Eigen::MatrixXd absS = eig.eigenvectors() * eig.eigenvalues().cwiseAbs().asDiagonal() * eig.eigenvectors().transpose();
    worst_dominance = std::min(worst_dominance, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G - absS).eigenvalues().minCoeff());
  }
  // The path term shows that G is a bound of S, not of |S|.
  EXPECT_LT(worst_dominance, -0.1);
}

struct SurrogateCase {
  const char* loss;
  SplitMode split;
};

void PrintTo(const SurrogateCase& c, std::ostream* os) { *os << c.loss << "/" << to_string(c.split); }

class SparseMatrixSurrogate : public ::testing::TestWithParam<SurrogateCase> {};

// Check 1: H(D) >= F(X_k + D) on random steps at several scales and H(0) = F(X_k), with an
// indefinite sparse A (its A_+ from the regulariser's component eigen-splits).
TEST_P(SparseMatrixSurrogate, MajorisesAndTouches) {
  const SparseData d = random_sparse(8, 30, 6);
  Model model;
  model.terms = std::make_shared<SparseMatrixTerms>(d.n, d.Q, d.t);
  std::vector<Eigen::Triplet<double>> a;
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal;
  for (int i = 0; i < 8; ++i) a.emplace_back(i, i, normal(rng));
  for (auto [i, j] : std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {4, 6}, {5, 7}}) {
    const double v = normal(rng);
    a.emplace_back(i, j, v);
    a.emplace_back(j, i, v);
  }
  Eigen::SparseMatrix<double> A(8, 8);
  A.setFromTriplets(a.begin(), a.end());
  model.quadratic = std::make_shared<SymmetricSparseRegularizer>(A);
  const RegularizationWeights weights{0.3, 0.7};
  auto loss = load_loss(GetParam().loss);
  const Index r = 2;
  int checked = 0;
  for (int trial = 0; trial < 5; ++trial) {
    const Matrix Xk = random_matrix(d.n, r, 1.0, rng);
    Surrogate H(model, *loss, weights, GetParam().split, r);
    H.update(Xk);
    const double f0 = objective(model, *loss, weights, Xk);
    ASSERT_NEAR(H.value(Matrix::Zero(d.n, r)), f0, 1e-9 * std::abs(f0));
    for (double scale : {1e-3, 1e-2, 0.1, 0.5, 1.0, 3.0}) {
      for (int s = 0; s < 100; ++s) {
        const Matrix D = random_matrix(d.n, r, scale, rng);
        const double f = objective(model, *loss, weights, Xk + D);
        ASSERT_GE(H.value(D), f - 1e-9 * std::abs(f)) << "scale " << scale;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3000);
}

// Check 1, targeted: on a single path term at a point where its residual and linear part vanish
// (X_k = 0, t = 0), F(D) = phi(|<D, S D>|), so only the curvature bound holds H above F; the steps
// are S's eigenvectors (the directions where a looser or wrong bound would fail first).
TEST_P(SparseMatrixSurrogate, CurvatureAloneHoldsTheBound) {
  const std::vector<std::vector<Entry>> Q = {{{0, 1, 1.0}, {1, 2, 1.0}, {2, 2, -0.5}}};
  Model model;
  model.terms = std::make_shared<SparseMatrixTerms>(3, Q, Vector::Zero(1));
  auto loss = load_loss(GetParam().loss);
  const RegularizationWeights weights{0.0, 0.0};
  Surrogate H(model, *loss, weights, GetParam().split, 1);
  H.update(Matrix::Zero(3, 1));
  Eigen::Matrix3d S;
  S << 0, 0.5, 0, 0.5, 0, 0.5, 0, 0.5, -0.5;
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(S);
  for (int v = 0; v < 3; ++v) {
    for (double scale : {1e-2, 1.0, 10.0}) {
      const Matrix D = scale * eig.eigenvectors().col(v);
      const double f = objective(model, *loss, weights, D);
      EXPECT_GE(H.value(D), f - 1e-12 * std::abs(f)) << v << " " << scale;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Checks, SparseMatrixSurrogate,
                         ::testing::Values(SurrogateCase{"l1", SplitMode::kRowSplit},
                                           SurrogateCase{"l1", SplitMode::kCoupled},
                                           SurrogateCase{"leaky-mcp", SplitMode::kRowSplit},
                                           SurrogateCase{"leaky-mcp", SplitMode::kCoupled}),
                         [](const auto& info) {
                           return std::string(info.param.loss == std::string("l1") ? "l1" : "leaky_mcp") + "_" +
                                  (info.param.split == SplitMode::kRowSplit ? "row_split" : "coupled");
                         });

// Check 5: general sparse Q, coupled, against DenseTerms (the same surrogate exactly).
TEST(SparseMatrixTerms, SameIteratesAsDenseTerms) {
  const SparseData d = random_sparse(8, 20, 12);
  Model sparse, dense;
  sparse.terms = std::make_shared<SparseMatrixTerms>(d.n, d.Q, d.t);
  dense.terms = std::make_shared<DenseTerms>(d.n, dense_of(d), d.t);
  expect_same_iterates(sparse, dense, "leaky-mcp", 12, 11);
}

// The row split reproduces the entry and distance families' own row splits.
TEST(SparseMatrixTerms, RowSplitIsTheEntryAndDistanceRowSplit) {
  const EntryData e = random_entries(12, 60, 13);
  std::vector<std::vector<Entry>> eq, dq;
  for (std::size_t k = 0; k < e.rows.size(); ++k) eq.push_back({{e.rows[k], e.cols[k], 1.0}});
  Model a, b;
  a.terms = std::make_shared<SparseMatrixTerms>(e.n, eq, e.targets);
  b.terms = entry_terms(e);
  expect_same_iterates(a, b, "leaky-mcp", 12, 11, SplitMode::kRowSplit);

  const EntryData p = random_pairs(10, 40, 14);
  for (std::size_t k = 0; k < p.rows.size(); ++k)
    dq.push_back({{p.rows[k], p.rows[k], 1.0}, {p.cols[k], p.cols[k], 1.0}, {p.rows[k], p.cols[k], -2.0}});
  Model c, dd;
  c.terms = std::make_shared<SparseMatrixTerms>(p.n, dq, p.targets);
  dd.terms = distance_terms(p);
  expect_same_iterates(c, dd, "l1", 10, 11, SplitMode::kRowSplit);
}

TEST(SparseMatrixTerms, RefusesBadTerms) {
  const Vector t = Vector::Ones(1);
  EXPECT_THROW(SparseMatrixTerms(3, {{{0, 3, 1.0}}}, t), Error);
  EXPECT_THROW(SparseMatrixTerms(3, {{{0, 1, std::nan("")}}}, t), Error);
  EXPECT_THROW(SparseMatrixTerms(3, {{{0, 1, 1.0}}}, Vector::Ones(2)), Error);
  try {
    SparseMatrixTerms(3, {{{0, 1, 1.0}, {1, 0, -1.0}}}, t);  // antisymmetric: sym(Q) = 0
    ADD_FAILURE() << "a zero sym(Q) was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("sym(Q) is zero"), std::string::npos) << err.what();
  }
}

// A_+ against a dense eigen-split; the majorant diag(d) dominates A_+; an NSD A has A_+ = 0.
TEST(SymmetricSparseRegularizer, PositivePartAndMajorant) {
  std::mt19937_64 rng(21);
  std::normal_distribution<double> normal;
  const Index n = 12;
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
  for (Index i = 0; i < n; ++i) dense(i, i) = normal(rng);
  // Two connected blocks {0..4} and {6..9}, singletons elsewhere.
  for (auto [i, j] : std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}, {6, 7}, {7, 8}, {8, 9}}) {
    dense(i, j) = dense(j, i) = normal(rng);
  }
  const SymmetricSparseRegularizer reg(dense.sparseView());
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(dense);
  const Eigen::MatrixXd plus = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * eig.eigenvectors().transpose();
  Matrix I = Matrix::Identity(n, n), out, ax;
  reg.apply_positive(I, out);
  EXPECT_LE((Eigen::MatrixXd(out) - plus).norm(), 1e-12 * plus.norm());
  reg.apply(I, ax);
  EXPECT_LE((Eigen::MatrixXd(ax) - dense).norm(), 1e-15 * dense.norm());
  Vector d, pd;
  ASSERT_TRUE(reg.positive_diagonal_majorant(d));
  EXPECT_GE(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(Eigen::MatrixXd(d.asDiagonal()) - plus).eigenvalues().minCoeff(), -1e-12);
  reg.positive_diagonal(pd);
  EXPECT_LE((pd - plus.diagonal()).norm(), 1e-12);
  EXPECT_FALSE(reg.positive_part_is_zero());

  // -(B B^T) is negative semidefinite: A_+ = 0.
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(n, 2);
  B(0, 0) = B(1, 0) = B(2, 1) = 1.0;
  const SymmetricSparseRegularizer nsd(Eigen::MatrixXd(-B * B.transpose()).sparseView());
  EXPECT_TRUE(nsd.positive_part_is_zero());
  Eigen::MatrixXd asym = Eigen::MatrixXd::Zero(3, 3);
  asym(0, 1) = 1.0;
  EXPECT_THROW(SymmetricSparseRegularizer(asym.sparseView()), Error);
}

}  // namespace
}  // namespace sdprl
