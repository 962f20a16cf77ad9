// The active-set polish of a convex (l1) result (docs/method.md section 7.6) and its linear
// solver, MINRES. Checked by the mathematics: MINRES against a dense factorisation and on a
// singular system; the polish by the certificate (mm/certificate.h), which it does not compute:
// a lower bound on the convex SDP's minimum within 1e-9 of F at its point, on instances where MM
// alone stops short of that. tests/sdpa_global_test compares the polished results with SDPA's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "linalg/cholesky.h"
#include "linalg/gmres.h"
#include "linalg/minres.h"
#include "linalg/symmetric_eigen.h"
#include "mm/certificate.h"
#include "mm/polish.h"
#include "sdprl/terms/composite_terms.h"
#include "sdprl/terms/sparse_matrix_terms.h"
#include "terms/term_subset.h"
#include "sdprl/completion/synthetic.h"
#include "sdprl/solver.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

// A random orthogonal matrix (the Q of a Gaussian matrix).
Eigen::MatrixXd random_orthogonal(Index n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd G(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) G(i, j) = normal(rng);
  return Eigen::HouseholderQR<Eigen::MatrixXd>(G).householderQ();
}

// Q diag(eigenvalues) Q^T for a random orthogonal Q.
Eigen::MatrixXd random_symmetric(Index n, const Eigen::VectorXd& eigenvalues, std::mt19937_64& rng) {
  const Eigen::MatrixXd Q = random_orthogonal(n, rng);
  return Q * eigenvalues.asDiagonal() * Q.transpose();
}

// A saddle-point-like spectrum (both signs, spread over three decades): the solution is LU's.
TEST(Minres, SolvesASymmetricIndefiniteSystem) {
  std::mt19937_64 rng(1);
  const Index n = 60;
  Eigen::VectorXd lambda(n);
  for (Index i = 0; i < n; ++i) lambda[i] = (i % 2 ? -1.0 : 1.0) * std::pow(10.0, -3.0 + 3.0 * i / (n - 1.0));
  const Eigen::MatrixXd A = random_symmetric(n, lambda, rng);
  std::normal_distribution<double> normal;
  Vector b(n);
  for (Index i = 0; i < n; ++i) b[i] = normal(rng);
  Vector x;
  double residual = 0.0;
  const long it = linalg::minres([&A](const Vector& v, Vector& out) { out = A * v; }, b, x, 1e-12, 10 * n, &residual);
  const Vector exact = A.fullPivLu().solve(b);
  EXPECT_LT(it, 10 * n);
  EXPECT_LE((A * x - b).norm(), 1e-10 * b.norm());
  EXPECT_NEAR(residual, (A * x - b).norm(), 1e-10 * b.norm());  // the recurrence's residual is the true one
  EXPECT_LE((x - exact).norm(), 1e-8 * exact.norm());
}

// Singular and consistent (b in the range of A, as the polish's KKT systems are along X's
// rotations): MINRES converges to the solution in the range, the minimum-norm one.
TEST(Minres, SingularConsistentSystemGivesTheMinimumNormSolution) {
  std::mt19937_64 rng(2);
  const Index n = 40;
  Eigen::VectorXd lambda = Eigen::VectorXd::LinSpaced(n, -2.0, 3.0);
  for (Index i = 0; i < 6; ++i) lambda[5 * i] = 0.0;
  const Eigen::MatrixXd A = random_symmetric(n, lambda, rng);
  std::normal_distribution<double> normal;
  Vector z(n);
  for (Index i = 0; i < n; ++i) z[i] = normal(rng);
  const Vector b = A * z;
  Vector x;
  double residual = 0.0;
  linalg::minres([&A](const Vector& v, Vector& out) { out = A * v; }, b, x, 1e-12, 10 * n, &residual);
  EXPECT_LE((A * x - b).norm(), 1e-10 * b.norm());
  const Vector minimum_norm = A.completeOrthogonalDecomposition().pseudoInverse() * b;
  EXPECT_LE((x - minimum_norm).norm(), 1e-8 * minimum_norm.norm());
  const Vector zero = Vector::Zero(n);
  EXPECT_EQ(linalg::minres([&A](const Vector& v, Vector& out) { out = A * v; }, zero, x, 1e-12, 10, &residual), 0);
  EXPECT_EQ(x.norm(), 0.0);
}

