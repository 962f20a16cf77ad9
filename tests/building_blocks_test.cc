// The public building blocks an application composes (README "Write your own model"): rank-one
// terms, composite terms, the low-rank and scaled-identity regularizers. Each is checked with the
// plugin authors' helpers (sdprl/testing/checks.h) against its dense definition and for the MM
// majoriser property (docs/method.md section 6, check 1). The ADMM checks (check 2, SurrogateTest) and
// sparse-vs-dense iterates (check 5) are in solver_math_test.cc next to the other families'.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <random>

#include "sdprl/error.h"
#include "sdprl/model.h"
#include "sdprl/regularizers/low_rank_regularizer.h"
#include "sdprl/regularizers/scaled_identity_regularizer.h"
#include "sdprl/terms/composite_terms.h"
#include "sdprl/terms/rank_one_terms.h"
#include "sdprl/testing/checks.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;
using sdprl::testing::check_constraint_set;
using sdprl::testing::check_majoriser;
using sdprl::testing::check_regularizer;

// m random rank-one vectors (the first is 1, the MVU centering term), targets ||a^T V||^2 of a random
// rank-2 V plus a few outliers.
struct RankOneData {
  std::vector<Vector> a;
  Vector targets;
};
RankOneData random_rank_one(Index n, Index m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  const Matrix V = random_matrix(n, 2, 1.0, rng);
  RankOneData d;
  d.targets.resize(m);
  for (Index k = 0; k < m; ++k) {
    Vector a = k == 0 ? Vector::Ones(n) : Vector(random_matrix(n, 1, 1.0, rng).col(0));
    d.targets[k] = (a.transpose() * V).squaredNorm() + (k % 3 == 2 ? 5.0 * normal(rng) : 0.1 * normal(rng));
    d.a.push_back(std::move(a));
  }
  return d;
}

std::vector<Eigen::MatrixXd> rank_one_matrices(const RankOneData& d) {
  std::vector<Eigen::MatrixXd> Q;
  for (const Vector& a : d.a) Q.push_back(a * a.transpose());
  return Q;
}

// The MVU terms on a random graph: distance terms, then the centering term 1^T Z 1 = 0.
std::shared_ptr<CompositeTerms> mvu_terms(const EntryData& pairs) {
  return std::make_shared<CompositeTerms>(std::vector<std::shared_ptr<const ConstraintSet>>{
      distance_terms(pairs), std::make_shared<RankOneTerms>(RankOneTerms::centering(pairs.n))});
}

std::vector<Eigen::MatrixXd> mvu_matrices(const EntryData& pairs) {
  std::vector<Eigen::MatrixXd> Q = distance_matrices(pairs);
  Q.push_back(Eigen::MatrixXd::Ones(pairs.n, pairs.n));
  return Q;
}

// ---------------------------------------------------------------------------------------------
// Rank-one terms.

// EntryTerms::apply_adjoint_sym splits a large set into chunks whose count depends on the set's
// size alone (each scattered into its own accumulator, added in chunk order). The adjoint identity
// <A*(y) V, W> = sum_k y_k (v_i . w_j + v_j . w_i) / 2 must hold on one thread and on two, and the
// two must agree bit for bit; the set exceeds both chunk thresholds (one column: 16384 terms a
// chunk, wider: 100000). The terms in random order and sorted by row, where the one-column loop
// sums a row's run of terms in a register (a run ends at a row change, inside a chunk or at its
// end, and a term (i, j) with j on the current row still adds to j at once).
TEST(EntryTerms, AdjointOnOneAndTwoThreadsSatisfiesTheAdjointIdentity) {
  EntryData d = random_entries(3000, 150000, 301);
  std::mt19937_64 rng(302);
  for (const bool sorted : {false, true}) {
    if (sorted) {
      std::vector<std::size_t> order(d.rows.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return d.rows[a] < d.rows[b]; });
      EntryData s = d;
      for (std::size_t k = 0; k < order.size(); ++k) {
        s.rows[k] = d.rows[order[k]];
        s.cols[k] = d.cols[order[k]];
        s.targets[static_cast<Index>(k)] = d.targets[static_cast<Index>(order[k])];
      }
      d = std::move(s);
    }
    const auto terms = entry_terms(d);
    for (const Index width : {1, 4}) {  // 1: the Lanczos vectors (spectral start, certificate) take their own loop
      SCOPED_TRACE(std::string(sorted ? "sorted by row" : "random order") + ", V with " + std::to_string(width) +
                   " columns");
      const Matrix V = random_matrix(d.n, width, 1.0, rng), W = random_matrix(d.n, width, 1.0, rng);
      const Vector y = Vector::Random(terms->size());
      double expected = 0.0;
      for (Index k = 0; k < terms->size(); ++k)
        expected += 0.5 * y[k] * (V.row(d.rows[k]).dot(W.row(d.cols[k])) + V.row(d.cols[k]).dot(W.row(d.rows[k])));
      Matrix one, two;
      set_threads(1);
      terms->apply_adjoint_sym(y, V, one);
      set_threads(2);
      terms->apply_adjoint_sym(y, V, two);
      set_threads(1);
      EXPECT_NEAR(one.cwiseProduct(W).sum(), expected, 1e-10 * (1.0 + std::abs(expected)));
      EXPECT_NEAR(two.cwiseProduct(W).sum(), expected, 1e-10 * (1.0 + std::abs(expected)));
      EXPECT_EQ((one - two).cwiseAbs().maxCoeff(), 0.0);
      EXPECT_GT(one.norm(), 0.0);
    }
  }
}

