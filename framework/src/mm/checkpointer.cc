// The saved state of the MM loop (mm/checkpointer.h).
#include "mm/checkpointer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sdprl/error.h"

namespace sdprl::mm {

void validate_resume(const SolverState& start, const Model& model, double f, Index n, Index rank, Index h) {
  if (!(std::abs(f - start.objective) <= 1e-12 * std::abs(start.objective)))
    throw Error("solver", "the saved state does not belong to this problem: F at its X_" + std::to_string(start.k) +
                              " is " + fmt("%.17g", f) + " here, " + fmt("%.17g", start.objective) +
                              " when it was saved (did the model's data, a plugin or the options change?)");
  const bool constrained = model.constraint != nullptr;
  auto fits = [](const Matrix& M, Index rows, Index cols) { return M.rows() == rows && M.cols() == cols; };
  const bool packed = start.u.size() != 0;
  auto fits_or_empty = [&](const Matrix& M) { return M.size() == 0 || fits(M, n, rank); };
  if ((packed ? start.u.size() != h || start.nu.size() != 0 || start.e.size() != 0 || !(start.rho > 0.0)
              : start.nu.size() != h || start.e.size() != h) ||
      (constrained ? !(fits(start.mu, n, rank) && fits_or_empty(start.Y))
                   : (start.mu.size() != 0 || start.Y.size() != 0)))
    throw Error("solver", "the saved ADMM state does not fit this problem (" +
                              std::to_string(std::max(start.nu.size(), start.u.size())) + " multipliers saved, " +
                              std::to_string(h) + " split terms here)");
}

void resume_from(const SolverState& start, Summary& summary, AdmmState& state, LoopVariables& loop) {
  // The saved summary is this run's so far: its counters, trace and times go on. What describes
  // the problem (n, rank, the terms, the weights) is the same, as validate_resume checked; the
  // status and message are the resumed run's own.
  summary = start.summary;
  summary.message.clear();
  summary.rho = start.rho;
  summary.final_objective = loop.f = start.objective;
  // Packed as saved, so that the resumed run continues from the very same doubles.
  if (start.u.size() != 0) {
    state.u = start.u;
    state.packed_rho = start.rho;
  } else {
    state.nu = start.nu;
    state.e = start.e;
  }
  state.mu = start.mu;
  state.Y = start.Y;
  loop.c0 = start.c0;
  loop.small_steps = start.small_steps;
  loop.tight = start.tight;
  loop.tau_trial = start.tau_trial;
  loop.first_step = start.k + 1;
  loop.time_before = start.summary.solve_time;
}

void Checkpointer::take(int k, const Matrix& X, const LoopVariables& loop, const Surrogate& surrogate, const Admm& admm,
          AdmmState& state, const Summary& summary) {
  SolverState saved;
  saved.k = k;
  saved.X = X;
  saved.objective = loop.f;
  saved.c0 = loop.c0;
  saved.rho = summary.rho;
  saved.small_steps = loop.small_steps;
  saved.tight = loop.tight;
  saved.tau_trial = loop.tau_trial;
  saved.curvature_scale = surrogate.curvature_scale();
  saved.xt_step_state = admm.save_warm_start(state);
  // The ADMM vectors are lent, not copied (m = 10^5: 23M doubles), and given back even when
  // the callback throws. A packed state is saved packed (at saved.rho, the ADMM's rho): unpacked
  // and packed again, (nu, e) would come back different in the last bits.
  state.share_packed();  // under several processes: every process's rows of u (collective)
  if (state.packed() && state.packed_rho != saved.rho) state.unpack();  // (not in practice)
  auto swap_vectors = [&] {
    saved.u.swap(state.u);
    saved.nu.swap(state.nu);
    saved.e.swap(state.e);
    saved.Y.swap(state.Y);
    saved.mu.swap(state.mu);
  };
  swap_vectors();
  saved.summary = summary;
  saved.summary.solve_time = time_before_ + seconds_since(t_solve_);
  try {
    callback_(saved);
  } catch (...) {
    swap_vectors();
    throw;
  }
  swap_vectors();
  last_ = Clock::now();
}
}  // namespace sdprl::mm
