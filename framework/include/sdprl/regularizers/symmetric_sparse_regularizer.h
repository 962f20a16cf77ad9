// A regulariser (gamma/2) <X, A X> with an explicit sparse symmetric A of any inertia (e.g.
// A = -F_0 of an SDPA file, sdprl/io/sdpa.h). SparseRegularizer covers the PSD case (A_+ = A);
// here the positive part A_+ is computed.
//
// A is block diagonal over the connected components of its sparsity graph (i ~ j when A_ij != 0),
// and so is A_+: each component's principal block is eigen-split once, A_+ = V max(Lambda, 0) V^T,
// and kept as a dense c x c block (c = the component's size) only when it has a positive
// eigenvalue. A component of one row is just max(A_ii, 0). Memory and time are those of the
// largest components, never n x n unless A connects all rows; components larger than
// kMaxComponent are refused with a clear message. The eigen-splits wait for the first call that
// needs A_+ (a solver that only applies A, as the max-cut one of docs/method.md section 9.1, skips
// them: mcp500-1's one 500-row block took 45% of its run); the object is not copyable.
#pragma once

#include <Eigen/SparseCore>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/regularizer.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API SymmetricSparseRegularizer final : public Regularizer {
 public:
  static constexpr Index kMaxComponent = 3000;

  // A must be square, symmetric (up to 1e-12 relative) and finite; throws Error otherwise, and for
  // a connected component of more than kMaxComponent rows.
  explicit SymmetricSparseRegularizer(Eigen::SparseMatrix<double> A, std::string name = "sparse-symmetric");
  // A denser than a quarter is also kept dense up to this many rows (32 MB), for apply's products.
  static constexpr Index kDenseRows = 2048;
  ~SymmetricSparseRegularizer() override;

  std::string name() const override { return name_; }
  Index dimension() const override { return A_.rows(); }
  void apply(const Matrix& X, Matrix& out) const override;
  // True when every component is negative semidefinite (e.g. A = -F_0 with F_0 PSD).
  bool positive_part_is_zero() const override {
    split();
    return blocks_.empty() && !diag_plus_.any();
  }
  void apply_positive(const Matrix& X, Matrix& out) const override;
  void positive_diagonal(Vector& d) const override {
    split();
    d = positive_diagonal_;
  }
  // d_i = sum_j |(A_+)_ij| (Gershgorin on A_+): diag(d) - A_+ has the non-negative diagonal
  // sum_{j != i} |(A_+)_ij|, which dominates its row's off-diagonal entries, so it is PSD.
  bool positive_diagonal_majorant(Vector& d) const override {
    split();
    d = majorant_;
    return true;
  }

  const Eigen::SparseMatrix<double>& matrix() const { return A_; }

 private:
  struct Block {
    std::vector<std::int32_t> rows;
    Eigen::MatrixXd positive;  // A_+ on these rows
  };
  void split() const;  // the eigen-splits below, once (thread-safe)
  void split_components() const;

  Eigen::SparseMatrix<double> A_;
  Matrix dense_;  // A itself when a quarter or more of it is nonzero and n <= kDenseRows, else empty
  std::string name_;
  std::vector<std::vector<std::int32_t>> components_;  // of two or more rows, until split()
  mutable std::once_flag split_once_;
  mutable std::vector<Block> blocks_;  // components of two or more rows with a nonzero A_+
  mutable Eigen::ArrayXd diag_plus_;   // max(A_ii, 0) for single-row components, 0 elsewhere
  mutable Vector positive_diagonal_, majorant_;
};

}  // namespace sdprl
