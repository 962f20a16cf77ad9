// Internal: the kFusedRows strategy (xt_step/xt_step.h). Row-split with a diagonal B and terms
// that hand out their rows (TermLinearization::row_offsets, unit weights): the Xt-step is the n
// row blocks, and the whole ADMM iteration runs as one fused pass per row (admm/row_kernel.h);
// where the terms have a one-pass rebuild, that pass is fused with the MM rebuild too. Under a
// constraint whose projection acts row by row (X >= 0) the Constrained wrapper holds this strategy
// and the pass runs the constraint split's Y- and mu-steps per row as well.
#pragma once

#include <vector>

#include "admm/row_kernel.h"
#include "xt_step/blocks.h"
#include "xt_step/xt_step.h"

namespace sdprl::xt_step {

class FusedRows final : public XtStep {
 public:
  FusedRows(const Surrogate& surrogate, const AdmmOptions& options, bool fuse_rebuild)
      : XtStep(surrogate, options), fuse_rebuild_(fuse_rebuild) {}
  ~FusedRows() override;
  Kind kind() const override { return Kind::kFusedRows; }
  void prepare(double rho, bool rebuild_preconditioner) override;
  void set_rho(double rho) override;
  void solve(const Matrix& rhs, Matrix& D, double eps, long* cg_iterations) override;
  void apply_gram(const Matrix& D, Matrix& out) const override;
  bool iterate_rows(AdmmState& state, double rho, double eps) override;
  bool fuses_rebuild() const override { return fuse_rebuild_; }
  bool rebuild_and_iterate(Surrogate& surrogate, const Matrix& Xk, AdmmState& state, double rho) override;

 private:
  class RowStep;  // rebuild_and_iterate()'s RowConsumer
  static void mark_partial(const detail::RowShares& shares, AdmmState& state);
  bool fuse_rebuild_;
  RowBlockInverse blocks_{/*use_parts=*/false};  // its kernel reads gram() and inverse()
  Index max_degree_ = 0;  // largest number of split terms in one row
  bool gram_stale_ = false;  // the Gram blocks predate the last rebuild_and_iterate() (refreshed on demand)
};

}  // namespace sdprl::xt_step