// The polish's direct steps (docs/method.md section 7.6) reuse a factor taken at an earlier Newton
// step, where delta (the Levenberg-Marquardt term on the system's near-null directions) was 5 times
// the present one: the preconditioned operator is 1 on most of the space and 0.2 on those
// directions. The plain refinement x += M^{-1} (b - A x) contracts the error there by 0.8 a pass;
// GMRES with M^{-1} as its right preconditioner solves in a few iterations, to the true residual.
TEST(Gmres, AStaleFactorPreconditionsWherePlainRefinementStalls) {
  std::mt19937_64 rng(3);
  const Index n = 80;
  Eigen::VectorXd lambda(n), stale(n);
  for (Index i = 0; i < n; ++i) {
    const bool near_null = i % 4 == 0;
    lambda[i] = near_null ? 1e-4 : (i % 2 ? -1.0 : 1.0) * std::pow(10.0, 2.0 * i / (n - 1.0));
    stale[i] = near_null ? 5e-4 : lambda[i];
  }
  // A and its stale inverse share their eigenvectors.
  const Eigen::MatrixXd Q = random_orthogonal(n, rng);
  const Eigen::MatrixXd A = Q * lambda.asDiagonal() * Q.transpose();
  const Eigen::MatrixXd M_inverse = Q * stale.cwiseInverse().asDiagonal() * Q.transpose();
  std::normal_distribution<double> normal;
  Vector b(n);
  for (Index i = 0; i < n; ++i) b[i] = normal(rng);
  const auto apply = [&A](const Vector& v, Vector& out) { out = A * v; };
  const auto precondition = [&M_inverse](const Vector& v, Vector& out) { out = M_inverse * v; };
  Vector x;
  double residual = 0.0;
  const long it = linalg::gmres(apply, precondition, b, x, 1e-10, 20, &residual);
  EXPECT_LE(it, 4);
  EXPECT_LE((A * x - b).norm(), 1e-9 * b.norm());
  EXPECT_NEAR(residual, (A * x - b).norm(), 1e-9 * b.norm());  // the recurrence's residual is the true one
  // Twenty passes of the plain refinement leave 0.8^20 of the near-null part: about 1e-2.
  Vector plain = Vector::Zero(n), correction;
  for (int pass = 0; pass < 20; ++pass) {
    precondition(Vector(b - A * plain), correction);
    plain += correction;
  }
  EXPECT_GT((A * plain - b).norm(), 1e-3 * b.norm());
  // A zero right-hand side ends at once, x = 0.
  EXPECT_EQ(linalg::gmres(apply, precondition, Vector(Vector::Zero(n)), x, 1e-10, 20, &residual), 0);
  EXPECT_EQ(x.norm(), 0.0);
}

// Entry terms with outliers (an l1 completion), each pair once, as tests/sdpa_global_test's
// completion n = 25: its optimum fits 54 of 56 terms and has rank 9 below the Pataki rank 11,
// where MM converges sublinearly.
Model completion_model(Index n, Index m, std::uint64_t seed) {
  Model model;
  model.terms = entry_terms(unique_pair_entries(n, m, seed));
  return model;
}

Summary solve_l1(const Model& model, bool polish, Matrix& X) {
  SolverOptions o;
  o.rank = 11;
  o.verbose = false;
  o.polish = polish;
  return solve(model, *load_loss("l1"), {0.1, 0.0}, o, X);
}

// At the defaults MM stops with the certificate's gap near 1e-2; the polish certifies the optimum
// to rounding, at a lower F, and reports what it did. Without it the same run is not certified
// (the test fails when the polish is removed).
TEST(Polish, CertifiesTheOptimumWhereMmStopsShort) {
  const Model model = completion_model(25, 60, 4);
  Matrix X, Y;
  const Summary mm = solve_l1(model, false, X);
  const Summary polished = solve_l1(model, true, Y);
  ASSERT_EQ(mm.status, SolverStatus::kConverged) << mm.message;
  ASSERT_EQ(polished.status, SolverStatus::kConverged) << polished.message;
  ASSERT_TRUE(mm.certificate.computed);
  EXPECT_FALSE(mm.certificate.optimal);
  EXPECT_GT(mm.certificate.relative_gap, 1e-4);
  EXPECT_FALSE(mm.polish.tried);

  const PolishReport& p = polished.polish;
  EXPECT_TRUE(p.tried);
  EXPECT_TRUE(p.kept) << p.note;
  EXPECT_GT(p.newton_steps, 0);
  EXPECT_GT(p.products, 0);
  EXPECT_EQ(p.fitted, 54);
  EXPECT_EQ(p.objective_before, mm.final_objective);  // the polish starts where MM stopped
  ASSERT_TRUE(polished.certificate.optimal) << polished.certificate.brief();
  EXPECT_LE(polished.certificate.relative_gap, 1e-9);
  // The certificate's bound is a bound: below F at the polished point, which is below MM's.
  const double f = objective(model, *load_loss("l1"), {0.1, 0.0}, Y);
  EXPECT_EQ(f, polished.final_objective);
  EXPECT_LE(polished.certificate.lower_bound, f * (1.0 + 1e-12));
  EXPECT_LT(f, mm.final_objective - 1e-4 * mm.final_objective);
  EXPECT_LE(mm.final_objective - polished.certificate.lower_bound, mm.certificate.gap * (1.0 + 1e-9));
  // F(X) - min H <= F(X) - min F <= the certified gap.
  EXPECT_LE(polished.stationarity, 1e-9);
  EXPECT_NE(polished.brief_report().find("after a polish"), std::string::npos) << polished.brief_report();
}