// The coupled linearisation of entry terms runs its maps and Gram blocks by rows of its CSR, in
// parallel above a size threshold (exceeded here). On one thread and on two: P and P* satisfy the
// adjoint identity against the terms' definition, block i of gram_row_blocks() is the definition
// sum_k c_k^2 x_partner x_partner^T (c_k = w_k for a diagonal term, w_k / 2 otherwise), and the two
// thread counts agree bit for bit (every row and every term has a fixed order of additions).
TEST(EntryTerms, CoupledMapsAndGramBlocksOnOneAndTwoThreads) {
  const EntryData d = random_entries(400, 30000, 311);
  const auto terms = entry_terms(d);
  const Index n = d.n, r = 6, m = terms->size();
  std::mt19937_64 rng(312);
  const Matrix X = random_matrix(n, r, 1.0, rng), D = random_matrix(n, r, 1.0, rng);
  const Vector w = Vector::Random(m).cwiseAbs().array() + 0.1, res = Vector::Random(m), y = Vector::Random(m);
  // Definitions: <D, P_k> = (w_k / 2)(d_i . x_j + d_j . x_i), and the Gram blocks.
  Vector pd_ref(m);
  Eigen::MatrixXd gram_ref = Eigen::MatrixXd::Zero(n * r, r);
  for (Index k = 0; k < m; ++k) {
    const Index i = d.rows[k], j = d.cols[k];
    pd_ref[k] = 0.5 * w[k] * (D.row(i).dot(X.row(j)) + D.row(j).dot(X.row(i)));
    if (i == j) {
      gram_ref.middleRows(i * r, r) += w[k] * w[k] * X.row(i).transpose() * X.row(i);
    } else {
      gram_ref.middleRows(i * r, r) += 0.25 * w[k] * w[k] * X.row(j).transpose() * X.row(j);
      gram_ref.middleRows(j * r, r) += 0.25 * w[k] * w[k] * X.row(i).transpose() * X.row(i);
    }
  }
  Vector pd[2];
  Matrix adj[2], gram[2];
  for (int t = 0; t < 2; ++t) {
    set_threads(t + 1);
    auto lin = terms->make_linearization(SplitMode::kCoupled);
    lin->update(X, w, res);
    lin->apply(D, pd[t]);
    lin->apply_adjoint(y, adj[t]);
    lin->gram_row_blocks(gram[t]);
  }
  set_threads(1);
  EXPECT_LE((pd[0] - pd_ref).norm(), 1e-12 * pd_ref.norm());
  EXPECT_NEAR(adj[0].cwiseProduct(D).sum(), pd_ref.dot(y), 1e-10 * (1.0 + std::abs(pd_ref.dot(y))));
  EXPECT_LE((Eigen::MatrixXd(gram[0]) - gram_ref).norm(), 1e-12 * gram_ref.norm());
  EXPECT_EQ(pd[0], pd[1]);
  EXPECT_EQ(adj[0], adj[1]);
  EXPECT_EQ(gram[0], gram[1]);
}

