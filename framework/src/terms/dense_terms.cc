// Dense terms: general Q_tau, the paper's SDP-RL-dense path (see sdprl/terms/dense_terms.h).
#include "sdprl/terms/dense_terms.h"

#include <cmath>
#include <string>

#include "sdprl/error.h"

namespace sdprl {
namespace {

// Every split term is a whole term (a dense Q couples all rows; there is no row split):
// P_tau = w sym(Q_tau) X_k, b_tau = w r_tau / 2, C = sum w |sym Q_tau|.
class DenseLinearization final : public TermLinearization {
 public:
  explicit DenseLinearization(const DenseTerms& terms) : terms_(terms) {}

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    const Index m = terms_.size(), n = terms_.dimension();
    P_.resize(m);
    b_.resize(m);
    C_.setZero(n, n);
    for (Index k = 0; k < m; ++k) {
      P_[k].noalias() = w[k] * (terms_.symmetric_parts()[k] * X);
      b_[k] = 0.5 * w[k] * r[k];
      C_.noalias() += w[k] * terms_.absolute_parts()[k];
    }
  }

  Index size() const override { return b_.size(); }
  const Vector& offsets() const override { return b_; }
  void apply(const Matrix& D, Vector& out) const override {
    out.resize(size());
    for (Index k = 0; k < size(); ++k) out[k] = D.cwiseProduct(P_[k]).sum();
  }
  void apply_adjoint(const Vector& y, Matrix& out) const override {
    out.setZero(terms_.dimension(), P_.empty() ? 0 : P_[0].cols());
    for (Index k = 0; k < size(); ++k) out.noalias() += y[k] * P_[k];
  }
  void apply_curvature(const Matrix& D, Matrix& out) const override { out.noalias() = C_ * D; }
  bool curvature_is_diagonal() const override { return false; }
  void curvature_diagonal(Vector& d) const override { d = C_.diagonal(); }
  bool rows_decoupled() const override { return false; }
  void gram_row_blocks(Matrix& blocks) const override {
    const Index n = terms_.dimension(), r = P_.empty() ? 0 : P_[0].cols();
    blocks.setZero(n * r, r);
    for (Index k = 0; k < size(); ++k)
      for (Index i = 0; i < n; ++i)
        blocks.middleRows(i * r, r).noalias() += P_[k].row(i).transpose() * P_[k].row(i);
  }

 private:
  const DenseTerms& terms_;
  std::vector<Matrix> P_;
  Vector b_;
  Eigen::MatrixXd C_;
};

}  // namespace

DenseTerms::DenseTerms(Index n, std::vector<Eigen::MatrixXd> Q, Vector targets)
    : TargetedTerms(n, std::move(targets)) {
  if (static_cast<Index>(Q.size()) != size())
    throw Error("", "dense terms: " + std::to_string(Q.size()) + " matrices but " +
                        std::to_string(size()) + " targets");
  sym_.reserve(Q.size());
  abs_.reserve(Q.size());
  for (std::size_t k = 0; k < Q.size(); ++k) {
    if (Q[k].rows() != n || Q[k].cols() != n)
      throw Error("", "dense term " + std::to_string(k) + ": expected a " + std::to_string(n) + " x " +
                          std::to_string(n) + " matrix");
    if (!Q[k].allFinite()) throw Error("", "dense term " + std::to_string(k) + ": non-finite entry");
    Eigen::MatrixXd S = 0.5 * (Q[k] + Q[k].transpose());
    // |S| = V |Lambda| V^T: the matrix absolute value that majorises |<Xt, S Xt>| (docs/method.md 1).
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(S);
    abs_.push_back(eig.eigenvectors() * eig.eigenvalues().cwiseAbs().asDiagonal() *
                   eig.eigenvectors().transpose());
    sym_.push_back(std::move(S));
  }
}

DenseTerms::~DenseTerms() = default;

void DenseTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
  for (Index k = 0; k < size(); ++k) values[k] = (sym_[k] * X).cwiseProduct(X).sum();
}

void DenseTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  out.setZero(V.rows(), V.cols());
  for (Index k = 0; k < size(); ++k) out.noalias() += y[k] * (sym_[k] * V);
}

std::unique_ptr<TermLinearization> DenseTerms::make_linearization(SplitMode) const {
  return std::make_unique<DenseLinearization>(*this);
}

}  // namespace sdprl