// Not tried where it cannot help: a concave loss (its problem is not convex), a certificate far
// from optimal (a rank below the optimum's), or the option off.
TEST(Polish, NotTriedWhereItCannotHelp) {
  const Model model = completion_model(25, 60, 4);
  SolverOptions o;
  o.verbose = false;
  Matrix X;
  o.rank = 11;
  const Summary mcp = solve(model, *load_loss("leaky-mcp"), {0.1, 0.0}, o, X);
  EXPECT_FALSE(mcp.polish.tried);
  EXPECT_NE(mcp.polish.note.find("not linear"), std::string::npos) << mcp.polish.note;
  o.rank = 2;
  const Summary low = solve(model, *load_loss("l1"), {0.1, 0.0}, o, X);
  ASSERT_TRUE(low.certificate.computed);
  EXPECT_GT(low.certificate.relative_gap, 0.1);
  EXPECT_FALSE(low.polish.tried);
  EXPECT_NE(low.polish.note.find("above 0.1"), std::string::npos) << low.polish.note;
}

// Lanczos' k smallest eigenpairs (n > 300, so not the dense path) come most negative first, as
// the certificate's lambda_min and the staircase's directions read them; Spectra's own default
// order is the reverse.
TEST(Lanczos, SmallestEigenpairsComeMostNegativeFirst) {
  const Index n = 400;
  Vector d(n);
  for (Index i = 0; i < n; ++i) d[i] = -50.0 + 0.25 * static_cast<double>((i * 37) % n);  // -50 .. 49.75
  const linalg::SymmetricOperator S = [&d](const Matrix& x, Matrix& y) { y = d.asDiagonal() * x; };
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
  ASSERT_TRUE(linalg::extreme_eigenpairs(S, n, 5, linalg::Extreme::kSmallest, values, vectors));
  for (Index j = 0; j < 5; ++j) EXPECT_NEAR(values[j], -50.0 + 0.25 * static_cast<double>(j), 1e-6);
  for (Index j = 0; j < 5; ++j) EXPECT_NEAR((d.asDiagonal() * vectors.col(j) - values[j] * vectors.col(j)).norm(), 0.0, 1e-4);
  ASSERT_TRUE(linalg::extreme_eigenpairs(S, n, 3, linalg::Extreme::kLargest, values, vectors));
  for (Index j = 0; j < 3; ++j) EXPECT_NEAR(values[j], 49.75 - 0.25 * static_cast<double>(j), 1e-6);
}

// Z = X X^T's numerical rank (summary.json numerical_rank): its eigenvalues sigma_j^2 above 1e-6 of
// the largest, with X = U diag(sigma) V^T built so that they are 1, 1e-3, 1e-5.5, 1e-6.5 and 0.
TEST(NumericalRank, CountsTheEigenvaluesOfZAboveTheThreshold) {
  std::mt19937 gen(3);
  std::normal_distribution<double> normal;
  const Index n = 40, r = 5;
  Eigen::MatrixXd A(n, r), B(r, r);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < r; ++j) A(i, j) = normal(gen);
  for (Index i = 0; i < r; ++i)
    for (Index j = 0; j < r; ++j) B(i, j) = normal(gen);
  const Eigen::MatrixXd U = Eigen::HouseholderQR<Eigen::MatrixXd>(A).householderQ() * Eigen::MatrixXd::Identity(n, r);
  const Eigen::MatrixXd V = Eigen::HouseholderQR<Eigen::MatrixXd>(B).householderQ();
  Eigen::VectorXd sigma(r);
  sigma << 1.0, std::sqrt(1e-3), std::pow(10.0, -2.75), std::pow(10.0, -3.25), 0.0;
  const Matrix X = 7.0 * U * sigma.asDiagonal() * V.transpose();
  EXPECT_EQ(linalg::numerical_rank(X), 3);
  EXPECT_EQ(linalg::numerical_rank(X, 1e-7), 4);
  EXPECT_EQ(linalg::numerical_rank(X, 1e-4), 2);
  EXPECT_EQ(linalg::numerical_rank(X, 1e-2), 1);
  EXPECT_EQ(linalg::numerical_rank(Matrix::Zero(n, r)), 0);
  Matrix bad = X;
  bad(3, 2) = std::nan("");
  EXPECT_EQ(linalg::numerical_rank(bad), -1);
}

