// Rank-one terms Q = a a^T (see sdprl/terms/rank_one_terms.h for the algebra and why they are never
// row-split).
#include "sdprl/terms/rank_one_terms.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sdprl/error.h"

namespace sdprl {
namespace {

class RankOneLinearization final : public TermLinearization {
 public:
  explicit RankOneLinearization(const RankOneTerms& terms) : A_(terms.vectors()), single_entry_(terms.single_entry()) {}

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    // Row tau of WV is w_tau v_tau = w_tau a_tau^T X_k: P_tau = a_tau (row tau of WV).
    WV_.noalias() = A_.transpose() * X;
    WV_.array().colwise() *= w.array();
    w_ = w;
    b_ = 0.5 * w.cwiseProduct(r);
    // diag(C)_i = sum_tau w_tau a_{i tau}^2.
    diag_.noalias() = A_.cwiseAbs2() * w;
  }

  Index size() const override { return b_.size(); }
  const Vector& offsets() const override { return b_; }

  void apply(const Matrix& D, Vector& out) const override {
    // <D, P_tau> = (a_tau^T D) . (w_tau v_tau).
    const Eigen::MatrixXd AtD = A_.transpose() * D;
    out = AtD.cwiseProduct(WV_).rowwise().sum();
  }

  void apply_adjoint(const Vector& y, Matrix& out) const override {
    // sum_tau y_tau a_tau (w_tau v_tau) = A (diag(y) WV).
    out.noalias() = A_ * (y.asDiagonal() * WV_);
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override {
    // C D = A diag(w) A^T D.
    const Eigen::MatrixXd AtD = A_.transpose() * D;
    out.noalias() = A_ * (w_.asDiagonal() * AtD);
  }
  bool curvature_is_diagonal() const override { return single_entry_; }
  void curvature_diagonal(Vector& d) const override { d = diag_; }
  bool rows_decoupled() const override { return single_entry_; }

  void gram_row_blocks(Matrix& blocks) const override {
    // Row i of P_tau is a_{i tau} w_tau v_tau, so block i = sum_tau a_{i tau}^2 (w v)^T (w v).
    const Index n = A_.rows(), r = WV_.cols();
    blocks.setZero(n * r, r);
    for (Index k = 0; k < A_.cols(); ++k) {
      const Eigen::MatrixXd outer = WV_.row(k).transpose() * WV_.row(k);
      for (Index i = 0; i < n; ++i) {
        const double a2 = A_(i, k) * A_(i, k);
        if (a2 != 0.0) blocks.middleRows(i * r, r) += a2 * outer;
      }
    }
  }

 private:
  const Eigen::MatrixXd& A_;  // the columns a_tau, owned by the terms
  bool single_entry_;
  Eigen::MatrixXd WV_;  // m x r
  Vector w_, b_, diag_;
};

}  // namespace

RankOneTerms::RankOneTerms(Index n, const std::vector<Vector>& a, Vector targets) : targets_(std::move(targets)) {
  if (n <= 0) throw Error("", "rank-one terms: dimension must be positive, got " + std::to_string(n));
  if (static_cast<Index>(a.size()) != targets_.size())
    throw Error("", "rank-one terms: " + std::to_string(a.size()) + " vectors but " +
                        std::to_string(targets_.size()) + " targets");
  vectors_.resize(n, static_cast<Index>(a.size()));
  single_entry_ = true;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const std::string which = "rank-one term " + std::to_string(k);
    if (a[k].size() != n)
      throw Error("", which + ": vector a has length " + std::to_string(a[k].size()) + ", expected n = " +
                          std::to_string(n));
    if (!a[k].allFinite()) throw Error("", which + ": vector a has a NaN/Inf entry");
    const Index nonzeros = (a[k].array() != 0.0).count();
    if (nonzeros == 0) throw Error("", which + ": a = 0 gives Q = 0 (the term would be the constant |t|)");
    if (!std::isfinite(targets_[static_cast<Index>(k)])) throw Error("", which + ": target is not finite");
    if (nonzeros > 1) single_entry_ = false;
    vectors_.col(static_cast<Index>(k)) = a[k];
  }
}

RankOneTerms::~RankOneTerms() = default;

RankOneTerms RankOneTerms::centering(Index n, double target) {
  return RankOneTerms(n, {Vector::Ones(std::max<Index>(n, 0))}, Vector::Constant(1, target));
}

void RankOneTerms::evaluate(const Matrix& X, Vector& values) const {
  values = (vectors_.transpose() * X).rowwise().squaredNorm();
}

void RankOneTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  // sum_tau y_tau a_tau a_tau^T V.
  out.noalias() = vectors_ * (y.asDiagonal() * (vectors_.transpose() * V));
}

std::unique_ptr<TermLinearization> RankOneTerms::make_linearization(SplitMode) const {
  return std::make_unique<RankOneLinearization>(*this);
}

}  // namespace sdprl
