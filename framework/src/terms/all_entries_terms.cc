// All entry terms, held implicitly (see sdprl/terms/all_entries_terms.h for the algebra).
#include "sdprl/terms/all_entries_terms.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "rows/row_blocks.h"
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

// Z = X X^T and what is formed from it, tile by tile of kTile x kTile on every thread: block
// (I, J), J <= I, is one product X_I X_J^T and its transpose is written while the block is in
// cache. (Eigen's rankUpdate on the whole matrix ran on one thread, after a memset of n^2 doubles,
// and the mirror's transposed reads missed the cache.) Pair q = I (I + 1) / 2 + J.
constexpr Index kTile = 64;

struct TilePair {
  Index i0, j0, mi, mj;
  bool diagonal;
};

Index tile_pairs(Index n) {
  const Index tiles = (n + kTile - 1) / kTile;
  return tiles * (tiles + 1) / 2;
}

TilePair tile_pair(Index n, Index q) {
  Index I = static_cast<Index>((std::sqrt(8.0 * static_cast<double>(q) + 1.0) - 1.0) / 2.0);
  while (I * (I + 1) / 2 > q) --I;
  while ((I + 1) * (I + 2) / 2 <= q) ++I;
  const Index J = q - I * (I + 1) / 2;
  const Index i0 = I * kTile, j0 = J * kTile;
  return {i0, j0, std::min(kTile, n - i0), std::min(kTile, n - j0), I == J};
}

// Block (I, J) of X X^T; a diagonal block exactly symmetric (its upper half mirrored from the lower).
void product_block(const Matrix& X, const TilePair& t, Matrix& block) {
  block.noalias() = X.middleRows(t.i0, t.mi) * X.middleRows(t.j0, t.mj).transpose();
  if (t.diagonal)
    for (Index j = 0; j < t.mj; ++j)
      for (Index i = 0; i < j; ++i) block(i, j) = block(j, i);
}

// Block pair p of R = X X^T - T into `block` (T = 0 when t is null), |R| into a and the loss at it
// into phi and dphi: the rebuild's and loss_sum()'s tile, the same bits in both.
struct TileLoss {
  Matrix block;
  Vector a, phi, dphi;
  void compute(const Matrix& X, const TilePair& p, const double* t, const Loss& loss) {
    product_block(X, p, block);
    const Index n = X.rows();
    if (t) block -= ConstMatrixMap(t, n, n).block(p.i0, p.j0, p.mi, p.mj);
    a = Eigen::Map<const Vector>(block.data(), block.size()).cwiseAbs();
    loss.evaluate(a, phi, dphi);
  }
};

// values = vec(X X^T), both triangles bit-identical: the row-split linearisation relies on exact
// symmetry.
void outer_product(const Matrix& X, Vector& values) {
  const Index n = X.rows(), pairs = tile_pairs(n);
  values.resize(n * n);
  MatrixMap Z(values.data(), n, n);
#pragma omp parallel if (n * n > detail::kParallelWork)
  {
    Matrix block;
#pragma omp for schedule(dynamic)
    for (Index q = 0; q < pairs; ++q) {
      const TilePair t = tile_pair(n, q);
      product_block(X, t, block);
      Z.block(t.i0, t.j0, t.mi, t.mj) = block;
      if (!t.diagonal) Z.block(t.j0, t.i0, t.mj, t.mi) = block.transpose();
    }
  }
}

