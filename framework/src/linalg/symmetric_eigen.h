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
};

// The size up to which extreme_eigenpairs() solves densely (all n eigenpairs at once).
constexpr Index kDenseEigenSize = 300;

// The k eigenpairs of S at the `which` end of its spectrum (algebraic order), the most extreme
// first. Dense (Eigen, S built column by column and symmetrised) for n <= kDenseEigenSize or when Lanczos
// has no room (ncv = min(n, max(2k + 1, min_ncv)) <= k + 1); Lanczos (Spectra) otherwise. False
// when Lanczos does not converge within settings.max_restarts.
SDPRL_API bool extreme_eigenpairs(const SymmetricOperator& S, Index n, Index k, Extreme which, Eigen::VectorXd& values,
                                  Eigen::MatrixXd& vectors, const LanczosSettings& settings = {});

}  // namespace sdprl::linalg
