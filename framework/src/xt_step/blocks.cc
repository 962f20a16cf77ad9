// The row blocks' factorings of the Xt-step (xt_step/blocks.h).
#include "xt_step/blocks.h"

#include <Eigen/Eigenvalues>
#include <cmath>

#include "admm/row_kernel.h"
#include "rows/row_blocks.h"
#include "terms/row_factors.h"

namespace sdprl::xt_step {
namespace {
// Ranks up to this keep the dense blocks (the fixed-size kernels of detail::with_rank serve r <= 8
// and r = 10).
constexpr Index kDenseRanks = 10;
}  // namespace

double RowBlockInverse::build(const Surrogate& s) {
  const Index n = s.rows(), r = s.rank();
  // The parts only above the fixed-size kernels' ranks (detail::with_rank): their dense blocks are
  // cheap, and their runs stay bit for bit those of gram_row_blocks() (SDPLIB's hinf1, rank 5, is
  // so sensitive to rounding that G_i summed in another order ended it 10x farther from the optimum).
  const auto* parts =
      use_parts_ && r > kDenseRanks ? dynamic_cast<const terms::RowFactors*>(&s.linearization()) : nullptr;
  parts_ = parts != nullptr;
  factored_ = false;
  if (parts_) {
    // The parts of this iterate, row after row (a copy, as gram_ is: a CG preconditioner may be
    // factored again at a later iterate's rho). tr(P*P) = sum_q |p_q|^2.
    n_ = n;
    r_ = r;
    gram_.resize(0, 0);
    offsets_ = parts->factor_offsets();
    const std::vector<Index>& order = parts->factor_order();
    const Matrix& P = parts->factors();
    F_.resize(static_cast<Index>(order.size()), r);
    for (std::size_t q = 0; q < order.size(); ++q) F_.row(static_cast<Index>(q)) = P.row(order[q]);
    return F_.squaredNorm();
  }
  // A member: n r^2 doubles, kept to avoid re-faulting every MM step.
  s.linearization().gram_row_blocks(gram_);
  double trace = 0.0;
  for (Index i = 0; i < n; ++i) trace += gram_.block(i * r, 0, r, r).trace();
  return trace;
}

void RowBlockInverse::factor(const Surrogate& s, double rho, double rho_k) {
  // Explicit inverses K_i^{-1}: the fused pass multiplies by them, and as CG's preconditioner (or
  // the exact Xt-step of the generic path) a product with an r x r matrix is several times cheaper
  // than two triangular solves. A row without curvature gets a zero inverse, so its step is 0.
  if (!parts_) {
    detail::invert_row_blocks(gram_, s.b_diagonal(), rho, rho_k, s.rows(), s.rank(), inverse_);
    return;
  }
  // With parts F_i (d x r, G_i = F_i^T F_i) and s_i = 2 B_ii + rho_k > 0, Woodbury's identity:
  //   K_i^{-1} = (s_i I + rho F^T F)^{-1} = (I - W^T W) / s_i,   W = L^{-1} F,   L L^T = F F^T + (s_i / rho) I,
  // O(d^2 r) to factor and O(d r) to apply where a dense block costs O(r^3) and O(r^2). Rows of
  // many parts (2 d >= r), and any row when s_i <= 0 or rho <= 0, get the dense block of
  // invert_row_block() from G_i = F^T F.
  const Index n = n_, r = r_;
  const Vector& bd = s.b_diagonal();
  const std::vector<Index>& offsets = offsets_;
  dense_slot_.assign(static_cast<std::size_t>(n), -1);
  inverse_shift_.setZero(n);
  Index dense = 0;
  for (Index i = 0; i < n; ++i) {
    const Index d = offsets[static_cast<std::size_t>(i) + 1] - offsets[static_cast<std::size_t>(i)];
    if (!(2.0 * bd[i] + rho_k > 0.0) || !(rho > 0.0) || 2 * d >= r) dense_slot_[static_cast<std::size_t>(i)] = dense++;
  }
  inverse_.resize(static_cast<std::size_t>(dense * r * r));
  W_.resize(F_.rows(), r);
#pragma omp parallel if (n * r * r > detail::kParallelWork)
  {
    Matrix G, M;
    Eigen::LLT<Matrix> llt;
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const Index begin = offsets[static_cast<std::size_t>(i)], d = offsets[static_cast<std::size_t>(i) + 1] - begin;
      const double si = 2.0 * bd[i] + rho_k;
      const auto F = F_.middleRows(begin, d);
      const Index slot = dense_slot_[static_cast<std::size_t>(i)];
      if (slot >= 0) {
        G.noalias() = F.transpose() * F;
        detail::invert_row_block(G.data(), bd[i], rho, rho_k, r, inverse_.data() + slot * r * r);
        continue;
      }
      inverse_shift_[i] = 1.0 / si;
      auto W = W_.middleRows(begin, d);
      if (d == 1) {  // an SDPA constraint X_ii = 1: W = p / sqrt(|p|^2 + s_i / rho)
        W = F / std::sqrt(F.squaredNorm() + si / rho);
        continue;
      }
      M.noalias() = F * F.transpose();
      M.diagonal().array() += si / rho;
      llt.compute(M);
      if (llt.info() != Eigen::Success) {
        // s_i / rho below rounding against parts that are (nearly) dependent: the dense blocks' ridge.
        M.diagonal().array() += detail::kSingularRidge * M.trace() + 1e-300;
        llt.compute(M);
      }
      W = F;
      llt.matrixL().solveInPlace(W);
    }
  }
  factored_ = true;
}