// Offers ExternalWeights (the loss weights stay outside P), GramSummary (one shared block),
// OnePassUpdate (the rebuild forms r, w and b in the linearisation's own storage, so that the
// solver keeps no residual and weight vectors of its own: 2 n^2 doubles fewer) and, in row-split
// mode, the layout of DenseRowSplit (terms/dense_row_split.h): b and W, both symmetric, in one
// n^2 array, another n^2 doubles fewer.
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
    if (mode_ == SplitMode::kRowSplit) {
      // Into the packed layout (both are exactly symmetric now, so nothing is lost).
      allocate_packed();
      const ConstMatrixMap B(b_.data(), n_, n_), W(w_.data(), n_, n_);
      for (Index i = 0; i < n_; ++i) {
        for (Index j = 0; j < n_; ++j) cell(i, j) = j <= i ? B(i, j) : W(i, j);
        w_diagonal_[i] = W(i, i);
      }
      forget_full();
    }
  }

  // update(X, phi'(|r|), r) with r = vec(X X^T) - T, formed with the product block by block: Z is
  // exactly symmetric (product_block()) and T is (checked at construction), so r is, and W is by
  // construction (mirrored); the row-split merge is not symmetrised here. b, W and C are those of
  // update() on the solver's inputs; the sums phi and w |r| are added in another order than the
  // chunked loss of ConstraintSet::evaluate's callers, so they may differ in the last bits.
  void update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum, double* weighted_abs_sum,
                        RowConsumer*) override {
    // Block by block of Z = X X^T (the tiles of outer_product()): r, the loss on the lower block
    // only, b = r / 2 and the weights written to both triangles (W exactly symmetric), and the
    // block's sums and row and column sums of W kept per block, then added in block order (the
    // same bits for any thread count). One pass over b and w, and half the loss evaluations, of
    // the earlier product, chunked loss and row sums (docs/notes/solver-history.md).
    X_ = X;
    const Index n = n_, pairs = tile_pairs(n);
    const bool packed = mode_ == SplitMode::kRowSplit;
    if (packed) {
      forget_full();
      allocate_packed();
    } else {
      b_.resize(n * n);
      w_.resize(n * n);
    }
    // Row-split: b below and on the diagonal, W above it and on w_diagonal_ (the packed layout);
    // coupled: b and W whole.
    MatrixMap B(b_.data(), n, n), W(w_.data(), n, n);
    const double* t = targets_ ? targets_->data() : nullptr;
    std::vector<double> sums(static_cast<std::size_t>(2 * pairs));
    // Row sums of W per block: of its rows (kTile per block), and of its columns when off the diagonal.
    std::vector<double> row_part(static_cast<std::size_t>(2 * kTile * pairs), 0.0);
#pragma omp parallel if (n * n > detail::kParallelWork)
    {
      TileLoss tile;
      Matrix& block = tile.block;
      const Vector &a = tile.a, &phi = tile.phi, &dphi = tile.dphi;
      Matrix wblock;
#pragma omp for schedule(dynamic)
      for (Index q = 0; q < pairs; ++q) {
        const TilePair p = tile_pair(n, q);
        tile.compute(X, p, t, loss);
        wblock = Eigen::Map<const Matrix>(dphi.data(), p.mi, p.mj);
        if (p.diagonal)
          for (Index j = 0; j < p.mj; ++j)
            for (Index i = 0; i < j; ++i) wblock(i, j) = wblock(j, i);
        const double twice = p.diagonal ? 1.0 : 2.0;
        sums[static_cast<std::size_t>(2 * q)] = twice * phi.sum();
        sums[static_cast<std::size_t>(2 * q + 1)] = twice * dphi.dot(a);
        block *= 0.5;
        if (packed) {
          // b below the diagonal (I > J) and on it, W above it: its transpose, or within a
          // diagonal tile its own upper part.
          for (Index i = 0; i < p.mi; ++i)
            for (Index j = 0; j < p.mj; ++j) {
              if (p.diagonal && j > i) cell(p.i0 + i, p.j0 + j) = wblock(i, j);
              else cell(p.i0 + i, p.j0 + j) = block(i, j);
            }
          if (p.diagonal)
            for (Index i = 0; i < p.mi; ++i) w_diagonal_[p.i0 + i] = wblock(i, i);
          else
            for (Index j = 0; j < p.mj; ++j)
              for (Index i = 0; i < p.mi; ++i) cell(p.j0 + j, p.i0 + i) = wblock(i, j);
        } else {
          B.block(p.i0, p.j0, p.mi, p.mj) = block;
          W.block(p.i0, p.j0, p.mi, p.mj) = wblock;
        }
        // Plain loops in a fixed order: Eigen's rowwise sums into a Map peel to the destination's
        // alignment, which moved the sums' last bits with the heap address (and so with the
        // thread count).
        double* rows = row_part.data() + 2 * kTile * q;
        for (Index j = 0; j < p.mj; ++j)
          for (Index i = 0; i < p.mi; ++i) rows[i] += wblock(i, j);
        if (!p.diagonal) {
          if (!packed) {
            B.block(p.j0, p.i0, p.mj, p.mi) = block.transpose();
            W.block(p.j0, p.i0, p.mj, p.mi) = wblock.transpose();
          }
          for (Index j = 0; j < p.mj; ++j) {
            double sum = 0.0;
            for (Index i = 0; i < p.mi; ++i) sum += wblock(i, j);
            rows[kTile + j] = sum;
          }
        }
      }
    }
    double phi_total = 0.0, abs_total = 0.0;
    for (Index q = 0; q < pairs; ++q) {
      phi_total += sums[static_cast<std::size_t>(2 * q)];
      abs_total += sums[static_cast<std::size_t>(2 * q + 1)];
    }
    *phi_sum = phi_total;
    *weighted_abs_sum = abs_total;
    // The curvature's row sums of W (W is symmetric): row tile I gets its blocks (I, J), J <= I, by
    // their rows and its blocks (I', I), I' > I, by their columns, in that order.
    curvature_.setZero(n);
    const Index tiles = (n + kTile - 1) / kTile;
    for (Index I = 0; I < tiles; ++I) {
      const Index i0 = I * kTile, mi = std::min(kTile, n - i0);
      auto c = curvature_.segment(i0, mi);
      for (Index J = 0; J <= I; ++J) c += Eigen::Map<const Vector>(row_part.data() + 2 * kTile * (I * (I + 1) / 2 + J), mi);
      for (Index K = I + 1; K < tiles; ++K)
        c += Eigen::Map<const Vector>(row_part.data() + 2 * kTile * (K * (K + 1) / 2 + I) + kTile, mi);
    }
  }
  OnePassUpdate* one_pass() override { return this; }

  Index size() const override { return n_ * n_; }
  const Vector& offsets() const override {
    if (mode_ == SplitMode::kRowSplit) unpack_full(true);
    return b_;
  }
  const ExternalWeights* external_weights() const override { return this; }
  const Vector& term_weights() const override {
    if (mode_ == SplitMode::kRowSplit) unpack_full(false);
    return w_;
  }

  void row_tile(Index i0, Index m, double* b, double* w) const override {
    const Index n = n_;
    if (i0 % kBlock != 0 || m > kBlock) {
      // Any rows, entry by entry (the dense pass asks for whole blocks of rows, below).
      MatrixMap Bt(b, m, n), Wt(w, m, n);
      for (Index i = 0; i < m; ++i) {
        const Index g = i0 + i;
        for (Index j = 0; j < n; ++j) {
          Bt(i, j) = j <= g ? cell(g, j) : cell(j, g);
          Wt(i, j) = j < g ? cell(j, g) : j > g ? cell(g, j) : w_diagonal_[g];
        }
      }
      return;
    }
    for (Index J = 0; J < blocks_; ++J) unpack_block(i0 / kBlock, J, m, b + J * kBlock, w + J * kBlock, n);
  }

  void visit_row_blocks(Index i0, Index m, const BlockVisitor& visit) const override {
    const Index n = n_;
    if (i0 % kBlock != 0 || m > kBlock) {
      Matrix B(m, n), W(m, n);
      row_tile(i0, m, B.data(), W.data());
      visit(0, n, B.data(), W.data(), n);
      return;
    }
    alignas(64) double b[kBlock * kBlock], w[kBlock * kBlock];
    for (Index J = 0; J < blocks_; ++J) {
      unpack_block(i0 / kBlock, J, m, b, w, kBlock);
      visit(J * kBlock, std::min(kBlock, n - J * kBlock), b, w, kBlock);
    }
  }

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

  // Row-split: b (offsets) or W (weights) whole from the packed layout, once per rebuild, for
  // readers other than the dense pass (the generic ADMM, a certificate, an unpacked state).
  void unpack_full(bool offsets) const {
    const std::lock_guard<std::mutex> lock(full_mutex_);
    Vector& out = offsets ? b_ : w_;
    bool& formed = offsets ? b_formed_ : w_formed_;
    if (formed) return;
    out.resize(n_ * n_);
    MatrixMap M(out.data(), n_, n_);
    for (Index i0 = 0; i0 < n_; i0 += kBlock) {
      const Index m = std::min(kBlock, n_ - i0);
      Matrix B(m, n_), W(m, n_);
      row_tile(i0, m, B.data(), W.data());
      M.middleRows(i0, m) = offsets ? B : W;
    }
    formed = true;
  }
  // The packed layout: an n x n array in blocks of 32 x 32 (row-major blocks, each row-major and
  // 8 KB contiguous; the last block row and column padded), so that block (I, J) and its mirror
  // (J, I) are read as two streams.
  static constexpr Index kBlock = 32;
  // Rows I kBlock .. I kBlock + m - 1 (m <= kBlock) of b and W in the columns of block J, into b
  // and w (row stride `stride`). Block (I, J) of the array holds b_IJ when J < I and W_IJ when
  // J > I; the other comes transposed from block (J, I). Both blocks are 8 KB contiguous, so every
  // read streams. The transposed one is read row by row of the mirror (contiguous) and written
  // down the columns: half the time of reading down the mirror's columns (a full pass at n = 2000,
  // one thread: 5.0 ms against 9.7 ms).
  void unpack_block(Index I, Index J, Index m, double* b, double* w, Index stride) const {
    const Index j0 = J * kBlock, k = std::min(kBlock, n_ - j0);
    const double* own = block_data(I, J);
    const double* mirror = block_data(J, I);
    if (J == I) {  // the diagonal block: b on and below its diagonal, W above it
      for (Index i = 0; i < m; ++i) {
        double* brow = b + i * stride;
        double* wrow = w + i * stride;
        const double* o = own + i * kBlock;
        for (Index j = 0; j < k; ++j) {
          brow[j] = j <= i ? o[j] : own[j * kBlock + i];
          wrow[j] = j > i ? o[j] : own[j * kBlock + i];
        }
        wrow[i] = w_diagonal_[j0 + i];
      }
      return;
    }
    double* straight = J < I ? b : w;    // block (I, J) as stored
    double* transposed = J < I ? w : b;  // from block (J, I)
    for (Index i = 0; i < m; ++i) {
      const double* o = own + i * kBlock;
      double* row = straight + i * stride;
      for (Index j = 0; j < k; ++j) row[j] = o[j];
    }
    for (Index j = 0; j < k; ++j) {
      const double* column = mirror + j * kBlock;  // row j of block (J, I): column j here
      double* out = transposed + j;
      for (Index i = 0; i < m; ++i) out[i * stride] = column[i];
    }
  }
  void allocate_packed() {
    blocks_ = (n_ + kBlock - 1) / kBlock;
    packed_.resize(blocks_ * blocks_ * kBlock * kBlock);
    w_diagonal_.resize(n_);
  }
  const double* block_data(Index I, Index J) const { return packed_.data() + (I * blocks_ + J) * kBlock * kBlock; }
  double& cell(Index i, Index j) {
    return packed_[((i / kBlock) * blocks_ + j / kBlock) * kBlock * kBlock + (i % kBlock) * kBlock + j % kBlock];
  }
  double cell(Index i, Index j) const {
    return packed_[((i / kBlock) * blocks_ + j / kBlock) * kBlock * kBlock + (i % kBlock) * kBlock + j % kBlock];
  }
  void forget_full() {
    const std::lock_guard<std::mutex> lock(full_mutex_);
    Vector().swap(b_);
    Vector().swap(w_);
    b_formed_ = w_formed_ = false;
  }

  Index n_;
  SplitMode mode_;
  const Vector* targets_;
  Matrix X_;
  // Coupled: b and W whole. Row-split: packed_ and w_diagonal_ (terms/dense_row_split.h), and b_
  // and w_ only while a reader has asked for them since the last rebuild.
  mutable Vector w_, b_;
  Vector curvature_, packed_, w_diagonal_;
  Index blocks_ = 0;
  mutable bool b_formed_ = false, w_formed_ = false;
  mutable std::mutex full_mutex_;
  mutable Matrix scratch_;  // kCoupled's transpose in apply()
};

}  // namespace

