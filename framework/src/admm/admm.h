// Internal (not installed): the ADMM that minimises one MM step's surrogate H (formulas in
// mm/surrogate.h) and the state it carries across MM steps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mm/surrogate.h"
#include "sdprl/export.h"
#include "sdprl/solver.h"
#include "sdprl/types.h"

namespace sdprl {

// The ADMM state carried across MM steps (warm start, algorithm.md section 3).
struct AdmmState {
  Matrix D;    // Xt, n x r
  Matrix step; // the step the MM takes: D, or Y - X_k (feasible) under a constraint
  Matrix Y;    // constraint split: Y = X_k + D projected onto K
  Matrix mu;   // its multiplier (in the polar cone of K)
  Vector e;    // split variables
  Vector nu;   // multipliers, |nu| <= 2 (|nu_h| <= 2 w_h with term_weights())
  // The fused row pass (admm/row_kernel.h) keeps nu and e packed in one vector,
  //   u = nu + rho e,   from which   nu = clamp(u, -2, 2),  e = (u - nu) / rho,
  // exact for the states the ADMM makes (nu_h = 2 sign(e_h) where e_h != 0; u = rho z with the
  // e-step's z): one double per split term read and written per iteration instead of two (issue
  // #8: 16 of the 52 bytes per term at m = 10^5). While packed() the state is u alone (nu and e
  // are empty); unpack() gives nu and e back. Admm::run() and iterate() unpack before they return
  // unless keep_packed (the MM solver keeps it packed between its steps).
  Vector u;
  double packed_rho = 0.0;  // > 0: u holds the state, packed at this rho
  bool keep_packed = false;
  bool packed() const { return packed_rho > 0.0; }
  // (nu, e) -> u at `rho`; a packed state at another rho is unpacked first. Exact in exact
  // arithmetic for states with nu_h in 2 sign(e_h) (the ADMM's); others are projected onto them.
  SDPRL_API void pack(double rho);
  // u -> (nu, e); nothing when not packed.
  SDPRL_API void unpack();
  Vector PD;   // P(D) of the last iteration
  // Direct Xt-step: P*(nu) and P*(b - e), kept up to date by Admm::iterate so that an iteration
  // needs one adjoint instead of two. Valid while adjoint_generation matches the Admm's; a caller
  // that changes nu or e by hand sets adjoint_generation = 0.
  Matrix Pnu, Pu;
  std::uint64_t adjoint_generation = 0;
  double primal = 0.0, dual = 0.0, gap = 0.0;
  int iterations = 0;      // in the last run()
  long cg_iterations = 0;  // in the last run() (coupled Xt-step)
};

// The coupled Xt-step's warm start in SolverState::xt_step_state (Admm::save_warm_start).
struct CgWarmStart {
  Matrix D;                 // the last Xt (CG's start)
  Matrix X_preconditioner;  // the iterate at which CG's preconditioner was built
  int preconditioner_age = -1;
};
SDPRL_API std::string encode_warm_start(const CgWarmStart& warm);
// False when `bytes` is not one (empty bytes: an empty CgWarmStart, true).
SDPRL_API bool decode_warm_start(const std::string& bytes, CgWarmStart* warm);

class SDPRL_API Admm {
 public:
  Admm(const Surrogate& surrogate, double rho, const AdmmOptions& options);
  ~Admm();

