// The colored-MVU regulariser A = -H T H (paper Section "Robust CMVU", eq. (lker): Kbar = H T H;
// docs/method.md section 1, "A = -K with K PSD => A_+ = 0"), with T = Y Y^T the label kernel
// (Y the n x c one-hot class matrix: T_ij = 1 when samples i and j share a label, else 0) and
// H = I - 1 1^T / n the centering matrix.
//
// Nothing n x n is formed: with C = H Y (n x c, the one-hot matrix with each column's mean
// removed), Kbar = C C^T, so A is the public low-rank piece sdprl::LowRankRegularizer with factor C
// and sign -1 (A X = -C (C^T X), O(n c r)). Kbar is PSD, so A_+ = 0: the MM surrogate only
// linearises the A-term.
//
// The nonzero eigenvalues of Kbar are those of the c x c matrix C^T C = diag(n_c) - n n^T / n
// (n_c the class sizes), at most max_c n_c; LowRankRegularizer::spectral_norm() returns the
// largest. The quadratic part (gamma/2)<X, A X> + (lambda/2)||X||^2 is convex exactly when
// lambda >= gamma * spectral_norm().
//
// Header-only so that tests can check it against the dense definition without loading the plugin.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sdprl/error.h"
#include "sdprl/regularizers/low_rank_regularizer.h"
#include "sdprl/types.h"

namespace sdprl::cmvu {

// C = H Y: column k is the indicator of class k minus its mean n_k / n. `classes[i]` in
// [0, num_classes) is the class of sample i; a class without samples gives a zero column.
inline Eigen::MatrixXd centered_one_hot(const std::vector<std::int32_t>& classes, Index num_classes) {
  const Index n = static_cast<Index>(classes.size());
  if (n < 1) throw Error("", "centered label kernel: no samples");
  if (num_classes < 1) throw Error("", "centered label kernel: no classes");
  Eigen::VectorXd counts = Eigen::VectorXd::Zero(num_classes);
  for (std::int32_t k : classes) {
    if (k < 0 || k >= num_classes)
      throw Error("", "centered label kernel: class index " + std::to_string(k) + " outside [0, " +
                          std::to_string(num_classes) + ")");
    counts[k] += 1.0;
  }
  Eigen::MatrixXd C = Eigen::MatrixXd::Zero(n, num_classes);
  C.rowwise() -= (counts / static_cast<double>(n)).transpose();
  for (Index i = 0; i < n; ++i) C(i, classes[static_cast<std::size_t>(i)]) += 1.0;
  return C;
}

// A = -H T H = -C C^T.
inline std::shared_ptr<LowRankRegularizer> centered_label_kernel(const std::vector<std::int32_t>& classes,
                                                                 Index num_classes) {
  return std::make_shared<LowRankRegularizer>(centered_one_hot(classes, num_classes), -1.0,
                                              "centered-label-kernel");
}

}  // namespace sdprl::cmvu
