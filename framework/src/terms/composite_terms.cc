// Composite terms: several families as one ConstraintSet (see sdprl/terms/composite_terms.h).
#include "sdprl/terms/composite_terms.h"

#include <algorithm>
#include <string>

#include "sdprl/error.h"
#include "sdprl/loss.h"

namespace sdprl {
namespace {

// The capabilities, forwarded one rule each:
//  RowSplitView:    offered only by a composite of one part, as that part's (with two or more parts
//                   the split terms are numbered part by part, not row by row as the view requires);
//  OnePassUpdate:   offered when every part offers it (each part's pass, their sums added);
//  ExternalWeights: offered when any part offers it (a part that folds its weights into P has
//                   w_h = 1: the same H);
//  GramSummary:     always offered: the sums of the parts' traces, each part's own or the generic
//                   ones from its blocks; a shared block when every part has one.
class CompositeLinearization final : public TermLinearization,
                                     public OnePassUpdate,
                                     public ExternalWeights,
                                     public GramSummary {
 public:
  CompositeLinearization(const CompositeTerms& terms, SplitMode mode) : terms_(terms), mode_(mode) {
    build(mode);
    const std::size_t p = parts_.size();
    split_offsets_.assign(p + 1, 0);
    part_values_.resize(p);
    part_y_.resize(p);
    refresh_offsets();
  }

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    settle();
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      const Index begin = terms_.offset(p), len = terms_.offset(p + 1) - begin;
      parts_[p]->update(X, w.segment(begin, len), r.segment(begin, len));
    }
    collect();
  }

  OnePassUpdate* one_pass() override {
    settle();
    for (const auto& part : parts_)
      if (!part->one_pass()) return nullptr;
    return this;
  }

  void update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum, double* weighted_abs_sum,
                        RowConsumer* rows) override {
    settle();
    *phi_sum = 0.0;
    *weighted_abs_sum = 0.0;
    for (const auto& part : parts_) {
      double phi = 0.0, abs = 0.0;
      part->one_pass()->update_with_loss(X, loss, &phi, &abs, parts_.size() == 1 ? rows : nullptr);
      *phi_sum += phi;
      *weighted_abs_sum += abs;
    }
    collect();
  }

  const RowSplitView* row_split() const override { return parts_.size() == 1 ? parts_[0]->row_split() : nullptr; }

  Index size() const override { return split_offsets_.back(); }
  // One part: the part's own b (a RowConsumer of its one-pass update reads it row by row).
  const Vector& offsets() const override { return parts_.size() == 1 ? parts_[0]->offsets() : b_; }

  const ExternalWeights* external_weights() const override { return has_weights_ ? this : nullptr; }
  const Vector& term_weights() const override { return w_; }

  void apply(const Matrix& D, Vector& out) const override {
    out.resize(size());
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      parts_[p]->apply(D, part_values_[p]);
      out.segment(split_offsets_[p], part_size(p)) = part_values_[p];
    }
  }

  // P*(y), C D, diag(C) and the Gram blocks are sums over the parts (each split term belongs to one).
  void apply_adjoint(const Vector& y, Matrix& out) const override {
    for (std::size_t p = 0; p < parts_.size(); ++p) part_y_[p] = y.segment(split_offsets_[p], part_size(p));
    sum_parts(out, work_, [&](std::size_t p, Matrix& o) { parts_[p]->apply_adjoint(part_y_[p], o); });
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override {
    sum_parts(out, work_, [&](std::size_t p, Matrix& o) { parts_[p]->apply_curvature(D, o); });
  }

  bool curvature_is_diagonal() const override {
    for (const auto& part : parts_)
      if (!part->curvature_is_diagonal()) return false;
    return true;
  }

  void curvature_diagonal(Vector& d) const override {
    Vector more;
    sum_parts(d, more, [&](std::size_t p, Vector& o) { parts_[p]->curvature_diagonal(o); });
  }

  bool rows_decoupled() const override { return all_rows_decoupled(); }
  // Each term is one part's: the largest part's bound, unknown when one part's is.
  Index rows_per_term() const override {
    Index most = 0;
    for (const auto& part : parts_) {
      const Index k = part->rows_per_term();
      if (k == 0) return 0;
      most = std::max(most, k);
    }
    return most;
  }

  void gram_row_blocks(Matrix& blocks) const override {
    Matrix more;
    sum_parts(blocks, more, [&](std::size_t p, Matrix& o) { parts_[p]->gram_row_blocks(o); });
  }

  const GramSummary* gram_summary() const override { return this; }

  void gram_row_traces(Vector& traces) const override {
    Vector more;
    sum_parts(traces, more, [&](std::size_t p, Vector& o) { sdprl::gram_row_traces(*parts_[p], o); });
  }

  // Shared only when every part's blocks are (their sum is then shared too).
  bool shared_gram_block(Matrix& block) const override {
    Matrix more;
    if (!sdprl::shared_gram_block(*parts_[0], block)) return false;
    for (std::size_t p = 1; p < parts_.size(); ++p) {
      if (!sdprl::shared_gram_block(*parts_[p], more)) return false;
      block += more;
    }
    return true;
  }

 private:
  void build(SplitMode mode) {
    parts_.clear();
    for (const auto& part : terms_.parts()) parts_.push_back(part->make_linearization(mode));
  }
  // Row-split pays only when the whole Xt-step splits by rows. Decided once, at the first update
  // or capability query of one_pass(), before any split term has been handed out.
  void settle() {
    if (settled_) return;
    if (mode_ == SplitMode::kRowSplit && !all_rows_decoupled()) build(SplitMode::kCoupled);
    settled_ = true;
  }
  // After the parts' update: the split terms' places (a part may size them only at its first
  // update, as the dense family does), b and the weights.
  void collect() {
    refresh_offsets();
    b_.resize(split_offsets_.back());
    for (std::size_t p = 0; p < parts_.size(); ++p) b_.segment(split_offsets_[p], part_size(p)) = parts_[p]->offsets();
    has_weights_ = false;
    for (const auto& part : parts_) has_weights_ = has_weights_ || part->external_weights() != nullptr;
    if (has_weights_) {
      w_.resize(split_offsets_.back());
      for (std::size_t p = 0; p < parts_.size(); ++p) {
        const Vector* wp = sdprl::term_weights(*parts_[p]);
        if (wp)
          w_.segment(split_offsets_[p], part_size(p)) = *wp;
        else
          w_.segment(split_offsets_[p], part_size(p)).setOnes();
      }
    }
  }
  bool all_rows_decoupled() const {
    for (const auto& part : parts_)
      if (!part->rows_decoupled()) return false;
    return true;
  }
  Index part_size(std::size_t p) const { return split_offsets_[p + 1] - split_offsets_[p]; }
  // out = sum_p f(p), with `scratch` holding each later part's contribution.
  template <class T, class F>
  void sum_parts(T& out, T& scratch, F&& f) const {
    f(0, out);
    for (std::size_t p = 1; p < parts_.size(); ++p) {
      f(p, scratch);
      out += scratch;
    }
  }
  void refresh_offsets() {
    for (std::size_t p = 0; p < parts_.size(); ++p) split_offsets_[p + 1] = split_offsets_[p] + parts_[p]->size();
  }

  const CompositeTerms& terms_;
  SplitMode mode_;
  bool settled_ = false;
  std::vector<std::unique_ptr<TermLinearization>> parts_;
  std::vector<Index> split_offsets_;
  Vector b_, w_;
  bool has_weights_ = false;
  // Scratch for the ADMM's hot loop (one linearization belongs to one solver).
  mutable std::vector<Vector> part_values_, part_y_;
  mutable Matrix work_;
};

}  // namespace