AllEntriesTerms::AllEntriesTerms(Index n) : n_(n) {
  if (n <= 0) throw Error("", "all-entries terms: dimension must be positive, got " + std::to_string(n));
}

AllEntriesTerms::AllEntriesTerms(Index n, const Matrix& targets) : AllEntriesTerms(n) {
  zero_ = false;
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

double AllEntriesTerms::loss_sum(const Matrix& X, const Loss& loss) const {
  // update_with_loss()'s sums without its writes: per tile pair, the lower block's phi counted
  // twice off the diagonal, then added in pair order (any thread count, the same bits).
  const Index n = n_, pairs = tile_pairs(n);
  if (X.rows() != n) throw Error("", "all-entries terms: X has " + std::to_string(X.rows()) + " rows, expected " + std::to_string(n));
  const double* t = zero_ ? nullptr : targets_.data();
  std::vector<double> sums(static_cast<std::size_t>(pairs));
#pragma omp parallel if (n * n > detail::kParallelWork)
  {
    TileLoss tile;
#pragma omp for schedule(dynamic)
    for (Index q = 0; q < pairs; ++q) {
      const TilePair p = tile_pair(n, q);
      tile.compute(X, p, t, loss);
      sums[static_cast<std::size_t>(q)] = (p.diagonal ? 1.0 : 2.0) * tile.phi.sum();
    }
  }
  double total = 0.0;
  for (double s : sums) total += s;
  return total;
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