// The certificate's coarse lambda_min (mm/certificate.cc: Lanczos to 1e-2, taken from below) on
// a model too large for the dense eigensolver (n = 400) at a point far from optimal (rank 2, the
// signs of the residuals as y): a lower estimate of the fine solve's lambda_min within the
// tolerance, so its bound is below the fine one and the gap is as far from closing.
TEST(Certificate, CoarseEigenvalueBoundsFromBelow) {
  const Model model = completion_model(400, 6000, 3);
  std::mt19937_64 rng(5);
  const Matrix X = random_matrix(400, 2, 1.0, rng);
  const auto l1 = load_loss("l1");
  const RegularizationWeights w{0.5, 0.0};
  const Certificate coarse = mm::certify(model, *l1, w, X, Vector());
  mm::Descent descent;  // asking for directions takes the fine solve
  const Certificate fine = mm::certify(model, *l1, w, X, Vector(), 1, &descent);
  ASSERT_TRUE(coarse.computed && fine.computed);
  EXPECT_NE(coarse.note.find("to 1e-2"), std::string::npos) << coarse.note;
  ASSERT_LT(fine.lambda_min, 0.0);
  EXPECT_LE(coarse.lambda_min, fine.lambda_min);
  EXPECT_GE(coarse.lambda_min, fine.lambda_min * (1.0 + 2.1e-2));
  EXPECT_LE(coarse.lower_bound, fine.lower_bound);
  EXPECT_GT(coarse.relative_gap, 1e-2);
  EXPECT_FALSE(coarse.optimal || fine.optimal);
}

// The polish's and the staircase's B and B^T run on the fitted terms as a set of their own
// (terms/term_subset.h): for each of the framework's families the subset's values and adjoint are
// the whole set's restricted to those terms.
TEST(TermSubset, ValuesAndAdjointAreTheWholeSetsOnThoseTerms) {
  const Index n = 30;
  EntryData d = random_entries(n, 200, 11);
  for (std::size_t k = 0; k < d.rows.size(); ++k)  // distance terms need i != j
    if (d.rows[k] == d.cols[k]) d.cols[k] = (d.cols[k] + 1) % static_cast<int>(n);
  std::vector<std::vector<SparseMatrixTerms::Entry>> sparse(40);
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> idx(0, static_cast<int>(n) - 1);
  std::normal_distribution<double> normal;
  for (auto& q : sparse)
    for (int e = 0; e < 4; ++e) q.push_back({idx(rng), idx(rng), normal(rng)});
  Vector sparse_targets(40);
  for (Index k = 0; k < 40; ++k) sparse_targets[k] = normal(rng);
  const std::vector<std::shared_ptr<const ConstraintSet>> sets = {
      entry_terms(d), std::make_shared<DistanceTerms>(n, d.rows, d.cols, d.targets),
      std::make_shared<SparseMatrixTerms>(n, sparse, sparse_targets)};
  const Matrix X = random_matrix(n, 3, 1.0, rng);
  for (const auto& set : sets) {
    const std::vector<Index> which = {7, 0, 3, 19, 3, 25};
    const auto sub = detail::term_subset(*set, which);
    ASSERT_NE(sub, nullptr) << set->family();
    ASSERT_EQ(sub->size(), static_cast<Index>(which.size()));
    EXPECT_EQ(sub->family(), set->family());
    Vector all, part;
    set->evaluate(X, all);
    sub->evaluate(X, part);
    Vector e(static_cast<Index>(which.size())), full = Vector::Zero(set->size());
    for (std::size_t k = 0; k < which.size(); ++k) {
      EXPECT_NEAR(part[static_cast<Index>(k)], all[which[k]], 1e-12) << set->family();
      EXPECT_EQ(sub->targets()[static_cast<Index>(k)], set->targets()[which[k]]);
      e[static_cast<Index>(k)] = normal(rng);
      full[which[k]] += e[static_cast<Index>(k)];
    }
    Matrix A, B;
    set->apply_adjoint_sym(full, X, A);
    sub->apply_adjoint_sym(e, X, B);
    EXPECT_LE((A - B).norm(), 1e-12 * A.norm()) << set->family();
  }
}

// The polish's work budget weighs each term by its entries (detail::term_entries): a sparse-matrix
// term by its upper triangle (an all-ones constraint on n rows: n (n + 1) / 2, as gpp124-1's),
// an entry or distance term by 1, a composite by its parts'.
TEST(TermSubset, EntriesWeighEachTermByItsStoredEntries) {
  const Index n = 12;
  std::vector<std::vector<SparseMatrixTerms::Entry>> sparse(n + 1);
  for (Index i = 0; i < n; ++i) sparse[static_cast<std::size_t>(i)].push_back({static_cast<int>(i), static_cast<int>(i), 1.0});
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) sparse[static_cast<std::size_t>(n)].push_back({static_cast<int>(i), static_cast<int>(j), 1.0});
  const auto ones = std::make_shared<SparseMatrixTerms>(n, sparse, Vector::Ones(n + 1));
  EXPECT_EQ(detail::term_entries(*ones), static_cast<double>(n + n * (n + 1) / 2));
  const EntryData d = random_entries(n, 30, 5);
  const auto entries = entry_terms(d);
  EXPECT_EQ(detail::term_entries(*entries), static_cast<double>(entries->size()));
  const CompositeTerms both({ones, entries});
  EXPECT_EQ(detail::term_entries(both), static_cast<double>(n + n * (n + 1) / 2 + entries->size()));
}

