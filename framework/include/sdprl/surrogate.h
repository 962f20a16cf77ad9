// One MM step, written out: the convex surrogate H of F at X_k (algorithm.md section 2; paper
// Prop. 2 and Prop. 5 with the weighted B) and the ADMM that minimises it (section 3; paper Alg. 1
// and 3, with the nu-step of eq. (admmnu) and the e-step threshold 2/rho).
//
//   H(D) = <D, B D> + <D, G> + 2 sum_h |<D, P_h> + b_h| + c
//   B    = C + (lambda I + gamma A_+)/2,   C = sum_tau w_tau |sym Q_tau|
//          (row-split: A_+ replaced by a diagonal majorant when the regularizer offers one)
//   G    = gamma A X_k + lambda X_k
//   c    = sum_tau [phi(|r_tau|) - w_tau |r_tau|] + (gamma/2)<X_k, A X_k> + (lambda/2)||X_k||^2
//
// The ADMM splits e_h = <D, P_h> + b_h:
//   Xt-step: (2 B + rho P*P) D = -G - P*(nu + rho (b - e))
//   e-step:  e_h  = soft(<D, P_h> + b_h + nu_h / rho, 2 / rho)
//   nu-step: nu_h = nu_h + rho (<D, P_h> + b_h - e_h)             (so |nu_h| <= 2 always)
// and stops when the duality gap H(D) - D(nu) <= eps_k, with the dual (paper Prop. 3)
//   D(nu) = c + <nu, b> - (1/4) <M, B^{-1} M>,   M = G + P*(nu).
// A family may keep the loss weights outside P (ExternalWeights): the terms are
// then 2 w_h |<D, P_h> + b_h|, the e-step threshold is 2 w_h / rho, |nu_h| <= 2 w_h, and D(nu) is
// unchanged. Same H and same dual; only the ADMM's metric (and so P*P) differs.
#pragma once

#include <memory>

#include <Eigen/Cholesky>
#include <cstdint>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"
#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API Surrogate {
 public:
  Surrogate(const Model& model, const Loss& loss, const RegularizationWeights& weights,
            SplitMode split, Index rank);
  ~Surrogate();
  Surrogate(const Surrogate&) = delete;
  Surrogate& operator=(const Surrogate&) = delete;

  // Rebuilds H at the iterate X_k. With `rows`, hands every row to it as the linearisation
  // finishes it (OnePassUpdate::update_with_loss; G is already set then, B_ii is
  // b_diagonal_entry(i, C_ii)); returns true when it did, false when the family has no one-pass
  // rebuild (then `rows` was not called).
  bool update(const Matrix& Xk, RowConsumer* rows = nullptr);

  Index rows() const { return n_; }
  Index rank() const { return r_; }
  Index split_terms() const;
  const Matrix& center() const { return Xk_; }
  const TermLinearization& linearization() const { return *lin_; }
  const Matrix& G() const { return G_; }
  double c() const { return c_; }
  // F(X_k) = H(0).
  double center_objective() const { return f_center_; }
  // The size of F(X_k)'s parts, sum phi + |(gamma/2) <X, A X>| + (lambda/2) ||X||^2: F(X_k) itself
  // when A is PSD, but not cancelling to near 0 when A is not (sparse PCA's -Sigma).
  double objective_magnitude() const { return f_magnitude_; }

  // H(D); `PD` may pass P(D) when the caller has it (saves a pass over the terms).
  double value(const Matrix& D, const Vector* PD = nullptr) const;
  // D(nu) for |nu_h| <= 2; with a constraint, D(nu, mu) (see sdprl/constraint.h).
  double dual(const Vector& nu, const Matrix* mu = nullptr) const;
  // The same with P*(nu) given (the ADMM keeps it up to date without an adjoint per iteration).
  double dual_given_adjoint(const Vector& nu, const Matrix& Pnu, const Matrix* mu = nullptr) const;

  // True when B is diagonal (then B^{-1} is exact and cheap).
  bool b_is_diagonal() const { return b_diagonal_; }
  // diag(B) (length n).
  const Vector& b_diagonal() const { return b_diag_; }
  // B_ii from the curvature's C_ii: C_ii + lambda / 2 (+ gamma / 2 times diag(A_+) or its majorant).
  double b_diagonal_entry(Index i, double curvature) const;
  // out = B D.
  void apply_B(const Matrix& D, Matrix& out) const;
  // out = B^{-1} M (exact when B is diagonal, else CG to relative residual 1e-12).
  void solve_B(const Matrix& M, Matrix& out) const;
  // tau in B = tau C + ...: 1 is the majoriser; below 1 H majorises F only where the step is
  // checked (SolverOptions::curvature_scale). Takes effect at the next update().
  void set_curvature_scale(double tau) { tau_ = tau; }
  double curvature_scale() const { return tau_; }
  // True when the A-term contributes curvature (gamma > 0 and A_+ != 0).
  bool has_a_curvature() const { return a_curvature_; }
  const Model& model() const { return model_; }
  const RegularizationWeights& weights_used() const { return weights_; }

 private:
  const Model& model_;
  const Loss& loss_;
  RegularizationWeights weights_;
  Index n_, r_;
  std::unique_ptr<TermLinearization> lin_;
  Matrix Xk_, G_;
  Vector residuals_, abs_residuals_, w_, phi_;  // without a OnePassUpdate only
  Vector b_diag_;
  Vector a_diag_;             // diag(A_+), or its diagonal majorant when a_majorant_
  bool b_diagonal_ = true;
  bool a_curvature_ = false;
  bool a_majorant_ = false;   // row-split with a diagonal majorant of A_+ in B
  double c_ = 0.0, f_center_ = 0.0, f_magnitude_ = 0.0;
  double tau_ = 1.0;
};

// The ADMM state carried across MM steps (warm start, algorithm.md section 3).
struct AdmmState {
  Matrix D;    // Xt, n x r
  Matrix step; // the step the MM takes: D, or Y - X_k (feasible) under a constraint
  Matrix Y;    // constraint split: Y = X_k + D projected onto K
  Matrix mu;   // its multiplier (in the polar cone of K)
  Vector e;    // split variables
  Vector nu;   // multipliers, |nu| <= 2 (|nu_h| <= 2 w_h with ExternalWeights)
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
  // Shared Gram block (GramSummary::shared_gram_block): P*P's row blocks are all
  // G_s = V diag(g) V^T, so block i of the Xt-step is V diag(rho g + s_i) V^T, s_i = 2 B_ii + rho_k.
  bool shared_ = false;
  std::uint64_t generation_ = 0;  // changes at every prepare(): P, and so P*(nu), changed
  int preconditioner_age_ = -1;   // see preconditioner_age()
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
