// Tests of the kNN graph, the graph Laplacian and the sparse (Laplacian) regulariser.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sdprl/error.h"
#include "sdprl/graph/knn_graph.h"
#include "sdprl/regularizer.h"
#include "sdprl/regularizers/sparse_regularizer.h"

using sdprl::Error;
using sdprl::Index;
using sdprl::Matrix;
using sdprl::SparseRegularizer;
using sdprl::Vector;
using sdprl::graph::graph_laplacian;
using sdprl::graph::knn_pairs;
using Edges = std::vector<std::pair<Index, Index>>;
using Sparse = Eigen::SparseMatrix<double>;

namespace {

Matrix column(std::initializer_list<double> xs) {
  Matrix P(static_cast<Index>(xs.size()), 1);
  Index i = 0;
  for (double x : xs) P(i++, 0) = x;
  return P;
}

// The symmetrised kNN edges by brute force with exact distances.
Edges brute_force_knn(const Matrix& P, Index k) {
  const Index n = P.rows();
  std::set<std::pair<Index, Index>> edges;
  for (Index i = 0; i < n; ++i) {
    std::vector<std::pair<double, Index>> c;
    for (Index j = 0; j < n; ++j) {
      if (j != i) c.emplace_back((P.row(i) - P.row(j)).squaredNorm(), j);
    }
    std::sort(c.begin(), c.end());
    for (Index t = 0; t < k; ++t) {
      const Index j = c[static_cast<std::size_t>(t)].second;
      edges.emplace(std::min(i, j), std::max(i, j));
    }
  }
  return Edges(edges.begin(), edges.end());
}

double smallest_eigenvalue(const Eigen::MatrixXd& M) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(M, Eigen::EigenvaluesOnly);
  return eig.eigenvalues().minCoeff();
}

// A random graph on n vertices: a path (connected) plus random extra edges, each once.
Edges random_graph(Index n, int extra, std::mt19937_64& rng) {
  std::set<std::pair<Index, Index>> edges;
  for (Index i = 0; i + 1 < n; ++i) edges.emplace(i, i + 1);
  std::uniform_int_distribution<Index> vertex(0, n - 1);
  for (int t = 0; t < extra; ++t) {
    const Index i = vertex(rng), j = vertex(rng);
    if (i != j) edges.emplace(std::min(i, j), std::max(i, j));
  }
  return Edges(edges.begin(), edges.end());
}

template <class F>
void expect_error(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error thrown, expected ..." << part << "...";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find(part), std::string::npos) << e.message();
  }
}

TEST(KnnPairs, PointsOnALine) {
  const Matrix P = column({0, 1, 3, 7});
  EXPECT_EQ(knn_pairs(P, 1), (Edges{{0, 1}, {1, 2}, {2, 3}}));
  // k = 2: 0 -> {1, 3}, 1 -> {0, 3}, 3 -> {1, 0}, 7 -> {3, 1} (as values).
  EXPECT_EQ(knn_pairs(P, 2), (Edges{{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}}));
  // k = n - 1: the complete graph.
  EXPECT_EQ(knn_pairs(P, 3), (Edges{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}));
}

TEST(KnnPairs, TiesGoToTheSmallerIndex) {
  // The corners of the unit square: each has two nearest neighbours at distance 1.
  Matrix P(4, 2);
  P << 0, 0,  //
      1, 0,   //
      0, 1,   //
      1, 1;
  // 0 -> 1 (not 2), 1 -> 0 (not 3), 2 -> 0 (not 3), 3 -> 1 (not 2).
  EXPECT_EQ(knn_pairs(P, 1), (Edges{{0, 1}, {0, 2}, {1, 3}}));
  // Shuffled so that the order of the scan is not the answer: -1 and 1 tie around 0.
  EXPECT_EQ(knn_pairs(column({1, 0, -1}), 1), (Edges{{0, 1}, {1, 2}}));
}

TEST(KnnPairs, DuplicatePointsAreNeighbours) {
  EXPECT_EQ(knn_pairs(column({2, 2, 5, 5.5}), 1), (Edges{{0, 1}, {2, 3}}));
  // Three copies: each picks the smallest other index among those at distance 0.
  EXPECT_EQ(knn_pairs(column({4, 4, 4, 10}), 1), (Edges{{0, 1}, {0, 2}, {0, 3}}));
  Matrix P(3, 2);
  P << 1, 2, 1, 2, 1, 2;
  EXPECT_EQ(knn_pairs(P, 1), (Edges{{0, 1}, {0, 2}}));
}

