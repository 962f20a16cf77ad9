// Internal (not installed): the ADMM that minimises one MM step's surrogate H (formulas in
// mm/surrogate.h) and the state it carries across MM steps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "admm/admm_state.h"
#include "mm/surrogate.h"
#include "sdprl/export.h"
#include "sdprl/solver.h"
#include "sdprl/types.h"
#include "xt_step/xt_step.h"

namespace sdprl {


// Admm::run()'s second stopping rule: gap <= max(floor, ratio (H(0) - H(Xt))) besides gap <= eps.
struct RelativeStop {
  double ratio = 0.0;  // AdmmOptions::decrease_ratio; 0 = none
  double floor = 0.0;  // a gap at most this ends the run whatever the gain (a fixed point gains 0)
};

// The ADMM's iteration (Xt-, e-, nu-step, the constraint split's Y- and mu-steps and the gap) on
// one surrogate; the Xt-step itself is a strategy (xt_step/xt_step.h) picked at the first prepare().
class SDPRL_API Admm {
 public:
  // Anderson acceleration starts after this many iterations of one run() (admm.cc).
  static constexpr int kAndersonAfter = 10;
  // An automatic rho is balanced at every this many-th iteration of one run() (admm.cc), so runs
  // that end sooner keep theirs (every shipped model's MM steps at eps_k).
  static constexpr int kRhoEvery = 20;
  // `paths`: the Xt-step's fast paths (xt_step::Paths; all on unless a test turns one off).
  Admm(const Surrogate& surrogate, double rho, const AdmmOptions& options, const xt_step::Paths& paths = {});
  ~Admm();

  // Call after every Surrogate::update(): factors the Xt-step for the new iterate (the first call
  // picks the Xt-step's strategy, xt_step::make_xt_step). The coupled Xt-step's CG preconditioner
  // is rebuilt when it is AdmmOptions::preconditioner_refresh prepare()s old, or when
  // `rebuild_preconditioner`; otherwise the last one is kept. Drops an iteration that
  // update_and_iterate() ran ahead (primed()): the next run() starts afresh.
  void prepare(bool rebuild_preconditioner = false);
  // The Xt-step's strategy (nullptr before the first prepare()).
  const xt_step::XtStep* xt_step() const { return xt_.get(); }
  // prepare()s since the coupled Xt-step's preconditioner was built (0: by the last one); -1 when
  // there is none to keep (direct Xt-step, or none built yet).
  int preconditioner_age() const { return xt_ ? xt_->preconditioner_age() : -1; }
  // True when CG's preconditioner is the row-scaled one (AdmmOptions::preconditioner).
  bool row_scaled_preconditioner() const { return xt_ && xt_->kind() == xt_step::Kind::kCgRowScaled; }
  void set_preconditioner_age(int age) {
    if (xt_) xt_->set_preconditioner_age(age);
  }
  // The Xt-step's own warm start, for SolverState::xt_step_state (XtStep::save): empty for the
  // direct Xt-step; for the coupled one the last Xt (state.D, from which CG starts) and the iterate
  // at which CG's preconditioner was built with its age. Neither changes CG's iterates beyond its
  // tolerance; they are kept so that a resumed run is bit for bit the uninterrupted one. (For the
  // linearised step, Xt is the centre of the proximal term and does change the iterates.)
  std::string save_warm_start(const AdmmState& state) const;
  // Gives a saved warm start back (after the surrogate's update at the resumed X_k): state.D, and
  // the preconditioner rebuilt at its saved iterate (surrogate.update() there and back to X_k).
  // Throws Error when it does not fit this problem.
  void restore_warm_start(const std::string& saved, Surrogate& surrogate, AdmmState& state);
  // Changes rho and refactors the Xt-step (after prepare()).
  void set_rho(double rho);
  double rho() const { return rho_; }
  // tr(2B) / tr(P*P) at the last prepare(): the rho at which the two parts of the Xt-step's
  // matrix have the same scale (0 when P*P = 0). See automatic_rho().
  double balanced_rho() const { return xt_ ? xt_->balanced_rho() : 0.0; }
  // Sizes the state for the surrogate (zeros) if it does not fit; keeps it otherwise. With
  // state.keep_packed on the fused path a fresh state is made packed (u = 0).
  void reset_if_needed(AdmmState& state) const;
  // One iteration (Xt-, e-, nu-step), then the gap. `eps` sets the CG accuracy. The fused row pass
  // packs the state (AdmmState::u); it is unpacked again on return unless state.keep_packed.
  void iterate(AdmmState& state, double eps);
  // Iterates until gap <= eps (at least once) or max_iterations; returns the iteration count.
  // After update_and_iterate(), its iteration counts as the first: run() tests its gap first.
  // With `relative` (RelativeStop) the gap must also be within its share of the step's gain.
  int run(AdmmState& state, double eps, RelativeStop relative = {});

  // The MM rebuild fused with the next ADMM's first iteration (issue #8). Calls
  // surrogate.update(Xk) (the surrogate this Admm was made with) and, on the fused row pass with
  // a one-pass rebuild, factors each row's block of the Xt-step and runs the row's share of the
  // first iteration from the warm `state` as the rebuild hands the row over (its a_h still in
  // cache): one gather of X per MM step fewer, and no separate prepare(). Bit for bit the iterate
  // of prepare(), reset_if_needed(state), state.D = 0 and iterate(state) (tests/fused_rebuild_test.cc).
  // Returns true when it did so (then skip those calls; run() counts the iteration), false when
  // the path does not apply (after the surrogate update alone; call prepare() as usual). Keeps
  // rho; balanced_rho() stays that of the last prepare(). Leaves the state packed (AdmmState::u)
  // for the run() that follows.
  bool update_and_iterate(Surrogate& surrogate, const Matrix& Xk, AdmmState& state);
  // True between an update_and_iterate() that ran the first iteration and the next run().
  bool primed() const { return primed_; }

  // True when the Xt-step is n independent r x r solves (row-split, diagonal B).
  bool direct() const { return xt_ && xt_->exact(); }
  // True when the iteration runs as one fused pass per row (admm/row_kernel.h).
  bool fused() const { return xt_ && xt_->kind() == xt_step::Kind::kFusedRows; }
  // True when the iteration runs as one pass over tiles of rows of all n^2 entry terms
  // (xt_step/dense_rows.h).
  bool dense() const { return xt_ && xt_->kind() == xt_step::Kind::kDenseRows; }
  // The constraint split's penalty (0 without a constraint).
  double constraint_rho() const { return xt_ ? xt_->split_penalty() : 0.0; }

 private:
  // iterate() without the final unpack (run() unpacks once, at its end). Without `gap` the primal
  // value, the dual and the gap are not computed (gap = +inf): run() skips them where it cannot
  // stop anyway.
  void step(AdmmState& state, double eps, bool gap = true);
  // The rho that balances the last iteration's relative primal and dual residuals (OSQP's rule),
  // or rho_ while they are within a factor kRhoBand^2 of each other (admm.cc).
  double residual_balanced_rho(const AdmmState& state);
  void choose_xt_step();

  const Surrogate& s_;
  double rho_;
  const ConvexConstraint* constraint_ = nullptr;
  AdmmOptions options_;
  xt_step::Paths paths_;
  std::unique_ptr<xt_step::XtStep> xt_;
  bool primed_ = false;           // update_and_iterate() ran the next run()'s first iteration
  std::uint64_t generation_ = 0;  // changes at every prepare(): P, and so P*(nu), changed
  // scratch
  Vector y_;
  Matrix rhs_, work_, work2_;
};

}  // namespace sdprl
