// Distance terms Q = (e_i - e_j)(e_i - e_j)^T (see sdprl/terms/distance_terms.h for the algebra).
#include "sdprl/terms/distance_terms.h"

#include <cmath>
#include <string>

#include "rows/row_blocks.h"
#include "sdprl/error.h"
#include "terms/coupled_pairs.h"

namespace sdprl {
namespace {

// Offers a RowSplitView in row-split mode, and CoupledPairs in coupled mode once its curvature is
// made diagonal (use_diagonal_curvature(): the row-split bound ||d_i - d_j||^2 <= 2||d_i||^2 +
// 2||d_j||^2 with the whole terms, tight to first order at D = 0 as the Laplacian is).
class DistanceLinearization final : public TermLinearization, public RowSplitView, public detail::CoupledPairs {
 public:
  DistanceLinearization(const DistanceTerms& terms, SplitMode mode) : terms_(terms), mode_(mode) {
    const Index n = terms.dimension(), m = terms.size();
    const auto& rows = terms.rows();
    const auto& cols = terms.cols();
    if (mode_ == SplitMode::kRowSplit) {
      // Half-terms in CSR order by the row they touch; each term has one on each endpoint.
      detail::HalfTermCsr csr = detail::half_term_csr(n, rows, cols, /*diagonal_once=*/false);
      row_ptr_ = std::move(csr.row_ptr);
      partner_ = std::move(csr.partner);
      term_ = std::move(csr.term);
      scale_.resize(2 * m);
      b_.resize(2 * m);
    } else {
      scale_.resize(m);
      b_.resize(m);
    }
    curvature_.resize(n);
  }

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    X_ = X;
    w_ = w;
    curvature_.setZero();
    if (mode_ == SplitMode::kRowSplit) {
      for (Index i = 0; i < terms_.dimension(); ++i) {
        double d = 0.0;
        for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p) {
          const Index k = term_[p];
          scale_[p] = w[k];
          b_[p] = 0.25 * w[k] * r[k];
          d += 2.0 * w[k];  // ||d_i - d_j||^2 <= 2||d_i||^2 + 2||d_j||^2
        }
        curvature_[i] = d;
      }
    } else {
      const auto& rows = terms_.rows();
      const auto& cols = terms_.cols();
      for (Index k = 0; k < terms_.size(); ++k) {
        scale_[k] = w[k];
        b_[k] = 0.5 * w[k] * r[k];
        // The Laplacian's diagonal, or its diagonal majorant 2 diag.
        const double d = diagonal_curvature_ ? 2.0 * w[k] : w[k];
        curvature_[rows[k]] += d;
        curvature_[cols[k]] += d;
      }
    }
  }

  Index size() const override { return b_.size(); }
  const Vector& offsets() const override { return b_; }