TEST(RankOneTerms, MatchDenseDefinition) {
  const RankOneData d = random_rank_one(9, 5, 1);
  const RankOneTerms terms(9, d.a, d.targets);
  EXPECT_EQ(terms.family(), "rank-one");
  EXPECT_EQ(check_constraint_set(terms, rank_one_matrices(d)), "");
  // Rows are coupled by a dense a; the flags must say so (the ADMM would solve the wrong system).
  auto lin = terms.make_linearization(SplitMode::kRowSplit);
  EXPECT_FALSE(lin->rows_decoupled());
  EXPECT_FALSE(lin->curvature_is_diagonal());
}

TEST(RankOneTerms, CenteringTermIsSquaredSum) {
  const RankOneTerms c = RankOneTerms::centering(6);
  std::mt19937_64 rng(2);
  const Matrix X = random_matrix(6, 3, 1.0, rng);
  Vector v;
  c.evaluate(X, v);
  ASSERT_EQ(v.size(), 1);
  EXPECT_NEAR(v[0], X.colwise().sum().squaredNorm(), 1e-12);
  EXPECT_EQ(c.targets()[0], 0.0);
}

TEST(RankOneTerms, SingleEntryVectorsDecoupleRows) {
  // a = 3 e_2 and a = -e_4: Q diagonal, so both flags are true and checked exactly by the helper.
  Vector a1 = Vector::Zero(5), a2 = Vector::Zero(5);
  a1[2] = 3.0;
  a2[4] = -1.0;
  const RankOneTerms terms(5, {a1, a2}, Vector::Constant(2, 1.0));
  EXPECT_TRUE(terms.single_entry());
  EXPECT_EQ(check_constraint_set(terms, {a1 * a1.transpose(), a2 * a2.transpose()}), "");
  EXPECT_TRUE(terms.make_linearization(SplitMode::kCoupled)->rows_decoupled());
}

