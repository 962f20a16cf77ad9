// Internal (not installed): the Xt-step of the ADMM (admm/admm.h; formulas in mm/surrogate.h),
//
//   (2 B + rho P*P + rho_k I) D = rhs,
//
// solved one way per model and options: a strategy chosen once by make_xt_step() from the options
// and the terms' capabilities (as Ceres' LinearSolver::Create), which owns its factors and its
// warm start. The strategies:
//
//   kRowBlocks      exact: n independent r x r solves (P*P block diagonal by rows, B diagonal)
//   kSharedBlock    exact: the same when every row block is one r x r matrix (one eigensolve)
//   kFusedRows      exact, and the whole ADMM iteration runs as one pass per row (admm/row_kernel.h),
//                   fused with the MM rebuild where the terms offer a one-pass update
//   kDenseRows      exact, all n^2 entry terms (one shared block): the whole ADMM iteration runs as
//                   one pass over tiles of rows, with dense products (xt_step/dense_rows.h)
//   kCgBlocks       coupled: CG preconditioned by the inverted row blocks
//   kCgSharedBlock  coupled: CG preconditioned by the shared block
//   kCgRowScaled    coupled: CG preconditioned by each block's mean eigenvalue (n doubles)
//   kLinearizedBlocks, kLinearizedSharedBlock
//                   coupled, linearised: the ADMM's Xt-step minimises its augmented Lagrangian plus
//                   the proximal term (1/2)||D - D_t||^2_{M~ - M} with a block-diagonal M~ >= M:
//                   2B + k rho K + rho_k I for terms on at most k rows (K the row blocks of P*P),
//                   else lambda (2B + rho K + rho_k I) with lambda estimated by power iteration;
//                   one block solve per iteration instead of CG, and the same fixed points, those
//                   of the exact surrogate (docs/method.md section 3.4)
//   kDualCoordinate coupled, entry terms, diagonal B, no constraint: no linear system at all; each
//                   iteration is one sweep of exact coordinate ascent on the surrogate's dual and
//                   the primal point it gives (xt_step/dual_coordinate.h, docs/method.md section 3.9)
//
// and the constrained variant (constrained() true), which wraps one of them: the constraint
// split's penalty rho_k joins the matrix, and its factors are rebuilt at every MM step.
//
// The choice reads the terms' optional capabilities (TermLinearization::rows_decoupled,
// row_offsets, term_weights, shared_gram_block) in make_xt_step() only; the strategies' files
// (blocks.cc, fused_rows.cc) read the Gram blocks or traces they need. The rest of the ADMM reads
// term_weights() for its e-step threshold (admm.cc) and nothing else of them.
#pragma once

#include <memory>
#include <string>

#include "admm/admm_state.h"
#include "sdprl/export.h"
#include "sdprl/solver.h"
#include "sdprl/types.h"

namespace sdprl {
class Surrogate;
}

namespace sdprl::xt_step {

enum class Kind {
  kRowBlocks,
  kSharedBlock,
  kFusedRows,
  kDenseRows,
  kCgBlocks,
  kCgSharedBlock,
  kCgRowScaled,
  kLinearizedBlocks,
  kLinearizedSharedBlock,
  kDualCoordinate
};
SDPRL_API const char* to_string(Kind kind);

// One way of solving the Xt-step, with its factors.
class SDPRL_API XtStep {
 public:
  XtStep(const Surrogate& surrogate, const AdmmOptions& options) : s_(surrogate), options_(options) {}
  virtual ~XtStep() = default;
  XtStep(const XtStep&) = delete;
  XtStep& operator=(const XtStep&) = delete;

  virtual Kind kind() const = 0;
  // True for the constrained variant.
  virtual bool constrained() const { return false; }
  // "row-blocks", "constrained cg-blocks", ...
  std::string name() const;
  // True when solve() is exact (the n row blocks are the system); false: CG to a tolerance.
  bool exact() const {
    const Kind k = kind();
    return k == Kind::kRowBlocks || k == Kind::kSharedBlock || k == Kind::kFusedRows || k == Kind::kDenseRows;
  }

  // True for the linearised strategies: solve() then applies M~^{-1} (not the system's inverse),
  // and the ADMM adds proximal_term(D_t) to its right-hand side (Admm::step).
  bool linearized() const { return kind() == Kind::kLinearizedBlocks || kind() == Kind::kLinearizedSharedBlock; }
  // Linearised: k in the majorant M~ = 2B + k rho K + rho_k I when the terms are nonzero in at
  // most k rows (TermLinearization::rows_per_term()), else lambda in M~ = lambda (2B + rho K + rho_k I)
  // (0 for the other strategies).
  virtual double majorant_scale() const { return 0.0; }
  // Linearised: out = (M~ - 2B - rho_k I) D, the part of the proximal correction (M~ - M) D that the
  // ADMM does not carry in its adjoints (its -rho P*P D is in P*(nu + rho (b - e + P D))).
  virtual void proximal_term(const Matrix& D, Matrix& out) const;