// A ConstraintSet that counts its products with S(y) (apply_adjoint_sym), as Lanczos makes them.
class CountingTerms final : public ConstraintSet {
 public:
  explicit CountingTerms(std::shared_ptr<const ConstraintSet> inner) : inner_(std::move(inner)) {}
  std::string family() const override { return inner_->family(); }
  Index dimension() const override { return inner_->dimension(); }
  Index size() const override { return inner_->size(); }
  const Vector& targets() const override { return inner_->targets(); }
  void evaluate(const Matrix& X, Vector& values) const override { inner_->evaluate(X, values); }
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override {
    products += V.cols();
    inner_->apply_adjoint_sym(y, V, out);
  }
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override {
    return inner_->make_linearization(mode);
  }
  mutable long products = 0;

 private:
  std::shared_ptr<const ConstraintSet> inner_;
};

// The staircase's directions (certify() with `descent`) are every negative eigenpair of S(y) there
// is room for, found by asking Lanczos for 16 and doubling while all are negative: at n = 1000
// with room for 400 and 20 negative eigenvalues, the same 20 as the dense eigensolver's in fewer
// than 800 products (asking for 400 at once takes a Krylov space of 801 vectors: at least 801
// products, and O(n k^2) of Spectra's own work besides; 7 s a stair at m = 2000, rank "auto").
TEST(Certificate, StaircaseDirectionsCostWhatTheNegativeEigenvaluesNeed) {
  const Index n = 1000;
  const auto inner = entry_terms(unique_pair_entries(n, 15000, 3));
  std::mt19937_64 rng(5);
  const Matrix X = random_matrix(n, 2, 1.0, rng);
  // S(y) at lambda = 0 with y = sign(r) (the certificate's choice without multipliers), dense.
  Vector values;
  inner->evaluate(X, values);
  const Vector r = values - inner->targets();
  const Vector y = r.unaryExpr([](double v) { return v > 0.0 ? 1.0 : v < 0.0 ? -1.0 : 0.0; });
  Matrix S0;
  inner->apply_adjoint_sym(y, Matrix::Identity(n, n), S0);
  const Eigen::SelfAdjointEigenSolver<Matrix> dense(0.5 * (S0 + S0.transpose()));
  const Vector e = dense.eigenvalues();
  // lambda / 2 between the 20th and 21st eigenvalues: exactly 20 negative ones.
  const int negative = 20;
  const double lambda = -(e[negative - 1] + e[negative]);
  ASSERT_GT(e[negative] - e[negative - 1], 1e-3 * std::abs(e[0]));
  const auto counting = std::make_shared<CountingTerms>(inner);
  Model model;
  model.terms = counting;
  mm::Descent descent;
  const Certificate c = mm::certify(model, *load_loss("l1"), {lambda, 0.0}, X, Vector(), 400, &descent);
  ASSERT_TRUE(c.computed) << c.note;
  ASSERT_EQ(descent.values.size(), negative);
  for (Index j = 0; j < negative; ++j) {
    const double expected = e[j] + 0.5 * lambda;
    EXPECT_NEAR(descent.values[j], expected, 1e-5 * std::abs(e[0])) << j;
    const Vector v = descent.vectors.col(j);
    EXPECT_NEAR((S0 * v + 0.5 * lambda * v - expected * v).norm(), 0.0, 1e-2 * std::abs(e[0])) << j;
  }
  EXPECT_NEAR(c.lambda_min, e[0] + 0.5 * lambda, 1e-5 * std::abs(e[0]));
  EXPECT_LT(counting->products, 800);
}

