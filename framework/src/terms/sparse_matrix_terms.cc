// Sparse matrix terms: general sparse Q_tau (see sdprl/terms/sparse_matrix_terms.h for the algebra
// and the proofs of the two curvature bounds).
#include "sdprl/terms/sparse_matrix_terms.h"

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "sdprl/error.h"
#include "terms/row_factors.h"

namespace sdprl {
namespace {

// Both modes share the rows p_q = w_k (S_k X_k)_i, one per support position q (row i of term k):
// in coupled mode term k's P_k has exactly these rows; in row-split mode each is a half-term.
// The rows p_q are also row block i's rank-one parts (terms/row_factors.h).
class SparseMatrixLinearization final : public TermLinearization, public terms::RowFactors {
 public:
  SparseMatrixLinearization(const SparseMatrixTerms& terms, SplitMode mode) : terms_(terms), mode_(mode) {
    const Index m = terms.size();
    const Index total = terms.support_begin(m);
    b_.resize(mode_ == SplitMode::kRowSplit ? total : m);
    owner_.resize(total);
    for (Index k = 0; k < m; ++k)
      for (Index q = terms.support_begin(k); q < terms.support_begin(k + 1); ++q) owner_[q] = static_cast<std::int32_t>(k);
    // The support positions grouped by row (a counting sort, positions ascending within a row).
    const auto& support = terms.support_rows();
    row_ptr_.assign(static_cast<std::size_t>(terms.dimension() + 1), 0);
    for (Index q = 0; q < total; ++q) ++row_ptr_[static_cast<std::size_t>(support[q]) + 1];
    for (std::size_t i = 1; i < row_ptr_.size(); ++i) row_ptr_[i] += row_ptr_[i - 1];
    row_order_.resize(static_cast<std::size_t>(total));
    std::vector<Index> next(row_ptr_.begin(), row_ptr_.end() - 1);
    for (Index q = 0; q < total; ++q) row_order_[static_cast<std::size_t>(next[static_cast<std::size_t>(support[q])]++)] = q;
    block_ptr_.assign(static_cast<std::size_t>(m), -1);
    if (mode_ == SplitMode::kCoupled) make_abs_blocks();
  }

  void update(const Matrix& X, const Vector& w, const Vector& r) override {
    const Index m = terms_.size(), n = terms_.dimension(), rank = X.cols();
    const Index total = terms_.support_begin(m);
    const auto& rows = terms_.upper_rows();
    const auto& cols = terms_.upper_cols();
    const auto& lrows = terms_.upper_local_rows();
    const auto& lcols = terms_.upper_local_cols();
    const auto& vals = terms_.upper_values();
    const auto& support = terms_.support_rows();
    w_ = w;
    P_.setZero(total, rank);
    for (Index k = 0; k < m; ++k) {
      const Index base = terms_.support_begin(k);
      for (Index e = terms_.entry_begin(k); e < terms_.entry_begin(k + 1); ++e) {
        const double a = w[k] * vals[e];
        P_.row(base + lrows[e]).noalias() += a * X.row(cols[e]);
        if (rows[e] != cols[e]) P_.row(base + lcols[e]).noalias() += a * X.row(rows[e]);
      }
      const Index s = terms_.support_begin(k + 1) - base;
      if (mode_ == SplitMode::kRowSplit) {
        // b_k = w r / 2 shared equally by the s half-terms (same sign: tight at D = 0).
        for (Index q = base; q < base + s; ++q) b_[q] = 0.5 * w[k] * r[k] / static_cast<double>(s);
      } else {
        b_[k] = 0.5 * w[k] * r[k];
      }
    }
    // Curvature: the diagonal part (all of C in row-split mode: sum w G; in coupled mode the
    // terms without a dense |S| block, whose |S| = G or which keep G), and in coupled mode the
    // dense |S_k| blocks, applied term by term in apply_curvature().
    diag_.setZero(n);
    full_diag_.setZero(n);
    const auto& g = terms_.gershgorin();
    for (Index k = 0; k < m; ++k) {
      const Index base = terms_.support_begin(k), s = terms_.support_begin(k + 1) - base;
      const Index block = block_ptr_[k];
      for (Index q = 0; q < s; ++q) {
        const Index i = support[base + q];
        if (block < 0) {
          diag_[i] += w[k] * g[base + q];
          full_diag_[i] += w[k] * g[base + q];
        } else {
          full_diag_[i] += w[k] * blocks_[block + q * s + q];
        }
      }
    }
    if (has_blocks_) assemble_curvature();
  }

