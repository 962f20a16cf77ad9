// Internal: a one-pass rebuild (OnePassUpdate) that, under several processes
// (parallel/processes.h), rebuilds only this process's rows of the fused row pass when that pass
// consumes them (docs/method.md section 11). The sums it returns and the curvature are the whole
// problem's; the other processes' rows of b, the scales and the Gram blocks are rebuilt on first
// use by any other reader (offsets(), the products, the Gram blocks), the same bits as a whole
// rebuild. The fused pass reads its own rows without that.
#pragma once

namespace sdprl::detail {

class SplitRebuild {
 public:
  virtual ~SplitRebuild() = default;
  // b_h as the last rebuild left it: this process's rows are current, others' may not be.
  virtual const double* local_offsets() const = 0;
};

}  // namespace sdprl::detail