TEST(KnnPairs, MatchesBruteForceAcrossBlocks) {
  // More than one block of 256 rows.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  Matrix P(600, 5);
  for (Index i = 0; i < P.size(); ++i) P.data()[i] = normal(rng);
  for (Index k : {1, 4, 10}) {
    const Edges edges = knn_pairs(P, k);
    EXPECT_EQ(edges, brute_force_knn(P, k)) << "k = " << k;
    EXPECT_TRUE(std::is_sorted(edges.begin(), edges.end()));
    for (const auto& [i, j] : edges) EXPECT_LT(i, j);
    // Every vertex has at least k neighbours in the symmetrised graph.
    std::vector<int> degree(600, 0);
    for (const auto& [i, j] : edges) {
      ++degree[static_cast<std::size_t>(i)];
      ++degree[static_cast<std::size_t>(j)];
    }
    EXPECT_GE(*std::min_element(degree.begin(), degree.end()), k);
  }
}

TEST(KnnPairs, Errors) {
  const Matrix P = column({0, 1, 3});
  expect_error([&] { knn_pairs(P, 0); }, "expected 1 <= k <= n - 1 = 2");
  expect_error([&] { knn_pairs(P, 3); }, "got k = 3");
  expect_error([&] { knn_pairs(column({0, NAN, 1}), 1); }, "NaN/Inf");
}

TEST(GraphLaplacian, PathGraph) {
  const Sparse L = graph_laplacian(4, Edges{{0, 1}, {2, 1}, {2, 3}});
  Eigen::MatrixXd expected(4, 4);
  expected << 1, -1, 0, 0,  //
      -1, 2, -1, 0,         //
      0, -1, 2, -1,         //
      0, 0, -1, 1;
  EXPECT_EQ(Eigen::MatrixXd(L), expected);
  // An isolated vertex gives a zero row.
  const Sparse L5 = graph_laplacian(5, Edges{{0, 1}});
  EXPECT_EQ(Eigen::MatrixXd(L5).row(4).norm(), 0.0);
  EXPECT_EQ(L5.coeff(0, 0), 1.0);
  EXPECT_EQ(L5.coeff(0, 1), -1.0);
}

TEST(GraphLaplacian, Weighted) {
  const std::vector<double> w = {2.0, 0.5, 0.0};
  const Sparse L = graph_laplacian(3, Edges{{0, 1}, {1, 2}, {0, 2}}, &w);
  Eigen::MatrixXd expected(3, 3);
  expected << 2, -2, 0,  //
      -2, 2.5, -0.5,     //
      0, -0.5, 0.5;
  EXPECT_EQ(Eigen::MatrixXd(L), expected);
}

TEST(GraphLaplacian, KnnLaplacianIsSymmetricPsdWithZeroRowSums) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  Matrix P(80, 3);
  for (Index i = 0; i < P.size(); ++i) P.data()[i] = normal(rng);
  const Edges edges = knn_pairs(P, 5);
  const Sparse L = graph_laplacian(80, edges);
  const Eigen::MatrixXd D(L);
  EXPECT_EQ((D - D.transpose()).norm(), 0.0);
  EXPECT_LE(D.rowwise().sum().cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GE(smallest_eigenvalue(D), -1e-12);
  for (const auto& [i, j] : edges) EXPECT_EQ(D(i, j), -1.0);
  EXPECT_EQ(L.nonZeros(), static_cast<Index>(2 * edges.size()) + 80);

  std::vector<double> w(edges.size());
  std::uniform_real_distribution<double> uniform(0.0, 3.0);
  for (double& x : w) x = uniform(rng);
  const Eigen::MatrixXd Dw(graph_laplacian(80, edges, &w));
  EXPECT_LE(Dw.rowwise().sum().cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GE(smallest_eigenvalue(Dw), -1e-12);
}

TEST(GraphLaplacian, Errors) {
  expect_error([] { graph_laplacian(3, Edges{{0, 3}}); }, "outside [0, 2]");
  expect_error([] { graph_laplacian(3, Edges{{-1, 2}}); }, "outside [0, 2]");
  expect_error([] { graph_laplacian(3, Edges{{1, 1}}); }, "self-loop");
  const std::vector<double> one = {1.0};
  expect_error([&] { graph_laplacian(3, Edges{{0, 1}, {1, 2}}, &one); }, "one weight per edge");
  const std::vector<double> negative = {-1.0};
  expect_error([&] { graph_laplacian(3, Edges{{0, 1}}, &negative); }, "finite weight >= 0");
  const std::vector<double> nan = {NAN};
  expect_error([&] { graph_laplacian(3, Edges{{0, 1}}, &nan); }, "finite weight >= 0");
}

TEST(SparseRegularizer, MatchesTheDenseProduct) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  const Index n = 40;
  const Sparse L = graph_laplacian(n, random_graph(n, 60, rng));
  const SparseRegularizer reg(L, true, "laplacian");
  const sdprl::Regularizer& base = reg;
  EXPECT_EQ(base.name(), "laplacian");
  EXPECT_EQ(base.dimension(), n);
  EXPECT_FALSE(base.positive_part_is_zero());

  Matrix X(n, 3);
  for (Index i = 0; i < X.size(); ++i) X.data()[i] = normal(rng);
  const Eigen::MatrixXd dense(L);
  const Matrix expected = dense * X;
  Matrix out = Matrix::Constant(2, 2, 9.0);  // overwritten, whatever its size
  base.apply(X, out);
  EXPECT_LE((out - expected).norm(), 1e-12 * expected.norm());
  out.setConstant(9.0);
  base.apply_positive(X, out);
  EXPECT_LE((out - expected).norm(), 1e-12 * expected.norm());

  Vector d;
  base.positive_diagonal(d);
  EXPECT_EQ(d, dense.diagonal());
}