CompositeTerms::CompositeTerms(std::vector<std::shared_ptr<const ConstraintSet>> parts) : parts_(std::move(parts)) {
  if (parts_.empty()) throw Error("", "composite terms: no parts");
  for (std::size_t p = 0; p < parts_.size(); ++p)
    if (!parts_[p]) throw Error("", "composite terms: part " + std::to_string(p) + " is null");
  n_ = parts_[0]->dimension();
  offsets_.assign(parts_.size() + 1, 0);
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    if (parts_[p]->dimension() != n_)
      throw Error("", "composite terms: part " + std::to_string(p) + " (" + parts_[p]->family() + ") has n = " +
                          std::to_string(parts_[p]->dimension()) + " but part 0 (" + parts_[0]->family() +
                          ") has n = " + std::to_string(n_));
    offsets_[p + 1] = offsets_[p] + parts_[p]->size();
  }
  targets_.resize(offsets_.back());
  for (std::size_t p = 0; p < parts_.size(); ++p)
    targets_.segment(offsets_[p], parts_[p]->size()) = parts_[p]->targets();
}

CompositeTerms::~CompositeTerms() = default;

std::string CompositeTerms::family() const {
  std::string s = "composite(";
  for (std::size_t p = 0; p < parts_.size(); ++p) s += (p ? "+" : "") + parts_[p]->family();
  return s + ")";
}

void CompositeTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
  Vector part;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    parts_[p]->evaluate(X, part);
    values.segment(offsets_[p], parts_[p]->size()) = part;
  }
}

void CompositeTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  Matrix more;
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const Vector yp = y.segment(offsets_[p], parts_[p]->size());
    if (p == 0) {
      parts_[p]->apply_adjoint_sym(yp, V, out);
    } else {
      parts_[p]->apply_adjoint_sym(yp, V, more);
      out += more;
    }
  }
}

std::unique_ptr<TermLinearization> CompositeTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<CompositeLinearization>(*this, mode);
}

}  // namespace sdprl
