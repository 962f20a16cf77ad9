// All entry terms, held implicitly (see sdprl/terms/all_entries_terms.h for the algebra).
#include "sdprl/terms/all_entries_terms.h"

#include <cmath>
#include <string>

#include "sdprl/error.h"

namespace sdprl {
namespace {

using MatrixMap = Eigen::Map<Matrix>;
using ConstMatrixMap = Eigen::Map<const Matrix>;


class AllEntriesLinearization final : public TermLinearization {
 public:
  AllEntriesLinearization(Index n, SplitMode mode) : n_(n), mode_(mode) {}

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    X_ = X;
    W_ = ConstMatrixMap(w.data(), n_, n_);
    b_ = 0.5 * w.cwiseProduct(r);  // both modes: b = W r / 2
    if (mode_ == SplitMode::kRowSplit) {
      // The merge of the half-terms of (i, j) and (j, i) needs W and r symmetric. The solver's are
      // (evaluate() is exactly symmetric and w = phi'(|r|)); other callers get the symmetrised ones.
      scratch_ = W_.transpose();
      if (scratch_ != W_) W_ = 0.5 * (W_ + scratch_);
      MatrixMap B(b_.data(), n_, n_);
      scratch_ = B.transpose();
      if (scratch_ != B) B = 0.5 * (B + scratch_);
    }
    // C_ii = sum over the terms that touch row i: w_ij / 2 from (i, j) and w_ji / 2 from (j, i) for
    // j != i, and w_ii from (i, i).
    curvature_ = 0.5 * (W_.rowwise().sum() + W_.colwise().sum().transpose());
  }

  Index size() const override { return n_ * n_; }
  const Vector& offsets() const override { return b_; }

  void apply(const Matrix& D, Vector& out) const override {
    out.resize(size());
    MatrixMap M(out.data(), n_, n_);
    M.noalias() = D * X_.transpose();
    if (mode_ == SplitMode::kCoupled) {
      scratch_ = M.transpose();
      M = 0.5 * (M + scratch_);
    }
    M.array() *= W_.array();
  }

  void apply_adjoint(const Vector& y, Matrix& out) const override {
    scratch_ = ConstMatrixMap(y.data(), n_, n_).cwiseProduct(W_);
    if (mode_ == SplitMode::kCoupled) {
      scratch2_ = scratch_.transpose();
      scratch_ = 0.5 * (scratch_ + scratch2_);
    }
    out.noalias() = scratch_ * X_;
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override { out = curvature_.asDiagonal() * D; }
  bool curvature_is_diagonal() const override { return true; }
  void curvature_diagonal(Vector& d) const override { d = curvature_; }
  bool rows_decoupled() const override { return mode_ == SplitMode::kRowSplit; }

  void gram_row_blocks(Matrix& blocks) const override {
    // Block i = sum_j W_ij^2 x_j x_j^T = (diag(W_i.) X)^T (diag(W_i.) X): O(n^2 r^2) in all, the
    // dominant cost of an MM step here. Exact for kRowSplit; for kCoupled (block i there is
    // sum_j (W_ij/2)^2 (x_j x_j^T) over the two orders, plus the diagonal term) half of it serves as
    // the preconditioner.
    const Index r = X_.cols();
    blocks.resize(n_ * r, r);
    const double factor = mode_ == SplitMode::kRowSplit ? 1.0 : 0.5;
    Eigen::MatrixXd Y(n_, r), block(r, r);
    if (n_ > 0 && (W_.array() == W_(0, 0)).all()) {
      // Equal weights (the l1 loss: w = 1 everywhere): every block is w^2 X^T X, O(n r^2) in all.
      block.setZero();
      block.selfadjointView<Eigen::Lower>().rankUpdate(X_.transpose(), factor * W_(0, 0) * W_(0, 0));
      block = block.selfadjointView<Eigen::Lower>();
      for (Index i = 0; i < n_; ++i) blocks.middleRows(i * r, r) = block;
      return;
    }
    for (Index i = 0; i < n_; ++i) {
      Y = W_.row(i).transpose().asDiagonal() * X_;
      block.setZero();
      block.selfadjointView<Eigen::Lower>().rankUpdate(Y.transpose(), factor);
      blocks.middleRows(i * r, r) = block.selfadjointView<Eigen::Lower>();
    }
  }

 private:
  Index n_;
  SplitMode mode_;
  Matrix X_, W_;
  Vector b_, curvature_;
  mutable Matrix scratch_, scratch2_;
};

}  // namespace

AllEntriesTerms::AllEntriesTerms(Index n) : n_(n) {
  if (n <= 0) throw Error("", "all-entries terms: dimension must be positive, got " + std::to_string(n));
  targets_.setZero(n * n);
}

AllEntriesTerms::AllEntriesTerms(Index n, const Matrix& targets) : AllEntriesTerms(n) {
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

void AllEntriesTerms::evaluate(const Matrix& X, Vector& values) const {
  // Z = X X^T written straight into values, both triangles bit-identical (one triangle computed,
  // then mirrored): the row-split linearisation relies on exact symmetry.
  values.setZero(n_ * n_);
  MatrixMap Z(values.data(), n_, n_);
  Z.selfadjointView<Eigen::Lower>().rankUpdate(X);
  Z.triangularView<Eigen::StrictlyUpper>() = Z.transpose();
}

void AllEntriesTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  const ConstMatrixMap Y(y.data(), n_, n_);
  // sum_ij y_ij sym(e_i e_j^T) V = sym(Y) V.
  out.noalias() = 0.5 * (Y * V);
  out.noalias() += 0.5 * (Y.transpose() * V);
}

std::unique_ptr<TermLinearization> AllEntriesTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<AllEntriesLinearization>(n_, mode);
}

}  // namespace sdprl
