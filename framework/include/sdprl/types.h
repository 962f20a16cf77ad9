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

}  // namespace sdprl
