// Internal (not installed): what the MM loop saves and restores (sdprl/solver.h: SolverState) —
// the loop's own variables, the checks that a saved state belongs to the problem, and the
// periodic and interrupt checkpoints.
#pragma once

#include "admm/admm.h"
#include "mm/loop_support.h"
#include "mm/surrogate.h"
#include "parallel/processes.h"
#include "sdprl/solver.h"

namespace sdprl::mm {

// The MM loop's own variables besides X, the surrogate and the ADMM: what a checkpoint saves.
struct LoopVariables {
  int first_step = 1;
  double f = 0.0;            // F(X_k)
  double c0 = 0.0;           // eps_k = max(eps_min, c0 / k^b0)
  int small_steps = 0;       // consecutive steps with a relative change below the tolerance
  bool tight = false;        // SolverState::tight
  double time_before = 0.0;  // seconds of MM loop before a resume, so that trace times continue
  TauTrial tau_trial;        // SolverState::tau_trial
};

// Resume validation: throws Error unless `start` belongs to this problem. `f` is F at start->X
// here. The same model, data and plugins give the same F(X_k) up to rounding (bit for bit on the
// same machine and thread count); anything else means the problem is not the saved one. `h` is
// the number of split terms.
void validate_resume(const SolverState& start, const Model& model, double f, Index n, Index rank, Index h);

// The counters, the trace and the ADMM warm start of a validated saved state.
void resume_from(const SolverState& start, Summary& summary, AdmmState& state, LoopVariables& loop);

// Takes the checkpoints of one solve: every SolverOptions::checkpoint_interval seconds, and when
// an interrupt stops the run.
class Checkpointer {
 public:
  Checkpointer(const CheckpointCallback& callback, const SolverOptions& options, Clock::time_point t_solve,
               double time_before)
      : callback_(callback), options_(options), t_solve_(t_solve), time_before_(time_before), last_(Clock::now()) {}

  bool enabled() const { return static_cast<bool>(callback_); }
  // A periodic checkpoint is due at the end of MM step k (not after the last one).
  // Under several processes they agree (each reads its own clock; taking one is collective).
  bool due(int k) const {
    const bool due = callback_ && options_.checkpoint_interval > 0.0 && k < options_.max_mm_iterations &&
                     seconds_since(last_) >= options_.checkpoint_interval;
    return processes::distributed() ? processes::any(due) : due;
  }

  // The state at the end of MM step k: X_k and F(X_k), the loop's variables, the surrogate's
  // curvature scale, the ADMM's warm start and the Xt-step's own.
  void take(int k, const Matrix& X, const LoopVariables& loop, const Surrogate& surrogate, const Admm& admm,
            AdmmState& state, const Summary& summary);

 private:
  const CheckpointCallback& callback_;
  const SolverOptions& options_;
  Clock::time_point t_solve_;
  double time_before_;
  Clock::time_point last_;
};

}  // namespace sdprl::mm
