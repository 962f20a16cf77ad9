// Internal (not installed): the MM loop of docs/method.md sections 2-3 (paper Alg. 2 and 4), from
// an initialised X or from a saved state; sdprl::solve() sets up the run and calls it.
#pragma once

#include "sdprl/solver.h"
#include "xt_step/xt_step.h"

namespace sdprl::mm {

// From the initialised X (start == nullptr; `summary` holds the sizes and the rho chosen so far)
// or from a saved state (sdprl/solver.h: SolverState).
Summary solve_mm(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                 const SolverOptions& options, Matrix& X, const IterationCallback& callback,
                 const CheckpointCallback& checkpoint, Summary summary, const SolverState* start,
                 const xt_step::Paths& paths);

}  // namespace sdprl::mm
