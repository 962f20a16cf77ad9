// Internal (not installed): the Cholesky factor of a dense symmetric positive definite matrix, its
// panel solves and trailing updates shared by the threads. Eigen's LLT updates the trailing matrix
// with one single-threaded triangular product; blocked by hand, the panel's row blocks and the
// updates of the column blocks run in parallel (k = 3191, the polish's Schur complement at
// sdpa_compare's n = 100: 0.26 s against 0.64 s on 2 cores; in single precision 0.15 s). Each
// block's product is the same whichever thread runs it, so the factor is the same bits for any
// thread count.
#pragma once

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl::linalg {

// A = L L^T in place (L in the lower triangle; the strict upper triangle is not read or written).
// False when A is not positive definite to working precision.
SDPRL_API bool cholesky_in_place(Eigen::Ref<Matrix> A);
// The same in single precision (MatrixF, sdprl/types.h), for a factor that only preconditions: the
// refinement against the exact products corrects its error.
SDPRL_API bool cholesky_in_place(Eigen::Ref<MatrixF> A);

// x = (L L^T)^{-1} b with the factor of cholesky_in_place() (for a single-precision factor, b is
// rounded to it and x is its solution widened).
SDPRL_API void cholesky_solve(const Eigen::Ref<const Matrix>& L, const Vector& b, Vector& x);
SDPRL_API void cholesky_solve(const Eigen::Ref<const MatrixF>& L, const Vector& b, Vector& x);

}  // namespace sdprl::linalg
