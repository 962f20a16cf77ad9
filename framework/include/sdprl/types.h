// Basic numeric types shared by every sdprl interface.
#pragma once

#include <Eigen/Core>
#include <cstdint>

namespace sdprl {

using Index = Eigen::Index;
// The factor X (n x r) is row-major: the hot loops of the sparse path read one row x_i at a time
// (docs/method.md section 3), so rows must be contiguous.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;
// Single precision, where a product or a factor only needs to be approximate (a preconditioner,
// or the dense pass's products while the ADMM tolerance is loose): half the memory traffic and
// twice the SIMD width.
using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace sdprl