  Index size() const override { return b_.size(); }
  const Vector& offsets() const override { return b_; }

  void apply(const Matrix& D, Vector& out) const override {
    const auto& support = terms_.support_rows();
    const Index total = P_.rows();
    if (mode_ == SplitMode::kRowSplit) {
      out.resize(total);
      for (Index q = 0; q < total; ++q) out[q] = D.row(support[q]).dot(P_.row(q));
    } else {
      out.setZero(terms_.size());
      for (Index q = 0; q < total; ++q) out[owner_[q]] += D.row(support[q]).dot(P_.row(q));
    }
  }

  void apply_adjoint(const Vector& y, Matrix& out) const override {
    const auto& support = terms_.support_rows();
    out.setZero(terms_.dimension(), P_.cols());
    const bool split = mode_ == SplitMode::kRowSplit;
    for (Index q = 0; q < P_.rows(); ++q) out.row(support[q]).noalias() += y[split ? q : owner_[q]] * P_.row(q);
  }

  void apply_curvature(const Matrix& D, Matrix& out) const override {
    if (has_blocks_) {
      out.noalias() = curvature_ * D;
    } else {
      out = diag_.asDiagonal() * D;
    }
  }
  bool curvature_is_diagonal() const override { return !has_blocks_; }
  void curvature_diagonal(Vector& d) const override { d = full_diag_; }
  bool rows_decoupled() const override { return mode_ == SplitMode::kRowSplit; }

  void gram_row_blocks(Matrix& blocks) const override {
    // Both modes: row i of P*P's diagonal block collects p_q^T p_q over the positions q on row i
    // (exact in row-split mode, the block diagonal of P*P in coupled mode).
    const auto& support = terms_.support_rows();
    const Index n = terms_.dimension(), r = P_.cols();
    blocks.setZero(n * r, r);
    for (Index q = 0; q < P_.rows(); ++q)
      blocks.middleRows(support[q] * r, r).noalias() += P_.row(q).transpose() * P_.row(q);
  }

  const std::vector<Index>& factor_offsets() const override { return row_ptr_; }
  const std::vector<Index>& factor_order() const override { return row_order_; }
  const Matrix& factors() const override { return P_; }

 private:
  // |S_k| = V |Lambda| V^T of every term with off-diagonal entries and a support of at most
  // kMaxExactSupport rows, column-major s x s at blocks_[block_ptr_[k]].
  void make_abs_blocks() {
    const auto& lrows = terms_.upper_local_rows();
    const auto& lcols = terms_.upper_local_cols();
    const auto& vals = terms_.upper_values();
    for (Index k = 0; k < terms_.size(); ++k) {
      const Index s = terms_.support_begin(k + 1) - terms_.support_begin(k);
      bool diagonal = true;
      for (Index e = terms_.entry_begin(k); e < terms_.entry_begin(k + 1); ++e) diagonal = diagonal && lrows[e] == lcols[e];
      if (diagonal || s > SparseMatrixTerms::kMaxExactSupport) continue;
      Eigen::MatrixXd S = Eigen::MatrixXd::Zero(s, s);
      for (Index e = terms_.entry_begin(k); e < terms_.entry_begin(k + 1); ++e) {
        S(lrows[e], lcols[e]) = vals[e];
        S(lcols[e], lrows[e]) = vals[e];
      }
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(S);
      const Eigen::MatrixXd A =
          eig.eigenvectors() * eig.eigenvalues().cwiseAbs().asDiagonal() * eig.eigenvectors().transpose();
      block_ptr_[k] = static_cast<Index>(blocks_.size());
      blocks_.insert(blocks_.end(), A.data(), A.data() + s * s);
      has_blocks_ = true;
    }
  }

