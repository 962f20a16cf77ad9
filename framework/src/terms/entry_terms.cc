// Entry terms Q = e_i e_j^T on the sparse path (see sdprl/terms/entry_terms.h for the algebra).
#include "sdprl/terms/entry_terms.h"

#include <cmath>
#include <string>

#include "sdprl/error.h"

namespace sdprl {
namespace {

// The split terms in CSR order by the row they touch. For the row-split majoriser a split term is
// a half-term (row i, partner row j, coefficient 1/2 of its term's weight, or 1 for a diagonal
// term); in coupled mode it is a whole term.
class EntryLinearization final : public TermLinearization {
 public:
  EntryLinearization(const EntryTerms& terms, SplitMode mode) : terms_(terms), mode_(mode) {
    const Index n = terms.dimension();
    const auto& rows = terms.rows();
    const auto& cols = terms.cols();
    const Index m = terms.size();
    if (mode_ == SplitMode::kRowSplit) {
      // Count half-terms per row, then fill (counting sort keeps the original term order per row).
      row_ptr_.assign(n + 1, 0);
      for (Index k = 0; k < m; ++k) {
        ++row_ptr_[rows[k] + 1];
        if (rows[k] != cols[k]) ++row_ptr_[cols[k] + 1];
      }
      for (Index i = 0; i < n; ++i) row_ptr_[i + 1] += row_ptr_[i];
      const Index h = row_ptr_[n];
      partner_.resize(h);
      term_.resize(h);
      coef_.resize(h);
      std::vector<Index> fill(row_ptr_.begin(), row_ptr_.end() - 1);
      for (Index k = 0; k < m; ++k) {
        const std::int32_t i = rows[k], j = cols[k];
        if (i == j) {
          const Index p = fill[i]++;
          partner_[p] = j, term_[p] = static_cast<std::int32_t>(k), coef_[p] = 1.0;
        } else {
          Index p = fill[i]++;
          partner_[p] = j, term_[p] = static_cast<std::int32_t>(k), coef_[p] = 0.5;
          p = fill[j]++;
          partner_[p] = i, term_[p] = static_cast<std::int32_t>(k), coef_[p] = 0.5;
        }
      }
      scale_.resize(h);
      b_.resize(h);
    } else {
      scale_.resize(m);
      b_.resize(m);
    }
    curvature_.resize(n);
  }

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    X_ = X;
    curvature_.setZero();
    const auto& rows = terms_.rows();
    const auto& cols = terms_.cols();
    if (mode_ == SplitMode::kRowSplit) {
      const Index n = terms_.dimension();
      for (Index i = 0; i < n; ++i) {
        double d = 0.0;
        for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p) {
          const Index k = term_[p];
          scale_[p] = w[k] * coef_[p];
          // Off-diagonal half-term: b' = w r / 4 = scale r / 2; diagonal term: b = w r / 2.
          b_[p] = scale_[p] * r[k] * 0.5;
          // |sym Q| puts w/2 on (i,i) per off-diagonal appearance and w for a diagonal term:
          // exactly the half-term's scale.
          d += scale_[p];
        }
        curvature_[i] = d;
      }
    } else {
      for (Index k = 0; k < terms_.size(); ++k) {
        scale_[k] = w[k];
        b_[k] = w[k] * r[k] * 0.5;
        if (rows[k] == cols[k]) {
          curvature_[rows[k]] += w[k];
        } else {
          curvature_[rows[k]] += 0.5 * w[k];
          curvature_[cols[k]] += 0.5 * w[k];
        }
      }
    }
  }

  Index size() const override { return b_.size(); }
  const Vector& offsets() const override { return b_; }