// Near a solution S(y) has a cluster of eigenvalues near 0 (X's columns span its null space), and
// Lanczos' tolerance is relative to each Ritz value: asked for 16 eigenpairs of which 6 lie in
// such a cluster, it never converges. certify() asks for them of S + lambda_min I, where every
// one is at least |lambda_min| from 0. Here S(y) = diag(y) (diagonal terms, multipliers given):
// 10 eigenvalues in [-1, -0.55], 100 in (0, 1e-8], the rest in [0.1, 1).
TEST(Certificate, StaircaseDirectionsBesideAClusterAtZero) {
  const Index n = 400;
  EntryData d;
  d.n = n;
  d.targets = Vector::Ones(n);
  for (Index i = 0; i < n; ++i) {
    d.rows.push_back(static_cast<int>(i));
    d.cols.push_back(static_cast<int>(i));
  }
  Model model;
  model.terms = entry_terms(d);
  Vector multipliers(n);
  for (Index i = 0; i < n; ++i)
    multipliers[i] = i < 10 ? -1.0 + 0.05 * static_cast<double>(i)
                            : i < 110 ? 1e-10 * static_cast<double>(i - 9) : 0.1 + 0.9 * static_cast<double>(i - 110) / 290.0;
  std::mt19937_64 rng(7);
  const Matrix X = random_matrix(n, 2, 1.0, rng);
  mm::Descent descent;
  const Certificate c = mm::certify(model, *load_loss("l1"), {0.0, 0.0}, X, multipliers, 200, &descent);
  ASSERT_TRUE(c.computed) << c.note;
  ASSERT_EQ(descent.values.size(), 10);
  for (Index j = 0; j < 10; ++j) {
    EXPECT_NEAR(descent.values[j], multipliers[j], 1e-6) << j;
    EXPECT_NEAR(std::abs(descent.vectors(j, j)), 1.0, 1e-6) << j;
  }
  EXPECT_NEAR(c.lambda_min, -1.0, 1e-6);
}

// The paper's synthetic l1 completion (docs/method.md section 5) at m = 500 and 2000 (n > 300: the
// Lanczos path) with rank "auto": from rank 2 the staircase climbs to the optimum's rank (5 at
// lambda = 30, where the trace term keeps Z low rank) and the run ends certified optimal, its lower
// bound below F. (At lambda = 1 and 10 the optima have ranks above 224 and 94; the staircase stops
// short there, docs/method.md section 7.4.)
TEST(Certificate, SyntheticL1CompletionCertifiedWithAutomaticRank) {
  for (const std::int64_t m : {500, 2000}) {
    mc::SyntheticSpec spec;
    spec.m = m;
    const mc::SyntheticInstance inst = mc::generate(spec);
    Model model;
    model.terms = std::make_shared<EntryTerms>(
        m, inst.observed.rows, inst.observed.cols,
        Eigen::Map<const Vector>(inst.observed.values.data(), static_cast<Index>(inst.observed.values.size())));
    SolverOptions o;
    o.rank = kAutoRank;
    o.verbose = false;
    Matrix X;
    const RegularizationWeights w{30.0, 0.0};
    const Summary s = solve(model, *load_loss("l1"), w, o, X);
    ASSERT_TRUE(s.usable()) << s.message;
    std::printf("[ cert    ] m = %ld: rank %ld after %zu stairs, F %.10g, lower bound %.10g, relative gap %.2e, %d MM\n",
                static_cast<long>(m), static_cast<long>(s.rank), s.rank_raises.size(), s.final_objective,
                s.certificate.lower_bound, s.certificate.relative_gap, s.mm_iterations);
    EXPECT_FALSE(s.rank_raises.empty());
    EXPECT_TRUE(s.certificate.optimal) << s.certificate.brief();
    EXPECT_LE(s.certificate.relative_gap, 1e-6);
    EXPECT_LE(s.certificate.lower_bound, s.final_objective);
    EXPECT_EQ(objective(model, *load_loss("l1"), w, X), s.final_objective);
  }
}

// tools/bench/sdpa_compare's n = 100 instance (the quickstart's synthetic completion, m = 100) and
// the script's tight settings at the given rank.
Model sdpa_compare_instance() {
  mc::SyntheticSpec spec;
  spec.m = 100;
  const mc::SyntheticInstance inst = mc::generate(spec);
  Model model;
  model.terms = std::make_shared<EntryTerms>(
      spec.m, inst.observed.rows, inst.observed.cols,
      Eigen::Map<const Vector>(inst.observed.values.data(), static_cast<Index>(inst.observed.values.size())));
  return model;
}
SolverOptions sdpa_compare_options(Index rank, int max_mm_iterations) {
  SolverOptions o;
  o.rank = rank;
  o.verbose = false;
  o.init = InitKind::kSpectral;
  o.relative_tolerance = 1e-10;
  o.consecutive = 5;
  o.admm.min_tolerance = 1e-12;
  o.max_mm_iterations = max_mm_iterations;
  return o;
}

// The staircase does not wait for a rank to settle where the certified gap is far from closing:
// tools/bench/sdpa_compare's n = 100 instance (lambda = 1, its tight tolerances) settles at rank 34
// only after about 1280 MM steps, with the relative gap at 0.2 long before. Unsettled checks every
// 128 MM steps climb when the gap is above 1e-2: 2 -> 34 -> 54 -> 59 by MM step 384 (SDPA's Z has
// rank 60); waiting for the settle, the run was still at rank 34 at MM step 768.
TEST(Certificate, StaircaseClimbsBeforeARankSettlesWhereTheGapIsLarge) {
  const Model model = sdpa_compare_instance();
  const SolverOptions o = sdpa_compare_options(kAutoRank, 800);
  Matrix X;
  const Summary s = solve(model, *load_loss("l1"), {1.0, 0.0}, o, X);
  ASSERT_TRUE(s.usable()) << s.message;
  ASSERT_GE(s.rank_raises.size(), 3u);
  EXPECT_EQ(s.rank_raises[0].mm_iteration, 128);
  EXPECT_EQ(s.rank_raises[1].mm_iteration, 256);
  EXPECT_GE(s.rank, 55);
  for (const RankRaise& step : s.rank_raises) EXPECT_LT(step.objective, step.objective_before);
}

