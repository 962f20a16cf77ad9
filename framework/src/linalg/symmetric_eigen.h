// Internal (not installed): extreme eigenpairs of a symmetric n x n operator given matrix-free
// (y = S x as n x 1 matrices), for the spectral start (init/initialize.cc) and the unboundedness
// certificate (mm/unbounded.cc). Nothing n x n is formed unless n is small.
#pragma once

#include <functional>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl::linalg {

using SymmetricOperator = std::function<void(const Matrix& x, Matrix& y)>;

enum class Extreme { kLargest, kSmallest };

// Lanczos' settings: its Krylov space at least `min_ncv` vectors, its relative tolerance.
struct LanczosSettings {
  Index min_ncv = 20;
  double tolerance = 1e-8;
  Index max_restarts = 1000;
  // False: the dense solve returns the values alone (vectors empty), skipping the accumulation of
  // the eigenvectors, most of its time (the certificate of mcp250-1, n = 250: 20% of the run).
  // The values are the same bits either way (the same QR steps on the same tridiagonal matrix).
  bool dense_vectors = true;
};

// The size up to which extreme_eigenpairs() solves densely (all n eigenpairs at once).
constexpr Index kDenseEigenSize = 300;

// The k eigenpairs of S at the `which` end of its spectrum (algebraic order), the most extreme
// first. Dense (Eigen, S built column by column and symmetrised) for n <= kDenseEigenSize or when Lanczos
// has no room (ncv = min(n, max(2k + 1, min_ncv)) <= k + 1); Lanczos (Spectra) otherwise. False
// when Lanczos does not converge within settings.max_restarts.
SDPRL_API bool extreme_eigenpairs(const SymmetricOperator& S, Index n, Index k, Extreme which, Eigen::VectorXd& values,
                                  Eigen::MatrixXd& vectors, const LanczosSettings& settings = {});

// The numerical rank of Z = X X^T: how many of its eigenvalues exceed `relative` times the largest
// (those of the r x r Gram X^T X, O(n r^2): nothing n x n). tools/bench/sdpa_compare counts the
// rank of sdpa's Z with the same rule (relative = 1e-6), so the two compare. -1 when X is not
// finite; 0 when X = 0.
SDPRL_API Index numerical_rank(const Matrix& X, double relative = 1e-6);

}  // namespace sdprl::linalg
