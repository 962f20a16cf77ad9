// All entry terms, held implicitly (see sdprl/terms/all_entries_terms.h for the algebra).
#include "sdprl/terms/all_entries_terms.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "core/loss_chunks.h"
#include "terms/dense_row_split.h"
#include "sdprl/error.h"
#include "sdprl/loss.h"

namespace sdprl {
namespace {

using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

// Exact symmetry without an n x n temporary (sparse PCA's n^2 vectors dominate its memory).
// In 64 x 64 tiles, so that the transposed reads stay in cache.
bool is_symmetric(const MatrixMap& M) {
  const Index n = M.rows(), tile = 64;
  for (Index i0 = 0; i0 < n; i0 += tile)
    for (Index j0 = 0; j0 <= i0; j0 += tile)
      for (Index i = i0; i < std::min(n, i0 + tile); ++i)
        for (Index j = j0; j < std::min(i, j0 + tile); ++j)
          if (M(i, j) != M(j, i)) return false;
  return true;
}


// values = vec(X X^T), both triangles bit-identical (one triangle computed, then mirrored): the
// row-split linearisation relies on exact symmetry.
void outer_product(const Matrix& X, Vector& values) {
  const Index n = X.rows();
  values.setZero(n * n);
  MatrixMap Z(values.data(), n, n);
  Z.selfadjointView<Eigen::Lower>().rankUpdate(X);
  Z.triangularView<Eigen::StrictlyUpper>() = Z.transpose();
}

// Offers ExternalWeights (the loss weights stay outside P), GramSummary (one shared block),
// OnePassUpdate (the rebuild forms r, w and b in the linearisation's own two n^2-vectors, so that
// the solver keeps no residual and weight vectors of its own: 2 n^2 doubles fewer) and, in
// row-split mode, the layout of DenseRowSplit (terms/dense_row_split.h).
class AllEntriesLinearization final : public TermLinearization,
                                      public ExternalWeights,
                                      public GramSummary,
                                      public OnePassUpdate,
                                      public DenseRowSplit {
 public:
  // `targets`: the family's T, or nullptr when T = 0 (then never read).
  AllEntriesLinearization(Index n, SplitMode mode, const Vector* targets) : n_(n), mode_(mode), targets_(targets) {}

  // The weights stay outside P (ExternalWeights): P and b depend on X and r only, and every row
  // block of P*P is X^T X whatever the loss.
  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    X_ = X;
    w_ = w;
    b_ = 0.5 * r;  // both modes: b = r / 2
    if (mode_ == SplitMode::kRowSplit) {
      // The merge of the half-terms of (i, j) and (j, i) needs W and r symmetric. The solver's are
      // (evaluate() is exactly symmetric and w = phi'(|r|)); other callers get the symmetrised ones.
      // Symmetrising W o r keeps H(0) = sum w |r| exactly; b is then (W o r)_sym / (2 W_sym).
      MatrixMap W(w_.data(), n_, n_), B(b_.data(), n_, n_);
      if (!is_symmetric(W) || !is_symmetric(B)) {
        const ConstMatrixMap W0(w.data(), n_, n_), R0(r.data(), n_, n_);
        Matrix WR = W0.cwiseProduct(R0);
        WR = 0.5 * (WR + Matrix(WR.transpose()));
        W = 0.5 * (W0 + Matrix(W0.transpose()));
        B = (0.5 * WR.array() / W.array()).matrix();
        B = (W.array() > 0.0).select(B, 0.25 * (R0 + Matrix(R0.transpose())));
      }
    }
    set_curvature();
  }

  // update(X, phi'(|r|), r) with r = vec(X X^T) - T, in one chunked pass after the product: Z is
  // exactly symmetric (outer_product) and T is (checked at construction), so r is, and W is as far
  // as the loss gives the same bits for the same |r| wherever the term sits in its chunk; the
  // row-split merge is not symmetrised here. The same bits as ConstraintSet::evaluate, the
  // solver's chunked loss (core/loss_chunks.h) and update() on the solver's inputs.
  void update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum, double* weighted_abs_sum,
                        RowConsumer*) override {
    X_ = X;
    outer_product(X, b_);  // Z, then r and b = r / 2 in place, chunk by chunk
    w_.resize(n_ * n_);
    const double* t = targets_ ? targets_->data() : nullptr;
    detail::chunked_loss(
        loss, n_ * n_,
        [this, t](Index start, Index len, Vector& a) {
          Eigen::Map<Vector> r(b_.data() + start, len);
          if (t) r -= Eigen::Map<const Vector>(t + start, len);
          a = r.cwiseAbs();
          r *= 0.5;
        },
        w_.data(), phi_sum, weighted_abs_sum);
    // W is symmetric here (see above), so set_curvature()'s half row sums plus half column sums
    // are the row sums: one contiguous read of W, on every thread (the same bits for any count).
    curvature_.resize(n_);
    const ConstMatrixMap W(w_.data(), n_, n_);
#pragma omp parallel for schedule(static) if (n_ * n_ > detail::kParallelWork)
    for (Index i = 0; i < n_; ++i) curvature_[i] = W.row(i).sum();
  }
  OnePassUpdate* one_pass() override { return this; }

  Index size() const override { return n_ * n_; }
  const Vector& offsets() const override { return b_; }
  const ExternalWeights* external_weights() const override { return this; }
  const Vector& term_weights() const override { return w_; }
  const GramSummary* gram_summary() const override { return this; }

