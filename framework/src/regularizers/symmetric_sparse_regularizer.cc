// The sparse symmetric (indefinite) regulariser (see sdprl/regularizers/symmetric_sparse_regularizer.h).
#include "sdprl/regularizers/symmetric_sparse_regularizer.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include "sdprl/error.h"

namespace sdprl {
namespace {

// Union-find with path halving: the connected components of A's sparsity graph.
struct Components {
  explicit Components(Index n) : parent(static_cast<std::size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  Index find(Index i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(Index a, Index b) { parent[find(a)] = find(b); }
  std::vector<Index> parent;
};

}  // namespace

SymmetricSparseRegularizer::SymmetricSparseRegularizer(Eigen::SparseMatrix<double> A, std::string name)
    : A_(std::move(A)), name_(std::move(name)) {
  const Index n = A_.rows();
  if (A_.rows() != A_.cols())
    throw Error("", "a sparse A must be square, got " + std::to_string(A_.rows()) + " x " + std::to_string(A_.cols()));
  A_.prune(0.0);
  A_.makeCompressed();
  double scale = 0.0;
  for (Index k = 0; k < A_.nonZeros(); ++k) {
    if (!std::isfinite(A_.valuePtr()[k])) throw Error("", "a sparse A must be finite");
    scale = std::max(scale, std::abs(A_.valuePtr()[k]));
  }
  const Eigen::SparseMatrix<double> diff = A_ - Eigen::SparseMatrix<double>(A_.transpose());
  for (Index k = 0; k < diff.nonZeros(); ++k)
    if (std::abs(diff.valuePtr()[k]) > 1e-12 * scale)
      throw Error("", "a sparse A must be symmetric, |A - A^T| reaches " + std::to_string(std::abs(diff.valuePtr()[k])));

  Components comp(n);
  for (Index c = 0; c < A_.outerSize(); ++c)
    for (Eigen::SparseMatrix<double>::InnerIterator it(A_, c); it; ++it) comp.join(it.row(), it.col());
  std::vector<std::vector<std::int32_t>> members(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) members[comp.find(i)].push_back(static_cast<std::int32_t>(i));

  diag_plus_ = Eigen::ArrayXd::Zero(n);
  positive_diagonal_ = Vector::Zero(n);
  majorant_ = Vector::Zero(n);
  for (auto& rows : members) {
    const Index c = static_cast<Index>(rows.size());
    if (c == 0) continue;
    if (c == 1) {
      const Index i = rows[0];
      diag_plus_[i] = std::max(A_.coeff(i, i), 0.0);
      positive_diagonal_[i] = majorant_[i] = diag_plus_[i];
      continue;
    }
    if (c > kMaxComponent)
      throw Error("", "the positive part of an indefinite A needs an eigen-split of each connected block of A; "
                      "one block has " + std::to_string(c) + " rows, more than " + std::to_string(kMaxComponent));
    components_.push_back(std::move(rows));
  }
  if (n <= kDenseRows && 4 * A_.nonZeros() >= n * n) dense_ = Matrix(A_);
}

void SymmetricSparseRegularizer::split() const {
  std::call_once(split_once_, [this] { split_components(); });
}

void SymmetricSparseRegularizer::split_components() const {
  std::vector<Index> local(static_cast<std::size_t>(A_.rows()), 0);
  for (const auto& rows : components_) {
    const Index c = static_cast<Index>(rows.size());
    // The component's principal block from its columns' nonzeros (all inside the component).
    for (Index a = 0; a < c; ++a) local[rows[a]] = a;
    Eigen::MatrixXd B = Eigen::MatrixXd::Zero(c, c);
    for (Index a = 0; a < c; ++a)
      for (Eigen::SparseMatrix<double>::InnerIterator it(A_, rows[a]); it; ++it) B(local[it.row()], a) = it.value();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(B);
    if (eig.info() != Eigen::Success) throw Error("", "eigen-split of a block of A failed");
    if (eig.eigenvalues().maxCoeff() <= 0.0) continue;  // negative semidefinite block: A_+ = 0 there
    Block blk;
    blk.positive = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() * eig.eigenvectors().transpose();
    for (Index a = 0; a < c; ++a) {
      positive_diagonal_[rows[a]] = blk.positive(a, a);
      majorant_[rows[a]] = blk.positive.row(a).cwiseAbs().sum();
    }
    blk.rows = rows;
    blocks_.push_back(std::move(blk));
  }
}

SymmetricSparseRegularizer::~SymmetricSparseRegularizer() = default;

// A dense A by a dense product (SDPLIB theta1's A = -1 1^T: Eigen's sparse times row-major dense
// product was 73% of its augmented Lagrangian, a row at a time 69%). Otherwise row i of A X is
// sum_j A_ij x_j over column i's nonzeros (A is symmetric and stored by columns), each output row
// on its own: threads over rows only where the product is large.
void SymmetricSparseRegularizer::apply(const Matrix& X, Matrix& out) const {
  if (dense_.size() > 0) {
    out.noalias() = dense_ * X;
    return;
  }
  const Index n = A_.rows(), r = X.cols();
  out.resize(n, r);
  const int* outer = A_.outerIndexPtr();
  const int* inner = A_.innerIndexPtr();
  const double* value = A_.valuePtr();
  const auto row = [&](Index i) {
    auto o = out.row(i);
    o.setZero();
    for (int k = outer[i]; k < outer[i + 1]; ++k) o.noalias() += value[k] * X.row(inner[k]);
  };
  if (static_cast<double>(A_.nonZeros()) * static_cast<double>(r) < 1 << 18) {
    for (Index i = 0; i < n; ++i) row(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) row(i);
}

void SymmetricSparseRegularizer::apply_positive(const Matrix& X, Matrix& out) const {
  split();
  out = diag_plus_.matrix().asDiagonal() * X;
  Eigen::MatrixXd Xb, Ob;
  for (const Block& b : blocks_) {
    const Index c = static_cast<Index>(b.rows.size());
    Xb.resize(c, X.cols());
    for (Index a = 0; a < c; ++a) Xb.row(a) = X.row(b.rows[a]);
    Ob.noalias() = b.positive * Xb;
    for (Index a = 0; a < c; ++a) out.row(b.rows[a]) += Ob.row(a);
  }
}

}  // namespace sdprl
