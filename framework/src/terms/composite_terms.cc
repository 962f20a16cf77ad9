// Composite terms: several families as one ConstraintSet (see sdprl/terms/composite_terms.h).
#include "sdprl/terms/composite_terms.h"

#include <string>

#include "sdprl/error.h"

namespace sdprl {
namespace {

class CompositeLinearization final : public TermLinearization {
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
    if (!updated_) {
      // Row-split pays only when the whole Xt-step splits by rows. Decided at the first update (a
      // family may know rows_decoupled() only then), before any split term has been handed out.
      if (mode_ == SplitMode::kRowSplit && !all_rows_decoupled()) build(SplitMode::kCoupled);
      updated_ = true;
    }
    for (std::size_t p = 0; p < parts_.size(); ++p) {
      const Index begin = terms_.offset(p), len = terms_.offset(p + 1) - begin;
      parts_[p]->update(X, w.segment(begin, len), r.segment(begin, len));
    }
    // A part may size its split terms only at its first update (the dense family does).
    refresh_offsets();
    b_.resize(split_offsets_.back());
    for (std::size_t p = 0; p < parts_.size(); ++p) b_.segment(split_offsets_[p], part_size(p)) = parts_[p]->offsets();
    // Weights outside P when any part keeps them so; a part that folds them into P counts 1.
    has_weights_ = false;
    for (const auto& part : parts_) has_weights_ = has_weights_ || part->term_weights() != nullptr;
    if (has_weights_) {
      w_.resize(split_offsets_.back());
      for (std::size_t p = 0; p < parts_.size(); ++p) {
        const Vector* wp = parts_[p]->term_weights();
        if (wp)
          w_.segment(split_offsets_[p], part_size(p)) = *wp;
        else
          w_.segment(split_offsets_[p], part_size(p)).setOnes();
      }
    }
  }

  Index size() const override { return split_offsets_.back(); }
  const Vector& offsets() const override { return b_; }
  const Vector* term_weights() const override { return has_weights_ ? &w_ : nullptr; }

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

  void gram_row_blocks(Matrix& blocks) const override {
    Matrix more;
    sum_parts(blocks, more, [&](std::size_t p, Matrix& o) { parts_[p]->gram_row_blocks(o); });
  }

  void gram_row_traces(Vector& traces) const override {
    Vector more;
    sum_parts(traces, more, [&](std::size_t p, Vector& o) { parts_[p]->gram_row_traces(o); });
  }

  // Shared only when every part's blocks are (their sum is then shared too).
  bool shared_gram_block(Matrix& block) const override {
    Matrix more;
    if (!parts_[0]->shared_gram_block(block)) return false;
    for (std::size_t p = 1; p < parts_.size(); ++p) {
      if (!parts_[p]->shared_gram_block(more)) return false;
      block += more;
    }
    return true;
  }

 private:
  void build(SplitMode mode) {
    parts_.clear();
    for (const auto& part : terms_.parts()) parts_.push_back(part->make_linearization(mode));
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
  bool updated_ = false;
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
