// The Xt-step's strategies (framework/src/xt_step/xt_step.h): the factory picks each from the
// options and the terms' capabilities, and a CG strategy's warm start survives save and restore.
#include <gtest/gtest.h>

#include <random>

#include "admm/admm.h"
#include "mm/surrogate.h"
#include "sdprl/constraint.h"
#include "sdprl/error.h"
#include "sdprl/terms/all_entries_terms.h"
#include "sdprl/terms/sparse_matrix_terms.h"
#include "test_models.h"
#include "xt_step/blocks.h"
#include "xt_step/xt_step.h"

namespace sdprl {
namespace {

using namespace testing_support;
using xt_step::Kind;

struct Case {
  const char* name;
  bool all_entries;  // AllEntriesTerms (a shared Gram block, weights outside P), else EntryTerms
  SplitMode split;
  bool fused;
  CgPreconditioner preconditioner;
  bool constrained;
  Kind kind;
  CoupledStep coupled = CoupledStep::kCg;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class XtStepFactory : public ::testing::TestWithParam<Case> {};

TEST_P(XtStepFactory, PicksTheStrategy) {
  const Case& c = GetParam();
  const Index n = 30, r = 3;
  Model model;
  if (c.all_entries) {
    model.terms = std::make_shared<AllEntriesTerms>(n, Matrix::Identity(n, n));
  } else {
    model.terms = entry_terms(random_entries(n, 200, 3));
  }
  if (c.constrained) model.constraint = std::make_shared<Nonnegative>();
  auto loss = load_loss("l1");
  AdmmOptions options;
  options.split = c.split;
  options.preconditioner = c.preconditioner;
  options.coupled_step = c.coupled;
  Surrogate h(model, *loss, {0.5, 0.0}, c.split, r);
  std::mt19937_64 rng(5);
  Matrix X = random_matrix(n, r, 1.0, rng).cwiseAbs();
  h.update(X);
  const xt_step::Paths paths{c.fused, true};
  const auto step = xt_step::make_xt_step(h, options, c.constrained, paths);
  EXPECT_EQ(step->kind(), c.kind) << step->name();
  EXPECT_EQ(step->constrained(), c.constrained && c.kind != Kind::kDualCoordinate);
  EXPECT_EQ(step->exact(), c.split == SplitMode::kRowSplit);

  // The Admm runs the one it picks, and its iterate decreases the gap.
  Admm admm(h, 2.0, options, paths);
  admm.prepare();
  ASSERT_NE(admm.xt_step(), nullptr);
  EXPECT_EQ(admm.xt_step()->name(), step->name());
  EXPECT_EQ(admm.fused(), c.kind == Kind::kFusedRows);
  EXPECT_EQ(admm.direct(), step->exact());
  AdmmState st;
  admm.reset_if_needed(st);
  admm.iterate(st, 1e-6);
  const double first = st.gap;
  for (int t = 0; t < 50; ++t) admm.iterate(st, 1e-6);
  EXPECT_TRUE(std::isfinite(st.gap));
  EXPECT_LT(st.gap, first);
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, XtStepFactory,
    ::testing::Values(
        Case{"fused_rows", false, SplitMode::kRowSplit, true, CgPreconditioner::kAuto, false, Kind::kFusedRows},
        Case{"row_blocks", false, SplitMode::kRowSplit, false, CgPreconditioner::kAuto, false, Kind::kRowBlocks},
        // X >= 0 projects row by row: its split runs inside the fused pass.
        Case{"constrained_fused_rows", false, SplitMode::kRowSplit, true, CgPreconditioner::kAuto, true,
             Kind::kFusedRows},
        Case{"constrained_row_blocks", false, SplitMode::kRowSplit, false, CgPreconditioner::kAuto, true,
             Kind::kRowBlocks},
        // All n^2 entry terms: the dense pass over tiles of rows, also under a constraint.
        Case{"dense_rows", true, SplitMode::kRowSplit, true, CgPreconditioner::kAuto, false, Kind::kDenseRows},
        Case{"constrained_dense_rows", true, SplitMode::kRowSplit, true, CgPreconditioner::kAuto, true,
             Kind::kDenseRows},
        Case{"shared_block", true, SplitMode::kRowSplit, false, CgPreconditioner::kAuto, false, Kind::kSharedBlock},
        Case{"cg_blocks", false, SplitMode::kCoupled, true, CgPreconditioner::kAuto, false, Kind::kCgBlocks},
        Case{"cg_row_scaled", false, SplitMode::kCoupled, true, CgPreconditioner::kRowScaled, false,
             Kind::kCgRowScaled},
        Case{"constrained_cg_blocks", false, SplitMode::kCoupled, true, CgPreconditioner::kBlocks, true,
             Kind::kCgBlocks},
        Case{"cg_shared_block", true, SplitMode::kCoupled, true, CgPreconditioner::kRowScaled, false,
             Kind::kCgSharedBlock},
        // The automatic coupled step on unconstrained entry terms with B diagonal: the dual
        // coordinate step, whatever CG's preconditioner is set to.
        Case{"dual_coordinate", false, SplitMode::kCoupled, true, CgPreconditioner::kBlocks, false,
             Kind::kDualCoordinate, CoupledStep::kAuto},
        Case{"dual_coordinate_whatever_cg_preconditioner", false, SplitMode::kCoupled, true,
             CgPreconditioner::kRowScaled, false, Kind::kDualCoordinate, CoupledStep::kAuto},
        // Elsewhere it is the linearised one where B is diagonal and the blocks fit the budget,
        // whatever CG's preconditioner is set to (large blocks: CoupledXtStep tests).
        Case{"linearized_blocks", false, SplitMode::kCoupled, true, CgPreconditioner::kBlocks, false,
             Kind::kLinearizedBlocks, CoupledStep::kLinearized},
        Case{"constrained_linearized_blocks", false, SplitMode::kCoupled, true, CgPreconditioner::kAuto, true,
             Kind::kLinearizedBlocks, CoupledStep::kLinearized},
        Case{"linearized_shared_block", true, SplitMode::kCoupled, true, CgPreconditioner::kRowScaled, false,
             Kind::kLinearizedSharedBlock, CoupledStep::kLinearized},
        Case{"linearized_whatever_cg_preconditioner", false, SplitMode::kCoupled, true, CgPreconditioner::kRowScaled,
             true, Kind::kLinearizedBlocks, CoupledStep::kLinearized},
        // Under X >= 0 (one set per row) the automatic coupled step is the coordinate step too: it
        // takes the constraint's multiplier itself (no constraint split), in closed form.
        Case{"dual_coordinate_under_a_constraint", false, SplitMode::kCoupled, true, CgPreconditioner::kAuto, true,
             Kind::kDualCoordinate, CoupledStep::kAuto}),
    [](const auto& info) { return std::string(info.param.name); });

// Rows of few rank-one parts (an SDPA constraint X_ii = 1 is one) keep K_i^{-1} implicitly by
// Woodbury's identity (xt_step/blocks.h): the same solves and Gram products as the dense blocks of
// gram_row_blocks(), to rounding, in both split modes, on rows of 0, 1, 2 (one pair dependent) and
// 3 parts; only a row of r / 2 parts or more keeps an r x r block. The parts are copied at build():
// a later update of the surrogate does not change the factored blocks.
TEST(RowBlockInverseParts, WoodburyRowsSolveAsTheDenseBlocks) {
  const Index n = 24, r = 16;  // above the fixed-size kernels' ranks, where the parts are used
  std::vector<std::vector<SparseMatrixTerms::Entry>> entries;
  for (std::int32_t i = 0; i + 1 < n; ++i) entries.push_back({{i, i, 1.0}});             // one part; row 23: none
  entries.push_back({{5, 5, 2.0}});                                                       // row 5: a dependent pair
  for (std::int32_t i = 3; i + 2 < n; i += 3) entries.push_back({{i, i + 1, 0.7}});      // a part on two rows
  for (std::int32_t j = 2; j < 12; ++j) entries.push_back({{0, j, 0.3 + 0.01 * j}});     // row 0: 11 parts
  Model model;
  model.terms = std::make_shared<SparseMatrixTerms>(n, entries, Vector::Ones(static_cast<Index>(entries.size())));
  auto loss = load_loss("l1");
  for (const SplitMode mode : {SplitMode::kCoupled, SplitMode::kRowSplit}) {
    SCOPED_TRACE(to_string(mode));
    Surrogate h(model, *loss, {0.5, 0.0}, mode, r);
    std::mt19937_64 rng(3);
    h.update(random_matrix(n, r, 1.0, rng));
    xt_step::RowBlockInverse blocks;
    const double trace = blocks.build(h);
    const double rho = 3.0, rho_k = 0.25;
    blocks.factor(h, rho, rho_k);
    ASSERT_TRUE(blocks.built(n, r));
    EXPECT_EQ(blocks.inverse().size(), static_cast<std::size_t>(r * r));  // row 0's block alone

    Matrix gram;
    h.linearization().gram_row_blocks(gram);
    const Vector bd = h.b_diagonal();
    h.update(random_matrix(n, r, 1.0, rng));  // another iterate: the blocks keep build()'s parts
    double expected_trace = 0.0;
    const Matrix R = random_matrix(n, r, 1.0, rng);
    Matrix solved, product;
    blocks.apply(R, solved);
    blocks.apply_gram(R, product);
    for (Index i = 0; i < n; ++i) {
      const Matrix G = gram.middleRows(i * r, r);
      expected_trace += G.trace();
      Matrix K = rho * G;
      K.diagonal().array() += 2.0 * bd[i] + rho_k;
      const Vector x = K.llt().solve(Vector(R.row(i).transpose()));
      EXPECT_LT((Vector(solved.row(i).transpose()) - x).norm(), 1e-12 * x.norm()) << "row " << i;
      const Vector g = G * R.row(i).transpose();
      EXPECT_LE((Vector(product.row(i).transpose()) - g).norm(), 1e-12 * g.norm()) << "row " << i;
    }
    EXPECT_NEAR(trace, expected_trace, 1e-12 * expected_trace);

    // s_i / rho far below rounding: the dependent pair's LLT takes the dense blocks' ridge, and
    // every solve stays finite.
    blocks.factor(h, 1e20, 0.0);
    blocks.apply(R, solved);
    EXPECT_TRUE(solved.allFinite());
  }
}

// A constraint whose projection couples rows (a Frobenius ball) keeps the generic constraint split
// with the exact row blocks: the fused pass projects one row at a time.
TEST(XtStepFactory, AConstraintThatCouplesRowsKeepsTheGenericSplit) {
  const Index n = 30, r = 3;
  Model model;
  model.terms = entry_terms(random_entries(n, 200, 3));
  model.constraint = std::make_shared<FrobeniusBall>(2.0);
  auto loss = load_loss("l1");
  Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kRowSplit, r);
  std::mt19937_64 rng(6);
  h.update(random_matrix(n, r, 0.1, rng));
  const auto step = xt_step::make_xt_step(h, AdmmOptions{}, true, xt_step::Paths{});
  EXPECT_EQ(step->kind(), Kind::kRowBlocks) << step->name();
  EXPECT_TRUE(step->constrained());
}

// The CG warm start's bytes: what encode() writes decode() reads back bit for bit; anything else
// is refused.
TEST(XtStepWarmStart, EncodeDecodeRoundTrip) {
  std::mt19937_64 rng(2);
  xt_step::CgWarmStart warm;
  warm.D = random_matrix(7, 2, 1.0, rng);
  warm.X_preconditioner = random_matrix(7, 2, 1.0, rng);
  warm.preconditioner_age = 3;
  const std::string bytes = xt_step::encode(warm);
  xt_step::CgWarmStart back;
  ASSERT_TRUE(xt_step::decode(bytes, &back));
  EXPECT_TRUE(back.D == warm.D);
  EXPECT_TRUE(back.X_preconditioner == warm.X_preconditioner);
  EXPECT_EQ(back.preconditioner_age, 3);
  EXPECT_FALSE(xt_step::decode(bytes.substr(0, bytes.size() - 1), &back));
  EXPECT_FALSE(xt_step::decode(bytes + "x", &back));
  EXPECT_FALSE(xt_step::decode("", &back));
}

// An exact strategy keeps no warm start: it saves none and refuses one.
TEST(XtStepWarmStart, ExactStrategyKeepsNone) {
  Model model;
  model.terms = entry_terms(random_entries(20, 100, 4));
  auto loss = load_loss("l1");
  Surrogate h(model, *loss, {0.5, 0.0}, SplitMode::kRowSplit, 2);
  std::mt19937_64 rng(6);
  h.update(random_matrix(20, 2, 1.0, rng));
  Admm admm(h, 2.0, AdmmOptions{});
  admm.prepare();
  AdmmState st;
  admm.reset_if_needed(st);
  EXPECT_EQ(admm.save_warm_start(st), "");
  EXPECT_THROW(admm.restore_warm_start("bytes", h, st), Error);
}

}  // namespace
}  // namespace sdprl
