// Internal (not installed): what the SDP solvers outside MM (sdp/spheres.h,
// sdp/augmented_lagrangian.h) do first: threads, the rank, and their Summary begun.
#pragma once

#include <string>

#include "sdprl/error.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::sdp {

// The rank is options.rank, or the model's default when 0; Error("solver.rank") outside [1, n].
inline Summary begin_solve(const Model& model, const SolverOptions& options, SolverType type) {
  set_threads(options.threads);
  const Index n = model.terms->dimension();
  const Index rank = options.rank > 0 ? options.rank : model.default_rank;
  if (rank < 1 || rank > n)
    throw Error("solver.rank", "rank " + std::to_string(rank) + " is outside [1, n = " + std::to_string(n) + "]");
  Summary summary;
  summary.solver = type;
  summary.n = n;
  summary.rank = rank;
  summary.terms = model.terms->size();
  summary.rho = 0.0;
  return summary;
}

}  // namespace sdprl::sdp