  void apply(const Matrix& D, Vector& out) const override {
    out.resize(size());
    if (mode_ == SplitMode::kRowSplit) {
      const Index n = terms_.dimension();
      for (Index i = 0; i < n; ++i) {
        const auto di = D.row(i);
        for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p)
          out[p] = scale_[p] * di.dot(X_.row(partner_[p]));
      }
    } else {
      const auto& rows = terms_.rows();
      const auto& cols = terms_.cols();
      // <D, (w/2)(e_i x_j^T + e_j x_i^T)>; for i = j this is w d_i . x_i as it should be.
      for (Index k = 0; k < size(); ++k) {
        const Index i = rows[k], j = cols[k];
        out[k] = 0.5 * scale_[k] * (D.row(i).dot(X_.row(j)) + D.row(j).dot(X_.row(i)));
      }
    }
  }

  void apply_adjoint(const Vector& y, Matrix& out) const override {
    out.setZero(X_.rows(), X_.cols());
    if (mode_ == SplitMode::kRowSplit) {
      const Index n = terms_.dimension();
      for (Index i = 0; i < n; ++i) {
        auto oi = out.row(i);
        for (Index p = row_ptr_[i]; p < row_ptr_[i + 1]; ++p)
          oi.noalias() += (y[p] * scale_[p]) * X_.row(partner_[p]);
      }
    } else {
      const auto& rows = terms_.rows();
      const auto& cols = terms_.cols();
      for (Index k = 0; k < size(); ++k) {
        const Index i = rows[k], j = cols[k];
        const double a = 0.5 * y[k] * scale_[k];
        out.row(i).noalias() += a * X_.row(j);
        out.row(j).noalias() += a * X_.row(i);
      }
    }
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override {
    out = curvature_.asDiagonal() * D;
  }
  bool curvature_is_diagonal() const override { return true; }
  void curvature_diagonal(Vector& d) const override { d = curvature_; }
  bool rows_decoupled() const override { return mode_ == SplitMode::kRowSplit; }

  // Row-split: half-term p of row i is P_p = e_i a_p^T with a_p = scale_p x_partner(p).
  const Index* row_offsets() const override {
    return mode_ == SplitMode::kRowSplit ? row_ptr_.data() : nullptr;
  }
  void row_vectors(Index i, double* out) const override {
    switch (X_.cols()) {  // a fixed rank unrolls the gather of r doubles per half-term
      case 2: return scaled_partners<2>(i, out);
      case 3: return scaled_partners<3>(i, out);
      case 4: return scaled_partners<4>(i, out);
      case 5: return scaled_partners<5>(i, out);
      case 6: return scaled_partners<6>(i, out);
      case 8: return scaled_partners<8>(i, out);
      default: return scaled_partners<Eigen::Dynamic>(i, out);
    }
  }

  template <int R>
  void scaled_partners(Index i, double* out) const {
    const Index r = R == Eigen::Dynamic ? X_.cols() : R;
    const Index begin = row_ptr_[i], deg = row_ptr_[i + 1] - begin;
    for (Index q = 0; q < deg; ++q) {
      const double s = scale_[begin + q];
      const double* x = X_.data() + static_cast<Index>(partner_[begin + q]) * r;
      for (Index c = 0; c < r; ++c) out[c * deg + q] = s * x[c];
    }
  }

  void gram_row_blocks(Matrix& blocks) const override {
    const Index n = terms_.dimension(), r = X_.cols();
    blocks.setZero(n * r, r);
    if (mode_ == SplitMode::kRowSplit) {
      // Block i = Y^T Y with Y the row's scaled partner rows: one small GEMM per row instead of
      // one dynamic-size outer product per half-term (admm_bench MmStep m = 10^4: 201 -> 109 ms).
      Eigen::MatrixXd Y;
      for (Index i = 0; i < n; ++i) {
        const Index begin = row_ptr_[i], deg = row_ptr_[i + 1] - begin;
        if (deg == 0) continue;
        Y.resize(deg, r);
        for (Index q = 0; q < deg; ++q) Y.row(q) = scale_[begin + q] * X_.row(partner_[begin + q]);
        blocks.middleRows(i * r, r).noalias() = Y.transpose() * Y;
      }
    } else {
      const auto& rows = terms_.rows();
      const auto& cols = terms_.cols();
      for (Index k = 0; k < size(); ++k) {
        const Index i = rows[k], j = cols[k];
        if (i == j) {
          blocks.middleRows(i * r, r).noalias() +=
              (scale_[k] * scale_[k]) * X_.row(i).transpose() * X_.row(i);
        } else {
          const double a = 0.25 * scale_[k] * scale_[k];
          blocks.middleRows(i * r, r).noalias() += a * X_.row(j).transpose() * X_.row(j);
          blocks.middleRows(j * r, r).noalias() += a * X_.row(i).transpose() * X_.row(i);
        }
      }
    }
  }

 private:
  const EntryTerms& terms_;
  SplitMode mode_;
  std::vector<Index> row_ptr_;
  std::vector<std::int32_t> partner_, term_;
  std::vector<double> coef_;
  Vector scale_, b_, curvature_;
  Matrix X_;
};

}  // namespace

EntryTerms::EntryTerms(Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols,
                       Vector targets)
    : n_(n), rows_(std::move(rows)), cols_(std::move(cols)), targets_(std::move(targets)) {
  if (n <= 0) throw Error("", "entry terms: dimension must be positive, got " + std::to_string(n));
  if (rows_.size() != cols_.size() || static_cast<Index>(rows_.size()) != targets_.size())
    throw Error("", "entry terms: rows, cols and targets differ in length");
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (rows_[k] < 0 || rows_[k] >= n || cols_[k] < 0 || cols_[k] >= n)
      throw Error("", "entry term " + std::to_string(k) + ": index (" + std::to_string(rows_[k]) +
                          ", " + std::to_string(cols_[k]) + ") outside [0, " + std::to_string(n) + ")");
    if (!std::isfinite(targets_[static_cast<Index>(k)]))
      throw Error("", "entry term " + std::to_string(k) + ": target is not finite");
  }
}

EntryTerms::~EntryTerms() = default;

void EntryTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
  for (Index k = 0; k < size(); ++k) values[k] = X.row(rows_[k]).dot(X.row(cols_[k]));
}

void EntryTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  out.setZero(V.rows(), V.cols());
  // sym(e_i e_j^T) V = (e_i v_j^T + e_j v_i^T) / 2.
  for (Index k = 0; k < size(); ++k) {
    const double a = 0.5 * y[k];
    out.row(rows_[k]).noalias() += a * V.row(cols_[k]);
    out.row(cols_[k]).noalias() += a * V.row(rows_[k]);
  }
}

std::unique_ptr<TermLinearization> EntryTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<EntryLinearization>(*this, mode);
}

}  // namespace sdprl
