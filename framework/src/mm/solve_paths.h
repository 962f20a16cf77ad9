// Internal (not installed): solve() with the Xt-step's fast paths chosen (xt_step::Paths), for the
// tests and benchmarks that compare a fast path with the generic one.
#pragma once

#include "sdprl/export.h"
#include "sdprl/solver.h"
#include "xt_step/xt_step.h"

namespace sdprl::detail {

// sdprl::solve() is this with every path on.
SDPRL_API Summary solve(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                        const SolverOptions& options, Matrix& X, const xt_step::Paths& paths,
                        const IterationCallback& callback = {}, const SolverState* start = nullptr,
                        const CheckpointCallback& checkpoint = {});

}  // namespace sdprl::detail