  void apply(const Matrix& D, Vector& out) const override {
    out.resize(size());
    MatrixMap M(out.data(), n_, n_);
    M.noalias() = D * X_.transpose();
    if (mode_ == SplitMode::kCoupled) {
      scratch_ = M.transpose();
      M = 0.5 * (M + scratch_);
    }
  }

  void apply_adjoint(const Vector& y, Matrix& out) const override {
    const ConstMatrixMap Y(y.data(), n_, n_);
    if (mode_ == SplitMode::kCoupled) {
      out.noalias() = 0.5 * (Y * X_);
      out.noalias() += 0.5 * (Y.transpose() * X_);
    } else {
      out.noalias() = Y * X_;
    }
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override { out = curvature_.asDiagonal() * D; }
  bool curvature_is_diagonal() const override { return true; }
  void curvature_diagonal(Vector& d) const override { d = curvature_; }
  bool rows_decoupled() const override { return mode_ == SplitMode::kRowSplit; }
  // sym(e_i e_j^T) X is nonzero in rows i and j.
  Index rows_per_term() const override { return mode_ == SplitMode::kRowSplit ? 1 : 2; }

  bool shared_gram_block(Matrix& block) const override {
    // Row i of P(D) is D_i. X^T, so block i of P*P is sum_j x_j x_j^T = X^T X for every i: exact
    // for kRowSplit. For kCoupled P*P is not block diagonal (sym couples rows i and j); half of
    // X^T X, its row blocks' main part, serves as the preconditioner.
    const Index r = X_.cols();
    const double factor = mode_ == SplitMode::kRowSplit ? 1.0 : 0.5;
    block.setZero(r, r);
    block.selfadjointView<Eigen::Lower>().rankUpdate(X_.transpose(), factor);
    block = block.selfadjointView<Eigen::Lower>();
    return true;
  }

  // Every block is the shared one: n equal traces.
  void gram_row_traces(Vector& traces) const override {
    Matrix block;
    shared_gram_block(block);
    traces.setConstant(n_, block.trace());
  }

  void gram_row_blocks(Matrix& blocks) const override {
    const Index r = X_.cols();
    Matrix block;
    shared_gram_block(block);
    blocks.resize(n_ * r, r);
    for (Index i = 0; i < n_; ++i) blocks.middleRows(i * r, r) = block;
  }

 private:
  // C_ii = sum over the terms that touch row i: w_ij / 2 from (i, j) and w_ji / 2 from (j, i) for
  // j != i, and w_ii from (i, i).
  void set_curvature() {
    const ConstMatrixMap W(w_.data(), n_, n_);
    curvature_ = 0.5 * (W.rowwise().sum() + W.colwise().sum().transpose());
  }

  Index n_;
  SplitMode mode_;
  const Vector* targets_;
  Matrix X_;
  Vector w_, b_, curvature_;
  mutable Matrix scratch_;  // kCoupled's transpose in apply()
};

}  // namespace

AllEntriesTerms::AllEntriesTerms(Index n) : n_(n) {
  if (n <= 0) throw Error("", "all-entries terms: dimension must be positive, got " + std::to_string(n));
}

AllEntriesTerms::AllEntriesTerms(Index n, const Matrix& targets) : AllEntriesTerms(n) {
  targets_.setZero(n * n);
  if (targets.rows() != n || targets.cols() != n)
    throw Error("", "all-entries terms: targets are " + std::to_string(targets.rows()) + " x " +
                        std::to_string(targets.cols()) + ", expected " + std::to_string(n) + " x " +
                        std::to_string(n));
  if (!targets.allFinite()) throw Error("", "all-entries terms: a target is not finite");
  if (targets != targets.transpose())
    throw Error("", "all-entries terms: the target matrix is not symmetric (Z is)");
  MatrixMap(targets_.data(), n, n) = targets;
}

AllEntriesTerms::~AllEntriesTerms() = default;

namespace {
// Guards the implicit zero targets' first forming (targets()) against a concurrent read of them
// (make_linearization()).
std::mutex& targets_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

const Vector& AllEntriesTerms::targets() const {
  // The implicit zeros, formed on the first call (a spectral start or a certificate reads them;
  // sparse PCA's solve does not: 32 MB at n = 2000). Once formed they stay, so the reference is
  // stable; the lock makes a first call from two threads at once safe.
  const std::lock_guard<std::mutex> lock(targets_mutex());
  if (targets_.size() != n_ * n_) targets_.setZero(n_ * n_);
  return targets_;
}

void AllEntriesTerms::evaluate(const Matrix& X, Vector& values) const {
  outer_product(X, values);
}

void AllEntriesTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  const ConstMatrixMap Y(y.data(), n_, n_);
  // sum_ij y_ij sym(e_i e_j^T) V = sym(Y) V.
  out.noalias() = 0.5 * (Y * V);
  out.noalias() += 0.5 * (Y.transpose() * V);
}

std::unique_ptr<TermLinearization> AllEntriesTerms::make_linearization(SplitMode mode) const {
  // T = 0 (sparse PCA; targets_ still empty, or formed as zeros) is never read by the rebuild.
  bool zero = false;
  {
    const std::lock_guard<std::mutex> lock(targets_mutex());
    zero = (targets_.array() == 0.0).all();
  }
  return std::make_unique<AllEntriesLinearization>(n_, mode, zero ? nullptr : &targets_);
}

}  // namespace sdprl