  // Per MM step, after Surrogate::update(): factors the matrix at penalty `rho`. A CG
  // preconditioner is kept while it is younger than AdmmOptions::preconditioner_refresh MM steps,
  // unless `rebuild_preconditioner`.
  virtual void prepare(double rho, bool rebuild_preconditioner) = 0;
  // The same surrogate at another rho: refactors.
  virtual void set_rho(double rho) = 0;
  // D = the solution (exact), or CG from D to a tolerance that follows eps (the ADMM's eps_k);
  // adds CG's iterations to *cg_iterations.
  virtual void solve(const Matrix& rhs, Matrix& D, double eps, long* cg_iterations) = 0;
  // out = P*P D from the factored Gram blocks (exact strategies only).
  virtual void apply_gram(const Matrix& D, Matrix& out) const;

  // The whole ADMM iteration in one pass over the rows (kFusedRows: packs the state at rho;
  // kDenseRows: tiles of rows), updating the state and setting D, step, primal, dual and gap;
  // eps is the ADMM's tolerance (the dense pass's products are single precision while it is
  // loose). False when the strategy has no such pass.
  virtual bool iterate_rows(AdmmState& state, double rho, double eps);
  // True when rebuild_and_iterate() may apply.
  virtual bool fuses_rebuild() const { return false; }
  // surrogate.update(Xk) fused with the factoring and the state's first iteration, row by row as
  // the rebuild finishes them (Admm::update_and_iterate). False when the terms have no one-pass
  // rebuild (then only the surrogate was updated: prepare() as usual).
  virtual bool rebuild_and_iterate(Surrogate& surrogate, const Matrix& Xk, AdmmState& state, double rho);

  // The constraint split's penalty rho_k in the matrix (0 but for the constrained variant).
  double split_penalty() const { return shift_; }
  // tr(2B) / tr(P*P) at the last factoring that rebuilt the blocks (0 when P*P = 0).
  double balanced_rho() const { return balanced_rho_; }
  // MM steps since the CG preconditioner was built (0: at the last prepare()); -1 for an exact
  // strategy or before the first prepare().
  virtual int preconditioner_age() const { return -1; }
  virtual void set_preconditioner_age(int) {}

  // The warm start the strategy carries across MM steps beyond the ADMM state (CG: the last Xt
  // in `D`, the iterate at which its preconditioner was built and its age), as opaque bytes for a
  // checkpoint; empty when it carries none.
  virtual std::string save(const Matrix& D) const { return {}; }
  // Gives saved bytes back after surrogate.update(X_k) at the resumed X_k: sets D, rebuilds a
  // kept preconditioner at its saved iterate (surrogate.update() there and back) at penalty rho.
  // Throws Error when the bytes do not fit this strategy and problem.
  virtual void restore(const std::string& saved, Surrogate& surrogate, double rho, Matrix& D);

  // For the constrained variant: the penalty rho_k that joins the matrix at the next factoring.
  void set_split_penalty(double rho_k) { shift_ = rho_k; }

 protected:
  double balanced(double gram_trace) const;

  const Surrogate& s_;
  const AdmmOptions options_;
  double shift_ = 0.0;
  double balanced_rho_ = 0.0;
};

// The fast paths the factory may take, all on by default. Not user options: they change no iterate
// beyond rounding (tests/row_kernel_test.cc), so only tests and benchmarks turn one off, to compare
// it with the generic path.
struct Paths {
  // Row-split with a diagonal B: each ADMM iteration as one fused pass over the rows
  // (admm/row_kernel.h, docs/method.md section 3.3).
  bool fused = true;
  // With the fused pass: each MM step's surrogate rebuild runs the next ADMM's first iteration in
  // the same pass over the rows (Admm::update_and_iterate).
  bool fused_rebuild = true;
};

// The strategy for the surrogate's terms, B and the options (call after a Surrogate::update():
// whether B is diagonal is known then). `constrained`: the model has a constraint split.
SDPRL_API std::unique_ptr<XtStep> make_xt_step(const Surrogate& surrogate, const AdmmOptions& options,
                                               bool constrained, const Paths& paths = {});

// The CG strategies' warm start in their save() bytes (tests read and alter it).
struct CgWarmStart {
  Matrix D;                 // the last Xt (CG's start)
  Matrix X_preconditioner;  // the iterate at which CG's preconditioner was built
  int preconditioner_age = -1;
};
SDPRL_API std::string encode(const CgWarmStart& warm);
// False when `bytes` are not one.
SDPRL_API bool decode(const std::string& bytes, CgWarmStart* warm);

}  // namespace sdprl::xt_step