  // Call after every Surrogate::update(): factors the Xt-step for the new iterate. The coupled
  // Xt-step's CG preconditioner is rebuilt when it is AdmmOptions::preconditioner_refresh
  // prepare()s old, or when `rebuild_preconditioner`; otherwise the last one is kept. Drops an
  // iteration that update_and_iterate() ran ahead (primed()): the next run() starts afresh.
  void prepare(bool rebuild_preconditioner = false);
  // prepare()s since the coupled Xt-step's preconditioner was built (0: by the last one); -1 when
  // there is none to keep (direct Xt-step, or none built yet). A resumed MM run sets it back with
  // set_preconditioner_age() after a prepare(true) at the saved preconditioner's iterate, so that
  // it continues with the very same preconditioner (bit for bit, sdprl/solver.h: SolverState).
  int preconditioner_age() const { return preconditioner_age_; }
  // True when CG's preconditioner is the row-scaled one (AdmmOptions::preconditioner).
  bool row_scaled_preconditioner() const { return row_scaled_; }
  void set_preconditioner_age(int age) { preconditioner_age_ = age; }
  // The Xt-step's own warm start, for SolverState::xt_step_state: empty for the direct Xt-step;
  // for the coupled one the last Xt (state.D, from which CG starts) and the iterate at which CG's
  // preconditioner was built with its age (CgWarmStart). Neither changes the ADMM's iterates beyond
  // CG's tolerance; they are kept so that a resumed run is bit for bit the uninterrupted one.
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
  double balanced_rho() const { return balanced_rho_; }
  // Sizes the state for the surrogate (zeros) if it does not fit; keeps it otherwise. With
  // state.keep_packed on the fused path a fresh state is made packed (u = 0).
  void reset_if_needed(AdmmState& state) const;
  // One iteration (Xt-, e-, nu-step), then the gap. `eps` sets the CG accuracy. The fused row pass
  // packs the state (AdmmState::u); it is unpacked again on return unless state.keep_packed.
  void iterate(AdmmState& state, double eps);
  // Iterates until gap <= eps (at least once) or max_iterations; returns the iteration count.
  // After update_and_iterate(), its iteration counts as the first: run() tests its gap first.
  int run(AdmmState& state, double eps);

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
  bool direct() const { return direct_; }
  // True when the iteration runs as one fused pass per row (admm/row_kernel.h).
  bool fused() const { return fused_; }
  // The constraint split's penalty (0 without a constraint).
  double constraint_rho() const { return rho_k_; }

 private:
  // iterate() without the final unpack (run() unpacks once, at its end).
  void step(AdmmState& state, double eps);
  void solve_xt(const Matrix& rhs, Matrix& D, double eps, long* cg_iterations);
  void apply_system(const Matrix& D, Matrix& out) const;
  void apply_preconditioner(const Matrix& R, Matrix& out) const;
  void factor_blocks();
  // out = P*P D from the Gram blocks (direct Xt-step only).
  void apply_gram(const Matrix& D, Matrix& out) const;
  class RowStep;  // update_and_iterate()'s RowConsumer (admm.cc)
  std::unique_ptr<RowStep> row_step_;
  bool primed_ = false;      // update_and_iterate() ran the next run()'s first iteration
  bool gram_stale_ = false;  // gram_ predates the last update_and_iterate() (refreshed on demand)

  const Surrogate& s_;
  double rho_;
  double rho_k_ = 0.0;  // penalty of the constraint split X_k + D - Y = 0
  double balanced_rho_ = 0.0;
  const ConvexConstraint* constraint_ = nullptr;
  AdmmOptions options_;
  bool direct_ = false;
  bool fused_ = false;       // direct_ and the fused row pass applies (admm/row_kernel.h)
  Index max_degree_ = 0;     // largest number of split terms in one row (fused_)
  std::vector<double> inverse_blocks_;  // unless shared_: n blocks K_i^{-1} (r x r, row-major)
  // Shared Gram block (TermLinearization::shared_gram_block): P*P's row blocks are all
  // G_s = V diag(g) V^T, so block i of the Xt-step is V diag(rho g + s_i) V^T, s_i = 2 B_ii + rho_k.
  bool shared_ = false;
  std::uint64_t generation_ = 0;  // changes at every prepare(): P, and so P*(nu), changed
  int preconditioner_age_ = -1;   // see preconditioner_age()
  Matrix X_preconditioner_;       // the iterate at which the coupled step's preconditioner was built
  Matrix shared_vectors_;   // V (r x r)
  Vector shared_values_;    // g
  Matrix shared_inverse_;   // n x r: 1 / (rho g_c + s_i), 0 on a zero row
  // Row-scaled preconditioner (coupled Xt-step, CgPreconditioner::kRowScaled): block i replaced by
  // (rho t_i / r + s_i) I with t_i = tr (P*P)_ii; row_inverse_ holds 1 / that (0 on a zero row).
  bool row_scaled_ = false;
  Vector row_traces_, row_inverse_;
  // scratch
  Vector y_, tmp_;
  Matrix rhs_, work_, work2_, gram_;
};

}  // namespace sdprl