TEST(RankOneTerms, RejectBadInput) {
  EXPECT_THROW(RankOneTerms(3, {Vector::Zero(3)}, Vector::Zero(1)), Error);        // Q = 0
  EXPECT_THROW(RankOneTerms(3, {Vector::Ones(4)}, Vector::Zero(1)), Error);        // wrong length
  EXPECT_THROW(RankOneTerms(3, {Vector::Ones(3)}, Vector::Zero(2)), Error);        // count mismatch
  EXPECT_THROW(RankOneTerms(3, {Vector::Ones(3)}, Vector::Constant(1, NAN)), Error);
  try {
    RankOneTerms(3, {Vector::Ones(3), Vector::Zero(3)}, Vector::Zero(2));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank-one term 1"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Composite terms.

TEST(CompositeTerms, ConcatenatesParts) {
  const EntryData pairs = random_pairs(8, 20, 3);
  const auto terms = mvu_terms(pairs);
  EXPECT_EQ(terms->family(), "composite(distance+rank-one)");
  EXPECT_EQ(terms->size(), 21);
  EXPECT_EQ(terms->offset(1), 20);
  EXPECT_EQ(terms->targets()[20], 0.0);
  EXPECT_TRUE(terms->targets().head(20) == pairs.targets);
  EXPECT_EQ(check_constraint_set(*terms, mvu_matrices(pairs)), "");
  // The centering term couples every row, so a row-split request builds every part coupled: one
  // split term per pair (b = w r / 2), then the centering term, in that order.
  auto lin = terms->make_linearization(SplitMode::kRowSplit);
  std::mt19937_64 rng(4);
  const Matrix X = random_matrix(8, 2, 1.0, rng);
  Vector values;
  terms->evaluate(X, values);
  const Vector w = Vector::LinSpaced(21, 0.5, 1.5), r = values - terms->targets();
  lin->update(X, w, r);
  EXPECT_EQ(lin->size(), 21);
  EXPECT_LE((lin->offsets() - 0.5 * w.cwiseProduct(r)).norm(), 1e-12 * r.norm());
  EXPECT_NEAR(lin->offsets()[20], 0.5 * 1.5 * X.colwise().sum().squaredNorm(), 1e-12);
  EXPECT_FALSE(lin->rows_decoupled());
  EXPECT_FALSE(lin->curvature_is_diagonal());
  // ... and exactly the coupled linearisation: the same P(D).
  auto coupled = terms->make_linearization(SplitMode::kCoupled);
  coupled->update(X, w, r);
  const Matrix D = random_matrix(8, 2, 1.0, rng);
  Vector a, b;
  lin->apply(D, a);
  coupled->apply(D, b);
  EXPECT_LE((a - b).norm(), 1e-12 * b.norm());
}

TEST(CompositeTerms, ThreeFamiliesIncludingDense) {
  const EntryData entries = random_entries(7, 15, 5), pairs = random_pairs(7, 10, 6);
  const RankOneData r1 = random_rank_one(7, 2, 7);
  const auto dense = random_dense_terms(7, 3, 8);
  const CompositeTerms terms({entry_terms(entries), distance_terms(pairs),
                              std::make_shared<RankOneTerms>(7, r1.a, r1.targets), dense});
  std::vector<Eigen::MatrixXd> Q = entry_matrices(entries);
  for (const auto& q : distance_matrices(pairs)) Q.push_back(q);
  for (const auto& q : rank_one_matrices(r1)) Q.push_back(q);
  for (const auto& s : dense->symmetric_parts()) Q.push_back(s);
  EXPECT_EQ(check_constraint_set(terms, Q), "");
}

TEST(CompositeTerms, RowSplitPartsStayDecoupled) {
  // Entry + distance terms both split by rows: the union does too, and the helper verifies that
  // P*P is then exactly the summed row blocks.
  const EntryData entries = random_entries(6, 12, 9), pairs = random_pairs(6, 8, 10);
  const CompositeTerms terms({entry_terms(entries), distance_terms(pairs)});
  auto lin = terms.make_linearization(SplitMode::kRowSplit);
  std::mt19937_64 rng(5);
  const Matrix X = random_matrix(6, 2, 1.0, rng);
  Vector values;
  terms.evaluate(X, values);
  lin->update(X, Vector::Ones(20), values - terms.targets());
  EXPECT_TRUE(lin->rows_decoupled());
  EXPECT_TRUE(lin->curvature_is_diagonal());
  // Still the half-terms of both parts: as many split terms as the parts have on their own.
  Index parts_size = 0;
  for (const auto& part : terms.parts()) {
    Vector v;
    part->evaluate(X, v);
    auto own = part->make_linearization(SplitMode::kRowSplit);
    own->update(X, Vector::Ones(v.size()), v - part->targets());
    parts_size += own->size();
  }
  EXPECT_EQ(lin->size(), parts_size);
  EXPECT_GT(lin->size(), terms.size());
  std::vector<Eigen::MatrixXd> Q = entry_matrices(entries);
  for (const auto& q : distance_matrices(pairs)) Q.push_back(q);
  EXPECT_EQ(check_constraint_set(terms, Q), "");
  EXPECT_FALSE(terms.make_linearization(SplitMode::kCoupled)->rows_decoupled());
}

TEST(CompositeTerms, RejectBadParts) {
  EXPECT_THROW(CompositeTerms({}), Error);
  EXPECT_THROW(CompositeTerms({nullptr}), Error);
  try {
    CompositeTerms({distance_terms(random_pairs(6, 5, 1)), std::make_shared<RankOneTerms>(RankOneTerms::centering(7))});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("part 1 (rank-one) has n = 7"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Regularizer pieces.

TEST(LowRankRegularizer, MatchesDenseDefinitionBothSigns) {
  std::mt19937_64 rng(11);
  const Matrix U = random_matrix(9, 3, 1.0, rng);
  for (double sign : {1.0, -1.0}) {
    const LowRankRegularizer reg(Eigen::MatrixXd(U), sign);
    const Eigen::MatrixXd A = sign * Eigen::MatrixXd(U) * Eigen::MatrixXd(U).transpose();
    EXPECT_EQ(check_regularizer(reg, A), "") << "sign " << sign;
    EXPECT_EQ(reg.positive_part_is_zero(), sign < 0.0);
    EXPECT_NEAR(reg.spectral_norm(), Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(A).eigenvalues().cwiseAbs().maxCoeff(),
                1e-10);
  }
  // Without the Gershgorin majorant the solver must fall back to CG with the exact A_+.
  Vector d;
  EXPECT_FALSE(LowRankRegularizer(Eigen::MatrixXd(U), 1.0, "u", false).positive_diagonal_majorant(d));
}

TEST(LowRankRegularizer, RejectBadInput) {
  EXPECT_THROW(LowRankRegularizer(Eigen::MatrixXd::Ones(4, 2), 0.5), Error);
  EXPECT_THROW(LowRankRegularizer(Eigen::MatrixXd::Constant(4, 2, NAN), -1.0), Error);
  const LowRankRegularizer reg(Eigen::MatrixXd::Ones(4, 2), -1.0);
  Matrix out;
  EXPECT_THROW(reg.apply(Matrix::Ones(5, 2), out), Error);
}

TEST(ScaledIdentityRegularizer, MatchesDenseDefinition) {
  for (double c : {-1.0, 0.0, 2.5}) {
    const ScaledIdentityRegularizer reg(7, c);
    EXPECT_EQ(check_regularizer(reg, c * Eigen::MatrixXd::Identity(7, 7)), "") << "c = " << c;
  }
  EXPECT_THROW(ScaledIdentityRegularizer(0, -1.0), Error);
  EXPECT_THROW(ScaledIdentityRegularizer(3, INFINITY), Error);
}

// ---------------------------------------------------------------------------------------------
// The surrogate of models mixing the new pieces majorises F and touches it (check 1), for both
// split modes.

struct Piece {
  const char* name;
  std::function<Model()> make;
};

std::vector<Piece> mixed_models() {
  const Index n = 9;
  std::mt19937_64 rng(13);
  const Matrix U = random_matrix(n, 2, 1.0, rng);
  const EntryData pairs = random_pairs(n, 24, 14);
  const RankOneData r1 = random_rank_one(n, 3, 15);
  return {
      {"mvu: distance+centering, A = -I",
       [=] {
         Model m;
         m.terms = mvu_terms(pairs);
         m.quadratic = std::make_shared<ScaledIdentityRegularizer>(n, -1.0);
         return m;
       }},
      {"rank-one, A = +U U^T (Gershgorin majorant)",
       [=] {
         Model m;
         m.terms = std::make_shared<RankOneTerms>(n, r1.a, r1.targets);
         m.quadratic = std::make_shared<LowRankRegularizer>(Eigen::MatrixXd(U), 1.0);
         return m;
       }},
      {"distance+rank-one, A = +U U^T (exact A_+, CG)",
       [=] {
         Model m;
         m.terms = std::make_shared<CompositeTerms>(std::vector<std::shared_ptr<const ConstraintSet>>{
             distance_terms(pairs), std::make_shared<RankOneTerms>(n, r1.a, r1.targets)});
         m.quadratic = std::make_shared<LowRankRegularizer>(Eigen::MatrixXd(U), 1.0, "u", false);
         return m;
       }},
      {"distance+rank-one, A = -U U^T",
       [=] {
         Model m;
         m.terms = std::make_shared<CompositeTerms>(std::vector<std::shared_ptr<const ConstraintSet>>{
             distance_terms(pairs), std::make_shared<RankOneTerms>(n, r1.a, r1.targets)});
         m.quadratic = std::make_shared<LowRankRegularizer>(Eigen::MatrixXd(U), -1.0);
         return m;
       }},
  };
}

TEST(MixedModels, SurrogateMajorisesAndTouches) {
  for (const Piece& piece : mixed_models()) {
    const Model model = piece.make();
    for (const char* loss_name : {"l1", "leaky-mcp"}) {
      auto loss = load_loss(loss_name);
      EXPECT_EQ(check_majoriser(model, *loss, {0.3, 0.2}), "") << piece.name << ", " << loss_name;
    }
  }
}

// The helpers themselves can fail: a regularizer that hides its positive part, and terms whose
// curvature is too small for H to majorise F.
class HidesPositivePart final : public Regularizer {
 public:
  std::string name() const override { return "liar"; }
  Index dimension() const override { return 5; }
  void apply(const Matrix& X, Matrix& out) const override { out = 2.0 * X; }
  bool positive_part_is_zero() const override { return true; }
  void apply_positive(const Matrix& X, Matrix& out) const override { out.setZero(X.rows(), X.cols()); }
  void positive_diagonal(Vector& d) const override { d.setZero(5); }
};

class HalfCurvature final : public ConstraintSet {
 public:
  explicit HalfCurvature(std::shared_ptr<const ConstraintSet> inner) : inner_(std::move(inner)) {}
  std::string family() const override { return "half"; }
  Index dimension() const override { return inner_->dimension(); }
  Index size() const override { return inner_->size(); }
  const Vector& targets() const override { return inner_->targets(); }
  void evaluate(const Matrix& X, Vector& v) const override { inner_->evaluate(X, v); }
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override {
    inner_->apply_adjoint_sym(y, V, out);
  }
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override {
    return std::make_unique<Lin>(inner_->make_linearization(mode));
  }

 private:
  struct Lin final : TermLinearization {
    explicit Lin(std::unique_ptr<TermLinearization> l) : l_(std::move(l)) {}
    void update(const Matrix& X, const Vector& w, const Vector& r) override { l_->update(X, w, r); }
    Index size() const override { return l_->size(); }
    const Vector& offsets() const override { return l_->offsets(); }
    void apply(const Matrix& D, Vector& out) const override { l_->apply(D, out); }
    void apply_adjoint(const Vector& y, Matrix& out) const override { l_->apply_adjoint(y, out); }
    void apply_curvature(const Matrix& D, Matrix& out) const override {
      l_->apply_curvature(D, out);
      out *= 0.5;
    }
    bool curvature_is_diagonal() const override { return l_->curvature_is_diagonal(); }
    void curvature_diagonal(Vector& d) const override {
      l_->curvature_diagonal(d);
      d *= 0.5;
    }
    bool rows_decoupled() const override { return l_->rows_decoupled(); }
    void gram_row_blocks(Matrix& blocks) const override { l_->gram_row_blocks(blocks); }
    std::unique_ptr<TermLinearization> l_;
  };
  std::shared_ptr<const ConstraintSet> inner_;
};

TEST(MixedModels, HelpersRejectBrokenPieces) {
  EXPECT_NE(check_regularizer(HidesPositivePart(), 2.0 * Eigen::MatrixXd::Identity(5, 5)).find("apply_positive"),
            std::string::npos);
  const EntryData pairs = random_pairs(8, 20, 21);
  Model model;
  model.terms = std::make_shared<HalfCurvature>(mvu_terms(pairs));
  EXPECT_NE(check_majoriser(model, *load_loss("l1"), {0.0, 0.0}).find("< F(X_k + D)"), std::string::npos);
  EXPECT_NE(check_constraint_set(*model.terms, mvu_matrices(pairs)).find("curvature"), std::string::npos);
}

}  // namespace
}  // namespace sdprl

namespace {

std::map<std::string, double> metric_map(const std::vector<sdprl::Metric>& metrics) {
  std::map<std::string, double> out;
  for (const auto& m : metrics) out[m.name] = m.value;
  return out;
}

}  // namespace

TEST(HeldOutEvaluator, ReportsTheSetsItHasAndChoosesByValidation) {
  const sdprl::Matrix X = sdprl::Matrix::Constant(2, 1, 3.0);
  auto sum = [](const sdprl::Matrix& M) { return M.sum(); };
  auto twice = [](const sdprl::Matrix& M) { return 2.0 * M.sum(); };
  const sdprl::HeldOutEvaluator both(sum, twice, 4.0);
  auto m = metric_map(both.evaluate(X));
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m["validation_rmse"], 6.0);
  EXPECT_EQ(m["test_rmse"], 12.0);
  EXPECT_EQ(m["test_relative_rmse"], 3.0);
  EXPECT_TRUE(both.has_validation());
  EXPECT_EQ(both.validation_error(X), 6.0);
  // No validation set and no scale: only test_rmse, and lambda cannot be chosen by it.
  const sdprl::HeldOutEvaluator test_only({}, twice);
  m = metric_map(test_only.evaluate(X));
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m["test_rmse"], 12.0);
  EXPECT_FALSE(test_only.has_validation());
  EXPECT_THROW(test_only.validation_error(X), std::logic_error);
}