  void apply(const Matrix& D, Vector& out) const override {
    out.resize(size());
    if (mode_ == SplitMode::kRowSplit) {
      for (Index i = 0; i < terms_.dimension(); ++i)
        for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p)
          out[p] = scale_[p] * D.row(i).dot(X_.row(i) - X_.row(partner_[p]));
    } else {
      const auto& rows = terms_.rows();
      const auto& cols = terms_.cols();
      for (Index k = 0; k < size(); ++k) {
        const Index i = rows[k], j = cols[k];
        out[k] = scale_[k] * (D.row(i) - D.row(j)).dot(X_.row(i) - X_.row(j));
      }
    }
  }

  void apply_adjoint(const Vector& y, Matrix& out) const override {
    out.setZero(X_.rows(), X_.cols());
    if (mode_ == SplitMode::kRowSplit) {
      for (Index i = 0; i < terms_.dimension(); ++i)
        for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p)
          out.row(i).noalias() += (y[p] * scale_[p]) * (X_.row(i) - X_.row(partner_[p]));
    } else {
      const auto& rows = terms_.rows();
      const auto& cols = terms_.cols();
      // Element by element: an Eigen::RowVectorXd per term was a heap allocation per term.
      const Index r = X_.cols();
      for (Index k = 0; k < size(); ++k) {
        const Index i = rows[k], j = cols[k];
        const double a = y[k] * scale_[k];
        for (Index c = 0; c < r; ++c) {
          const double g = a * (X_(i, c) - X_(j, c));
          out(i, c) += g;
          out(j, c) -= g;
        }
      }
    }
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override {
    if (curvature_is_diagonal()) {
      out = curvature_.asDiagonal() * D;
      return;
    }
    // The weighted Laplacian sum w (e_i - e_j)(e_i - e_j)^T applied term by term.
    out.setZero(D.rows(), D.cols());
    const auto& rows = terms_.rows();
    const auto& cols = terms_.cols();
    const Index r = D.cols();
    for (Index k = 0; k < terms_.size(); ++k) {
      const Index i = rows[k], j = cols[k];
      for (Index c = 0; c < r; ++c) {
        const double g = scale_[k] * (D(i, c) - D(j, c));
        out(i, c) += g;
        out(j, c) -= g;
      }
    }
  }
  bool curvature_is_diagonal() const override { return mode_ == SplitMode::kRowSplit || diagonal_curvature_; }
  void curvature_diagonal(Vector& d) const override { d = curvature_; }
  bool rows_decoupled() const override { return mode_ == SplitMode::kRowSplit; }
  // A whole term ||x_i - x_j||^2 is nonzero in rows i and j.
  Index rows_per_term() const override { return mode_ == SplitMode::kRowSplit ? 1 : 2; }

  // Row-split: half-term p of row i is P_p = e_i a_p^T with a_p = scale_p (x_i - x_partner(p)).
  const RowSplitView* row_split() const override { return mode_ == SplitMode::kRowSplit ? this : nullptr; }
  const Index* row_offsets() const override { return row_ptr_.data(); }
  void row_vectors(Index i, double* out) const override {
    const Index r = X_.cols();
    const double* xi = X_.data() + i * r;
    const Index begin = row_ptr_[i], deg = row_ptr_[i + 1] - begin;
    for (Index q = 0; q < deg; ++q) {
      const double s = scale_[begin + q];
      const double* xj = X_.data() + static_cast<Index>(partner_[begin + q]) * r;
      for (Index c = 0; c < r; ++c) out[c * deg + q] = s * (xi[c] - xj[c]);
    }
  }

  // CoupledPairs (kDistance): P_k = w_k (e_i - e_j)(x_i - x_j)^T.
  detail::PairFamily family() const override { return detail::PairFamily::kDistance; }
  const PairTerms& pair_terms() const override { return terms_; }
  const Vector& term_scales() const override { return scale_; }
  const Matrix& point() const override { return X_; }
  bool whole_terms_diagonal() const override { return mode_ == SplitMode::kCoupled && diagonal_curvature_; }
  void use_diagonal_curvature() override { diagonal_curvature_ = mode_ == SplitMode::kCoupled; }

  void gram_row_blocks(Matrix& blocks) const override {
    const Index n = terms_.dimension(), r = X_.cols();
    if (mode_ == SplitMode::kRowSplit) {
      detail::row_gram_blocks(*this, row_ptr_.data(), n, r, detail::max_row_degree(row_ptr_.data(), n), blocks);
      return;
    }
    blocks.setZero(n * r, r);
    const auto& rows = terms_.rows();
    const auto& cols = terms_.cols();
    // Both modes: P has row i equal to +-w u and row j equal to -+w u, u = x_i - x_j.
    for (Index k = 0; k < terms_.size(); ++k) {
      const Index i = rows[k], j = cols[k];
      const double w = w_[k];
      const Eigen::RowVectorXd u = X_.row(i) - X_.row(j);
      const Eigen::MatrixXd uu = (w * w) * (u.transpose() * u);
      blocks.middleRows(i * r, r) += uu;
      blocks.middleRows(j * r, r) += uu;
    }
  }

 private:
  const DistanceTerms& terms_;
  SplitMode mode_;
  std::vector<Index> row_ptr_;
  std::vector<std::int32_t> partner_, term_;
  Vector scale_, b_, curvature_, w_;
  Matrix X_;
  bool diagonal_curvature_ = false;  // coupled mode: 2 diag(Laplacian) in place of the Laplacian
};

}  // namespace

DistanceTerms::DistanceTerms(Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols, Vector targets)
    : PairTerms("distance", n, std::move(rows), std::move(cols), std::move(targets)) {
  for (Index k = 0; k < size(); ++k)
    if (this->rows()[k] == this->cols()[k])
      throw Error("", "distance term " + std::to_string(k) + ": i = j = " + std::to_string(this->rows()[k]) +
                          " gives Q = 0 (a distance needs two different points)");
}

DistanceTerms::~DistanceTerms() = default;

void DistanceTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
  for (Index k = 0; k < size(); ++k) values[k] = (X.row(rows()[k]) - X.row(cols()[k])).squaredNorm();
}

void DistanceTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  out.setZero(V.rows(), V.cols());
  for (Index k = 0; k < size(); ++k) {
    const Eigen::RowVectorXd g = y[k] * (V.row(rows()[k]) - V.row(cols()[k]));
    out.row(rows()[k]) += g;
    out.row(cols()[k]) -= g;
  }
}

std::unique_ptr<TermLinearization> DistanceTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<DistanceLinearization>(*this, mode);
}

}  // namespace sdprl