  // C = diag_ + sum_k w_k |S_k| (the blocks scattered to their support rows) as one sparse matrix,
  // once per MM step: CG applies B, so C, at every iteration, and term by term (gather, a small
  // product, scatter) that was a third of an SDPLIB run's time (hinf1). Its nonzeros are the
  // blocks' own, so it costs no more memory than they do.
  void assemble_curvature() {
    const auto& support = terms_.support_rows();
    std::vector<Eigen::Triplet<double>> entries;
    entries.reserve(static_cast<std::size_t>(diag_.size()) + blocks_.size());
    for (Index i = 0; i < diag_.size(); ++i)
      if (diag_[i] != 0.0) entries.emplace_back(i, i, diag_[i]);
    for (Index k = 0; k < terms_.size(); ++k) {
      if (block_ptr_[k] < 0) continue;
      const Index base = terms_.support_begin(k), s = terms_.support_begin(k + 1) - base;
      const double* A = blocks_.data() + block_ptr_[k];
      for (Index p = 0; p < s; ++p)
        for (Index q = 0; q < s; ++q)
          entries.emplace_back(support[base + q], support[base + p], w_[k] * A[q + p * s]);
    }
    curvature_.resize(terms_.dimension(), terms_.dimension());
    curvature_.setFromTriplets(entries.begin(), entries.end());
  }

  const SparseMatrixTerms& terms_;
  SplitMode mode_;
  std::vector<Index> row_ptr_, row_order_;  // the positions of each row (factor_offsets, factor_order)
  Eigen::SparseMatrix<double> curvature_;  // C, when some term has a dense |S| block
  std::vector<std::int32_t> owner_;  // the term of each support position
  std::vector<Index> block_ptr_;     // offset of term k's |S| block in blocks_, or -1
  std::vector<double> blocks_;
  bool has_blocks_ = false;
  Matrix P_;
  Vector b_, w_, diag_, full_diag_;
};

std::string term_name(std::size_t k) { return "sparse matrix term " + std::to_string(k); }

}  // namespace

SparseMatrixTerms::SparseMatrixTerms(Index n, const std::vector<std::vector<Entry>>& terms, Vector targets)
    : TargetedTerms(n, std::move(targets)) {
  if (n <= 0) throw Error("", "sparse matrix terms: dimension must be positive, got " + std::to_string(n));
  if (static_cast<Index>(terms.size()) != size())
    throw Error("", "sparse matrix terms: " + std::to_string(terms.size()) + " matrices but " +
                        std::to_string(size()) + " targets");
  entry_ptr_.assign(1, 0);
  support_ptr_.assign(1, 0);
  for (std::size_t k = 0; k < terms.size(); ++k) {
    if (!std::isfinite(this->targets()[static_cast<Index>(k)])) throw Error("", term_name(k) + ": target is not finite");
    // S = sym(Q) on the upper triangle: S_ii = Q_ii, S_ij = (Q_ij + Q_ji) / 2 for i < j.
    std::map<std::pair<std::int32_t, std::int32_t>, double> upper;
    for (const Entry& e : terms[k]) {
      if (e.row < 0 || e.row >= n || e.col < 0 || e.col >= n)
        throw Error("", term_name(k) + ": index (" + std::to_string(e.row) + ", " + std::to_string(e.col) +
                            ") outside [0, " + std::to_string(n) + ")");
      if (!std::isfinite(e.value)) throw Error("", term_name(k) + ": a value is not finite");
      const auto key = std::minmax(e.row, e.col);
      upper[{key.first, key.second}] += e.row == e.col ? e.value : 0.5 * e.value;
    }
    std::vector<std::int32_t> support;
    for (const auto& [ij, v] : upper) {
      if (v == 0.0) continue;
      upper_rows_.push_back(ij.first);
      upper_cols_.push_back(ij.second);
      upper_values_.push_back(v);
      support.push_back(ij.first);
      support.push_back(ij.second);
    }
    if (upper_rows_.size() == static_cast<std::size_t>(entry_ptr_.back()))
      throw Error("", term_name(k) + ": sym(Q) is zero, so the term is the constant |t| (give it at least one "
                                     "nonzero symmetric entry)");
    std::sort(support.begin(), support.end());
    support.erase(std::unique(support.begin(), support.end()), support.end());
    const Index s = static_cast<Index>(support.size());
    const Index base = support_ptr_.back();
    auto local = [&](std::int32_t i) {
      return static_cast<std::int32_t>(std::lower_bound(support.begin(), support.end(), i) - support.begin());
    };
    std::vector<double> g(s, 0.0);
    for (std::size_t e = entry_ptr_.back(); e < upper_rows_.size(); ++e) {
      const std::int32_t a = local(upper_rows_[e]), b = local(upper_cols_[e]);
      upper_local_rows_.push_back(a);
      upper_local_cols_.push_back(b);
      g[a] += std::abs(upper_values_[e]);
      if (a != b) g[b] += std::abs(upper_values_[e]);
    }
    support_rows_.insert(support_rows_.end(), support.begin(), support.end());
    gershgorin_.insert(gershgorin_.end(), g.begin(), g.end());
    entry_ptr_.push_back(static_cast<Index>(upper_rows_.size()));
    support_ptr_.push_back(base + s);
  }
}

SparseMatrixTerms::~SparseMatrixTerms() = default;

namespace {
// Entries per term in all at which the products go through n x n: a quarter of n^2 (SDPLIB qap5's
// 136 constraints hold 2.6 entries per cell of its 26 x 26 Z), for n up to 2048 (32 MB). Below it
// each entry's row product is cheaper than the n^2 r of a Gram matrix.
bool through_gram(Index n, std::size_t entries) {
  return n <= 2048 && 4.0 * static_cast<double>(entries) >= static_cast<double>(n) * static_cast<double>(n);
}
}  // namespace

void SparseMatrixTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
  if (through_gram(dimension(), upper_rows_.size())) {
    // G = X X^T once, then each entry is one of its cells.
    const Matrix G = X * X.transpose();
    for (Index k = 0; k < size(); ++k) {
      double v = 0.0;
      for (Index e = entry_ptr_[k]; e < entry_ptr_[k + 1]; ++e)
        v += (upper_rows_[e] == upper_cols_[e] ? 1.0 : 2.0) * upper_values_[e] * G(upper_rows_[e], upper_cols_[e]);
      values[k] = v;
    }
    return;
  }
  for (Index k = 0; k < size(); ++k) {
    double v = 0.0;
    // <X, S X> = sum_i S_ii |x_i|^2 + 2 sum_{i<j} S_ij x_i . x_j.
    for (Index e = entry_ptr_[k]; e < entry_ptr_[k + 1]; ++e) {
      const double d = X.row(upper_rows_[e]).dot(X.row(upper_cols_[e]));
      v += (upper_rows_[e] == upper_cols_[e] ? 1.0 : 2.0) * upper_values_[e] * d;
    }
    values[k] = v;
  }
}