void RowBlockInverse::apply(const Matrix& R, Matrix& out) const {
  if (!parts_) return detail::apply_row_inverses(inverse_.data(), R, out);
  const Index n = R.rows(), r = R.cols();
  const std::vector<Index>& offsets = offsets_;
  out.resize(n, r);
  using Block = Eigen::Map<const Matrix>;
#pragma omp parallel for schedule(static) if (n * r * r > detail::kParallelWork)
  for (Index i = 0; i < n; ++i) {
    const Index slot = dense_slot_[static_cast<std::size_t>(i)];
    if (slot >= 0) {
      out.row(i).noalias() = R.row(i) * Block(inverse_.data() + slot * r * r, r, r).transpose();
      continue;
    }
    // (I - W^T W) R_i / s_i.
    const Index begin = offsets[static_cast<std::size_t>(i)], d = offsets[static_cast<std::size_t>(i) + 1] - begin;
    out.row(i) = R.row(i);
    for (Index q = begin; q < begin + d; ++q) out.row(i) -= W_.row(q).dot(R.row(i)) * W_.row(q);
    out.row(i) *= inverse_shift_[i];
  }
}

void RowBlockInverse::apply_gram(const Matrix& D, Matrix& out) const {
  const Index n = D.rows(), r = D.cols();
  out.resize(n, r);
  if (!parts_) {
    for (Index i = 0; i < n; ++i) out.row(i).noalias() = D.row(i) * gram_.middleRows(i * r, r);
    return;
  }
  // G_i D_i = sum_q (p_q . D_i) p_q.
  for (Index i = 0; i < n; ++i) {
    out.row(i).setZero();
    for (Index q = offsets_[static_cast<std::size_t>(i)]; q < offsets_[static_cast<std::size_t>(i) + 1]; ++q)
      out.row(i) += F_.row(q).dot(D.row(i)) * F_.row(q);
  }
}

double SharedBlockInverse::build(const Surrogate& s) {
  shared_gram_block(s.linearization(), gram_);
  const double trace = static_cast<double>(s.rows()) * gram_.trace();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram_);
  vectors_ = eig.eigenvectors();
  // P*P is PSD: a rounding-negative eigenvalue is 0.
  values_ = eig.eigenvalues().cwiseMax(0.0);
  return trace;
}

void SharedBlockInverse::factor(const Surrogate& s, double rho, double rho_k) {
  // A tiny ridge where rho g_c + s_i vanishes, as for the singular blocks in detail::invert_row_block.
  const Index n = s.rows(), r = s.rank();
  const Vector& bd = s.b_diagonal();
  inverse_.resize(n, r);
  const double scale = rho * values_.sum();
  for (Index i = 0; i < n; ++i) {
    const double si = 2.0 * bd[i] + rho_k;
    if (scale == 0.0 && si == 0.0) {
      inverse_.row(i).setZero();
      continue;
    }
    const double ridge = 1e-12 * (scale + static_cast<double>(r) * si) + 1e-300;
    for (Index c = 0; c < r; ++c) {
      const double d = rho * values_[c] + si;
      inverse_(i, c) = 1.0 / (d > ridge ? d : d + ridge);
    }
  }
}

void SharedBlockInverse::apply(const Matrix& R, Matrix& out) const {
  // Every row at once: out = ((R V) o inverse) V^T, two n x r x r products.
  Matrix T = R * vectors_;
  T.array() *= inverse_.array();
  out.noalias() = T * vectors_.transpose();
}

void SharedBlockInverse::apply_rows(Index i0, const Matrix& R, Matrix& out) const {
  Matrix T = R * vectors_;
  T.array() *= inverse_.middleRows(i0, R.rows()).array();
  out.noalias() = T * vectors_.transpose();
}

void SharedBlockInverse::apply_gram(const Matrix& D, Matrix& out) const { out.noalias() = D * gram_; }

double RowScaledInverse::build(const Surrogate& s) {
  // Only the blocks' traces: the row-scaled preconditioner is there to avoid their n r^2 doubles.
  gram_row_traces(s.linearization(), traces_);
  double trace = 0.0;
  for (Index i = 0; i < s.rows(); ++i) trace += traces_[i];
  return trace;
}

void RowScaledInverse::factor(const Surrogate& s, double rho, double rho_k) {
  const Index n = s.rows(), r = s.rank();
  const Vector& bd = s.b_diagonal();
  inverse_.resize(n);
  for (Index i = 0; i < n; ++i) {
    const double d = rho * traces_[i] / static_cast<double>(r) + 2.0 * bd[i] + rho_k;
    inverse_[i] = d > 0.0 ? 1.0 / d : 0.0;
  }
}

void RowScaledInverse::apply(const Matrix& R, Matrix& out) const { out.noalias() = inverse_.asDiagonal() * R; }

}  // namespace sdprl::xt_step
