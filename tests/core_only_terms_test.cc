// A term family that implements only the ten core maps of TermLinearization (no capability: no
// RowSplitView, OnePassUpdate, ExternalWeights or GramSummary) runs the full solver, in both split
// modes, and reaches the iterates of the entry terms, whose every fast path is on. Its maps are the
// entry terms' own, forwarded, so that any difference comes from the solver's paths alone.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sdprl/testing/checks.h"
#include "test_models.h"

namespace sdprl {
namespace {

using namespace testing_support;

// The core maps of another linearisation, and nothing else.
class CoreOnlyLinearization final : public TermLinearization {
 public:
  explicit CoreOnlyLinearization(std::unique_ptr<TermLinearization> inner) : inner_(std::move(inner)) {}
  void update(const Matrix& X, const Vector& w, const Vector& r) override { inner_->update(X, w, r); }
  Index size() const override { return inner_->size(); }
  const Vector& offsets() const override { return inner_->offsets(); }
  void apply(const Matrix& D, Vector& out) const override { inner_->apply(D, out); }
  void apply_adjoint(const Vector& y, Matrix& out) const override { inner_->apply_adjoint(y, out); }
  void apply_curvature(const Matrix& D, Matrix& out) const override { inner_->apply_curvature(D, out); }
  bool curvature_is_diagonal() const override { return inner_->curvature_is_diagonal(); }
  void curvature_diagonal(Vector& d) const override { inner_->curvature_diagonal(d); }
  bool rows_decoupled() const override { return inner_->rows_decoupled(); }
  void gram_row_blocks(Matrix& blocks) const override { inner_->gram_row_blocks(blocks); }

 private:
  std::unique_ptr<TermLinearization> inner_;
};

class CoreOnlyTerms final : public ConstraintSet {
 public:
  explicit CoreOnlyTerms(std::shared_ptr<const ConstraintSet> inner) : inner_(std::move(inner)) {}
  std::string family() const override { return "core-only"; }
  Index dimension() const override { return inner_->dimension(); }
  Index size() const override { return inner_->size(); }
  const Vector& targets() const override { return inner_->targets(); }
  void evaluate(const Matrix& X, Vector& values) const override { inner_->evaluate(X, values); }
  void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const override {
    inner_->apply_adjoint_sym(y, V, out);
  }
  std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const override {
    return std::make_unique<CoreOnlyLinearization>(inner_->make_linearization(mode));
  }

 private:
  std::shared_ptr<const ConstraintSet> inner_;
};

TEST(CoreOnlyTerms, OffersNoCapabilityAndPassesTheChecks) {
  const EntryData d = random_entries(12, 40, 41);
  const CoreOnlyTerms terms(entry_terms(d));
  for (const SplitMode mode : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
    auto lin = terms.make_linearization(mode);
    EXPECT_EQ(lin->row_split(), nullptr);
    EXPECT_EQ(lin->one_pass(), nullptr);
    EXPECT_EQ(lin->external_weights(), nullptr);
    EXPECT_EQ(lin->gram_summary(), nullptr);
  }
  EXPECT_EQ(testing::check_constraint_set(terms, entry_matrices(d)), "");
}

// The full MM solve: the same ADMM iteration counts and objectives step by step, the same X, for
// the row-split Xt-step (entry terms: the fused row pass and the one-pass rebuild; core-only: the
// generic three-pass path) and the coupled one (entry terms: their own Gram traces).
TEST(CoreOnlyTerms, FullSolveMatchesTheEntryTerms) {
  const EntryData d = random_entries(40, 500, 42);
  Model fast, core;
  fast.terms = entry_terms(d);
  core.terms = std::make_shared<CoreOnlyTerms>(entry_terms(d));
  for (const char* loss : {"l1", "leaky-mcp"}) {
    for (const SplitMode split : {SplitMode::kRowSplit, SplitMode::kCoupled}) {
      SCOPED_TRACE(std::string(loss) + ", " + to_string(split));
      expect_same_iterates(fast, core, loss, 20, 43, split);
    }
  }
}

}  // namespace
}  // namespace sdprl