void SparseMatrixTerms::apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const {
  if (through_gram(dimension(), upper_rows_.size())) {
    // M = sum_k y_k S_k, then one product M V.
    Matrix M = Matrix::Zero(dimension(), dimension());
    for (Index k = 0; k < size(); ++k) {
      if (y[k] == 0.0) continue;
      for (Index e = entry_ptr_[k]; e < entry_ptr_[k + 1]; ++e) {
        const double a = y[k] * upper_values_[e];
        M(upper_rows_[e], upper_cols_[e]) += a;
        if (upper_rows_[e] != upper_cols_[e]) M(upper_cols_[e], upper_rows_[e]) += a;
      }
    }
    out.noalias() = M * V;
    return;
  }
  out.setZero(V.rows(), V.cols());
  for (Index k = 0; k < size(); ++k) {
    if (y[k] == 0.0) continue;  // exact: skipping a zero coefficient changes nothing
    for (Index e = entry_ptr_[k]; e < entry_ptr_[k + 1]; ++e) {
      const double a = y[k] * upper_values_[e];
      out.row(upper_rows_[e]).noalias() += a * V.row(upper_cols_[e]);
      if (upper_rows_[e] != upper_cols_[e]) out.row(upper_cols_[e]).noalias() += a * V.row(upper_rows_[e]);
    }
  }
}

std::unique_ptr<TermLinearization> SparseMatrixTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<SparseMatrixLinearization>(*this, mode);
}

}  // namespace sdprl