// A run of sdpa_compare_instance() that ends certified by a kept polish: a relative gap of at most
// 1e-6, a lower bound below F, and F within `relative` of the optimum (SDPA's: 2644.80398,
// tools/bench/sdpa_compare).
void expect_polished_to_the_optimum(const Summary& s, double relative) {
  ASSERT_TRUE(s.usable()) << s.message;
  ASSERT_TRUE(s.certificate.computed);
  EXPECT_TRUE(s.certificate.optimal) << s.certificate.brief();
  EXPECT_LE(s.certificate.relative_gap, 1e-6);
  EXPECT_LE(s.certificate.lower_bound, s.final_objective);
  EXPECT_NEAR(s.final_objective, 2644.80398, relative * 2644.8);
  EXPECT_TRUE(s.polish.kept) << s.polish.note;
}

// MM's early attempts (direct_only) stop at a guess that has no direct solve, saying so, after one
// guess: without the check their Newton loop gave up at its first step, and the guess was then
// corrected and tried again (sparse-matrix terms have no direct solve).
TEST(Polish, AnEarlyAttemptStopsAtAGuessWithoutTheDirectSolve) {
  const Index n = 12;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  std::vector<std::vector<SparseMatrixTerms::Entry>> sparse(30);
  Vector targets(30);
  for (std::size_t t = 0; t < sparse.size(); ++t) {
    for (int e = 0; e < 3; ++e) {
      const int i = static_cast<int>(rng() % n), j = static_cast<int>(rng() % n);
      sparse[t].push_back({std::min(i, j), std::max(i, j), normal(rng)});
    }
    targets[static_cast<Index>(t)] = normal(rng);
  }
  Model model;
  model.terms = std::make_shared<SparseMatrixTerms>(n, sparse, targets);
  Matrix X(n, 3);
  for (Index i = 0; i < X.size(); ++i) X.data()[i] = normal(rng);
  Vector multipliers(30);
  for (Index t = 0; t < 30; ++t) multipliers[t] = t % 2 ? 0.5 : 1.0;  // half inside the box: fitted
  const RegularizationWeights weights{1.0, 0.0};
  const mm::Polished p = mm::polish(model, 1.0, weights, X, multipliers, 1e3, 100, /*direct_only=*/true);
  EXPECT_EQ(p.report.note, "no direct solve for this guess");
  EXPECT_EQ(p.report.rounds, 1);
  EXPECT_EQ(p.report.newton_steps, 0);
}

// tools/bench/sdpa_compare's n = 100 instance (lambda = 1, its tight tolerances) at rank 60, SDPA's:
// the optimum fits 3191 of the 4575 terms exactly, and MM's run, which stopped at MM step 1942 with
// a certified relative gap of 6.5e-5, found no certificate in its polish (MINRES's KKT solves took
// 20000-37000 products a Newton step, and its first guess fitted a pair of terms that the optimum
// cannot both fit). With the KKT system solved directly through its Schur complement, and the
// guess corrected by its largest contradiction, MM's own early polish certifies it: the lower bound
// is within 1e-6 of F, and F is the optimum's (SDPA's: 2644.80398, tools/bench/sdpa_compare).
TEST(Polish, DirectSolvesCertifyTheRankSixtyInstance) {
  const Model model = sdpa_compare_instance();
  const SolverOptions o = sdpa_compare_options(60, 20000);
  Matrix X;
  const Summary s = solve(model, *load_loss("l1"), {1.0, 0.0}, o, X);
  expect_polished_to_the_optimum(s, 1e-4);
  EXPECT_GT(s.polish.factorizations, 0);
  // Its first step, at a residual of 2e-5, on a single-precision factor (linalg/cholesky.h).
  EXPECT_GT(s.polish.single_factorizations, 0);
  // A factor serves later Newton steps through GMRES: 6 steps on 2 factors (with the plain
  // refinement every step took a fresh one, 4 on 4) ...
  EXPECT_LT(s.polish.factorizations, s.polish.newton_steps);
  // ... and the next guess of E, one term fewer, too: 2 guesses on 1 factor (one each without).
  EXPECT_GE(s.polish.rounds, 2);
  EXPECT_LT(s.polish.factorizations, s.polish.rounds);
  EXPECT_LT(s.mm_iterations, 1942);  // where MM alone stopped
  EXPECT_EQ(objective(model, *load_loss("l1"), {1.0, 0.0}, X), s.final_objective);
}

