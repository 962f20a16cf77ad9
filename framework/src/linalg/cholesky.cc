// Blocked Cholesky with parallel panel solves and trailing updates (linalg/cholesky.h).
#include "linalg/cholesky.h"

#include <algorithm>

#include <Eigen/Cholesky>

namespace sdprl::linalg {
namespace {
// Columns per block: 64 to 256 measured within 15% of each other at k = 3191; 128 the fastest.
constexpr Index kBlock = 128;

template <class M>
bool factor_in_place(Eigen::Ref<M> A) {
  const Index k = A.rows();
  for (Index j = 0; j < k; j += kBlock) {
    const Index b = std::min(kBlock, k - j), rest = k - j - b;
    Eigen::Ref<M> diagonal = A.block(j, j, b, b);
    const Eigen::LLT<Eigen::Ref<M>> llt(diagonal);  // in place
    if (llt.info() != Eigen::Success) return false;
    if (rest == 0) break;
    const Index blocks = (rest + kBlock - 1) / kBlock;
#pragma omp parallel if (blocks > 1)
    {
      // The panel below, A21 <- A21 L11^{-T}, one row block per task (each row is its own solve):
      // serial, it took a fifth of the factor's time at k = 3191.
#pragma omp for schedule(static)
      for (Index q = 0; q < blocks; ++q) {
        const Index c = q * kBlock, w = std::min(kBlock, rest - c);
        A.block(j, j, b, b).template triangularView<Eigen::Lower>().transpose().template solveInPlace<Eigen::OnTheRight>(
            A.block(j + b + c, j, w, b));
      }
      // The trailing lower triangle, A22 -= A21 A21^T, one column block per task.
      const auto panel = A.block(j + b, j, rest, b);
#pragma omp for schedule(dynamic, 1)
      for (Index q = 0; q < blocks; ++q) {
        const Index c = q * kBlock, w = std::min(kBlock, rest - c);
        A.block(j + b + c, j + b + c, rest - c, w).noalias() -=
            panel.bottomRows(rest - c) * panel.middleRows(c, w).transpose();
      }
    }
  }
  return true;
}
}  // namespace

bool cholesky_in_place(Eigen::Ref<Matrix> A) { return factor_in_place<Matrix>(A); }
bool cholesky_in_place(Eigen::Ref<MatrixF> A) { return factor_in_place<MatrixF>(A); }

void cholesky_solve(const Eigen::Ref<const Matrix>& L, const Vector& b, Vector& x) {
  x = L.triangularView<Eigen::Lower>().solve(b);
  L.triangularView<Eigen::Lower>().transpose().solveInPlace(x);
}

void cholesky_solve(const Eigen::Ref<const MatrixF>& L, const Vector& b, Vector& x) {
  Eigen::VectorXf xf = L.triangularView<Eigen::Lower>().solve(b.cast<float>());
  L.triangularView<Eigen::Lower>().transpose().solveInPlace(xf);
  x = xf.cast<double>();
}

}  // namespace sdprl::linalg