TEST(SparseRegularizer, GershgorinMajorant) {
  std::mt19937_64 rng(5);
  const Index n = 50;
  const Edges edges = random_graph(n, 120, rng);
  std::vector<double> w(edges.size());
  std::uniform_real_distribution<double> uniform(0.1, 2.0);
  for (double& x : w) x = uniform(rng);
  for (const bool weighted : {false, true}) {
    SCOPED_TRACE(weighted ? "weighted" : "unit");
    const Sparse L = graph_laplacian(n, edges, weighted ? &w : nullptr);
    const SparseRegularizer reg(L, true);
    const sdprl::Regularizer& base = reg;
    Vector d;
    ASSERT_TRUE(base.positive_diagonal_majorant(d));
    ASSERT_EQ(d.size(), n);
    const Eigen::MatrixXd A(L);
    // For a Laplacian, d = sum_j |L_ij| = 2 * (weighted) degree.
    EXPECT_LE((d - 2.0 * A.diagonal()).cwiseAbs().maxCoeff(), 1e-12);
    const Eigen::MatrixXd M = Eigen::MatrixXd(d.asDiagonal()) - A;
    EXPECT_GE(smallest_eigenvalue(M), -1e-12);
  }
}

TEST(SparseRegularizer, GeneralPsdMatrixMajorant) {
  // A = B^T B: PSD, not a Laplacian (off-diagonal entries of both signs, nonzero row sums); the
  // Gershgorin vector still majorises it.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd B(6, 12);
  for (Index i = 0; i < B.size(); ++i) B.data()[i] = normal(rng);
  const Eigen::MatrixXd A = B.transpose() * B;
  const SparseRegularizer reg(A.sparseView(), true);
  Vector d;
  ASSERT_TRUE(reg.positive_diagonal_majorant(d));
  EXPECT_LE((d - A.cwiseAbs().rowwise().sum()).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GE(smallest_eigenvalue(Eigen::MatrixXd(d.asDiagonal()) - A), -1e-10);
}

TEST(SparseRegularizer, Errors) {
  const Sparse L = graph_laplacian(3, Edges{{0, 1}, {1, 2}});
  expect_error([&] { SparseRegularizer(L, false); },
               "a sparse A must be declared PSD; indefinite sparse A is not supported");
  expect_error([] { SparseRegularizer(Sparse(2, 3), true); }, "must be square");
  Eigen::MatrixXd asym(2, 2);
  asym << 1, 2, 0, 1;
  expect_error([&] { SparseRegularizer(asym.sparseView(), true); }, "must be symmetric");
  Eigen::MatrixXd inf(2, 2);
  inf << INFINITY, 0, 0, 1;
  expect_error([&] { SparseRegularizer(inf.sparseView(), true); }, "NaN/Inf");
  // An empty (zero) A is fine: the regulariser does nothing.
  const SparseRegularizer zero(Sparse(4, 4), true);
  Matrix out;
  zero.apply(Matrix::Ones(4, 2), out);
  EXPECT_EQ(out, Matrix::Zero(4, 2));
}

}  // namespace