// The same instance at the defaults, rank "auto": MM converges after 541 steps at rank 68, 1.1e-5
// above the optimum, with a certified relative gap of 8.7e-2 (its multipliers are loosely solved).
// The end polish's direct Newton steps need 4 guesses and 38 steps (75960 products) to reach the
// optimum's KKT point; the budget of MINRES polishes (5e8 term visits, 20325 products here) stops
// them short and leaves the run uncertified. (Long under the sanitizers: tests/sanitizer_skips.txt.)
TEST(Polish, DirectBudgetCertifiesTheDefaultAutomaticRankRun) {
  const Model model = sdpa_compare_instance();
  SolverOptions o;  // the defaults, with models/quickstart.toml's start and MM cap
  o.rank = kAutoRank;
  o.init = InitKind::kSpectral;
  o.max_mm_iterations = 2000;
  o.verbose = false;
  Matrix X;
  const Summary s = solve(model, *load_loss("l1"), {1.0, 0.0}, o, X);
  expect_polished_to_the_optimum(s, 1e-7);
  EXPECT_GT(s.polish.products, 20325);  // beyond the MINRES polishes' budget
  // Its later guesses (five new terms each) are solved on the earlier guess's factor, the new terms
  // bordered exactly: 14 factorisations in 31 steps, 15 without the bordering, 16 without either.
  EXPECT_LE(s.polish.factorizations, 14);
}

// The blocked Cholesky factor (linalg/cholesky.h) is Eigen's LLT to rounding, the same bits for 1
// and 2 threads, solves, and refuses an indefinite matrix; in double and in single precision.
TEST(Cholesky, BlockedFactorIsLltAndThreadIndependent) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  const Index k = 517;  // five blocks and a partial one
  Matrix R(k, k);
  for (Index i = 0; i < k; ++i)
    for (Index j = 0; j < k; ++j) R(i, j) = normal(rng);
  const Matrix A = R * R.transpose() / static_cast<double>(k) + 1e-3 * Matrix::Identity(k, k);
  Matrix L1 = A, L2 = A;
  set_threads(1);
  ASSERT_TRUE(linalg::cholesky_in_place(L1));
  set_threads(2);
  ASSERT_TRUE(linalg::cholesky_in_place(L2));
  set_threads(0);
  const Matrix lower1 = L1.triangularView<Eigen::Lower>(), lower2 = L2.triangularView<Eigen::Lower>();
  EXPECT_EQ((lower1 - lower2).cwiseAbs().maxCoeff(), 0.0);
  const Eigen::LLT<Matrix> llt(A);
  EXPECT_LE((lower1 - Matrix(llt.matrixL())).norm(), 1e-10 * lower1.norm());
  Vector b(k), x;
  for (Index i = 0; i < k; ++i) b[i] = normal(rng);
  linalg::cholesky_solve(L1, b, x);
  EXPECT_LE((A * x - b).norm(), 1e-9 * b.norm());
  Matrix indefinite = A;
  indefinite(300, 300) = -1.0;
  EXPECT_FALSE(linalg::cholesky_in_place(indefinite));

  // In single precision: the same bits for 1 and 2 threads, LLT's factor to single rounding
  // (A's condition number is about 4e3), and a solve that refinement in double takes to 1e-12.
  MatrixF F1 = A.cast<float>(), F2 = F1;
  set_threads(1);
  ASSERT_TRUE(linalg::cholesky_in_place(F1));
  set_threads(2);
  ASSERT_TRUE(linalg::cholesky_in_place(F2));
  set_threads(0);
  const MatrixF single1 = F1.triangularView<Eigen::Lower>(), single2 = F2.triangularView<Eigen::Lower>();
  EXPECT_EQ((single1 - single2).cwiseAbs().maxCoeff(), 0.0f);
  const double single_error = (single1.cast<double>() - lower1).norm() / lower1.norm();
  EXPECT_LE(single_error, 1e-5);
  EXPECT_GE(single_error, 1e-9);  // single, not double, precision
  linalg::cholesky_solve(F1, b, x);
  const double first = (A * x - b).norm() / b.norm();
  EXPECT_LE(first, 1e-2);
  Vector correction;
  for (int pass = 0; pass < 6; ++pass) {
    linalg::cholesky_solve(F1, Vector(b - A * x), correction);
    x += correction;
  }
  EXPECT_LE((A * x - b).norm(), 1e-12 * b.norm());
  MatrixF indefinite_single = indefinite.cast<float>();
  EXPECT_FALSE(linalg::cholesky_in_place(indefinite_single));
}

}  // namespace
}  // namespace sdprl
