// The SDP-RL solver (docs/method.md sections 2-3; paper Alg. 2 and 4): a majorisation-minimisation
// outer loop whose convex surrogate H is minimised inexactly by ADMM, stopped by the duality gap
// with the tolerance schedule eps_k = max(eps_min, c0 / k^b0).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"
#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/types.h"

namespace sdprl {

// The weights of the regularizers: F = sum phi(|r|) + (gamma/2)<X, A X> + (lambda/2)||X||^2.
struct RegularizationWeights {
  double lambda = 1.0;  // >= 0
  double gamma = 0.0;   // >= 0; ignored when the model has no A
};

enum class InitKind {
  kSpectral,  // top-r eigenvectors of sum_tau t_tau sym(Q_tau), scaled by a robust fit (default)
  kGaussian,  // X_ij ~ N(0, init_scale^2)
  kGiven,     // the X passed to solve()
  kModel,     // the application's own start (Model::start), e.g. PCA for sparse PCA
};
SDPRL_API const char* to_string(InitKind kind);
SDPRL_API bool from_string(const std::string& text, InitKind* kind);
SDPRL_API bool from_string(const std::string& text, SplitMode* mode);

// Which algorithm minimises F.
enum class SolverType {
  kAuto,   // MM for losses that meet its contract; L-BFGS for smooth losses (phi'(0) = 0)
  kMm,     // majorisation-minimisation with ADMM (the paper's SDP-RL)
  kLbfgs,  // L-BFGS on the factored objective (needs phi'(0) = 0: e.g. the square loss)
  kSpheres,  // an SDP whose constraints fix one diagonal entry per row: rows on spheres, no penalty
             // (docs/method.md section 9.1; sdpa models, chosen by kAuto where it applies)
  kAugmentedLagrangian,  // an SDP given by constraints: an augmented Lagrangian on the factor, L-BFGS
                         // inner solves (docs/method.md section 9.2; sdpa models, tried first by kAuto)
  kInteriorPoint,  // a small SDP given by constraints: a primal-dual interior-point method on Z
                   // (docs/method.md section 9.3; sdpa models whose blocks fit densely)
};
SDPRL_API const char* to_string(SolverType type);
SDPRL_API bool from_string(const std::string& text, SolverType* type);

// CG's preconditioner for the coupled Xt-step (AdmmOptions::preconditioner).
enum class CgPreconditioner {
  kAuto,       // kBlocks while the n inverted r x r blocks fit in kBlockPreconditionerBytes, else kRowScaled
  kBlocks,     // the inverted row blocks K_i = rho (P*P)_ii + (2 B_ii + rho_k) I: n r^2 doubles
  kRowScaled,  // K_i replaced by its mean eigenvalue, (rho tr (P*P)_ii / r + 2 B_ii + rho_k) I: n doubles
};
SDPRL_API const char* to_string(CgPreconditioner p);
SDPRL_API bool from_string(const std::string& text, CgPreconditioner* p);
// How the coupled Xt-step meets the exact surrogate (AdmmOptions::coupled_step; docs/method.md
// section 3.4).
enum class CoupledStep {
  kAuto,        // kLinearized in coupled runs without the rank staircase where B is diagonal and the
                // blocks fit in kBlockPreconditionerBytes (or are one shared block), else kCg
  kCg,          // each ADMM iteration solves (2B + rho P*P + rho_k I) D = rhs by preconditioned CG
  kLinearized,  // each ADMM iteration solves the row blocks of a majorant of that matrix, with the
                // proximal correction that keeps the exact surrogate's fixed points (where it applies)
  kDualCoordinate,  // no ADMM: exact coordinate ascent on the surrogate's dual, one sweep over the
                    // terms per iteration (entry terms, B diagonal, no constraint; else as kAuto)
};
SDPRL_API const char* to_string(CoupledStep step);
SDPRL_API bool from_string(const std::string& text, CoupledStep* step);
// kAuto's budget for the blocks. CG multiplies by every block at each of its iterations, so once
// they outgrow the caches CG waits on memory: on the 2-core EPYC of docs/performance.md (1 MB L2
// per core, 32 MB L3), l1 completion with rank = sdpa's rank, 200 MM steps, blocks against
// row-scaled: n = 100, r = 60 (2.9 MB) 3.32 against 3.43 s; n = 200, r = 90 (13 MB) 2.94 against
// 2.60 s; n = 300, r = 112 (30 MB) 7.16 against 4.38 s (16 against 21 CG iterations per MM step).
inline constexpr double kBlockPreconditionerBytes = 8e6;

struct AdmmOptions {
  int max_iterations = 1000;      // per MM step (docs/method.md: 1000)
  double rho = 0.0;               // penalty; 0 = automatic: max(rho_scale / phi'(0), tr(2B)/tr(P*P) at the first MM step),
                                  // then balanced in long runs on the exact surrogate (adaptive_rho)
  double rho_scale = 10.0;        // the automatic rule's numerator (docs/method.md section 3)
  double b0 = 1.5;                // eps_k = max(min_tolerance, c0 / k^b0)
  double c0 = 0.0;                // 0 = automatic: the size of F's parts at the start (docs/method.md section 7)
  double min_tolerance = 1e-8;    // eps_min
  SplitMode split = SplitMode::kAuto;  // the Xt-step variant (docs/method.md sections 3 and 7.2)
  double cg_tolerance = 1e-3;     // coupled Xt-step: CG stops at ||res|| <= cg_tolerance * min(1, eps_k) * ||rhs||
  int cg_max_iterations = 200;    // coupled Xt-step: CG iteration cap per ADMM iteration
  // Coupled Xt-step: CG's block preconditioner (the row blocks of 2B + rho P*P, inverted) is
  // rebuilt at every this many-th MM step and reused in between. It changes with X_k, but any
  // SPD preconditioner leaves CG's answer (to its tolerance) as it is; rebuilding it took 40% of
  // an MM step at n = 100, rank 60 with no fewer CG iterations for it (docs/performance.md).
  // 1 = rebuild at every MM step.
  int preconditioner_refresh = 16;
  CgPreconditioner preconditioner = CgPreconditioner::kAuto;
  CoupledStep coupled_step = CoupledStep::kAuto;
  double rho_constraint = 0.0;    // penalty of the constraint split (X >= 0); 0 = mean diag of 2B
  // Anderson acceleration of an ADMM run that passes 10 iterations: the number of past iterates it
  // extrapolates from (docs/method.md section 3.7). 0 = off.
  int anderson_memory = 10;
  // Residual balancing of an automatic rho (rho = 0) in ADMM runs on the exact surrogate that pass
  // 20 iterations, as OSQP adapts its rho (docs/method.md section 3.8; not on the row-split
  // surrogate; under a constraint rho_constraint keeps its rule); the rho reached is kept for the
  // next MM steps.
  bool adaptive_rho = true;
  // Dual coordinate step: CG iterations of the subspace step on the free multipliers after each
  // sweep but an MM step's first (docs/method.md section 3.9). 0 = plain coordinate ascent.
  int subspace_iterations = 10;
  // xt_step = "coupled" on the dual coordinate step, once its steps are first small: an MM step's
  // sweeps go on until the gap is also at most this times what the step has gained,
  // F(X_k) - H(Xt), so that each step gains at least 1 / (1 + ratio) of all its surrogate can, and
  // the run ends when its steps are small again, which bounds the distance from a fixed point
  // (docs/method.md section 3.9). 0 = off: the run ends at its first small steps.
  double decrease_ratio = 2.0;
};

// SolverOptions::rank = kAutoRank (`solver.rank = "auto"`): for a convex model (a linear loss, no
// constraint) the run starts at rank 2 (or init_file's) and climbs the rank staircase until
// certified, up to max_rank or, without one, the Barvinok-Pataki bound r (r + 1) / 2 <= m (some
// optimum has a rank within it); otherwise the model's default rank (docs/method.md section 7.4).
constexpr Index kAutoRank = -1;

struct SolverOptions {
  SolverType type = SolverType::kAuto;
  Index rank = 0;                    // r; 0 = the model's default rank; kAutoRank: automatic
  // The rank staircase (docs/method.md section 7.4): when a run on the exact surrogate converges
  // and its certificate finds lambda_min(S(y)) < 0, the eigenvectors of S's negative eigenvalues
  // become new columns of X, each with the step that minimises F's convex surrogate along it, and
  // the run goes on, up to this many columns. 0 (or <= rank): the rank stays fixed.
  Index max_rank = 0;
  int max_mm_iterations = 2000;      // outer iteration cap
  double relative_tolerance = 1e-5;  // stop when |F_k - F_{k+1}| / |F_k| < this ...
  int consecutive = 3;               // ... on this many consecutive MM steps
  // With admm.split = kExactFinish, the steps on the exact surrogate H stop only when, besides, the ADMM's
  // dual proves min H >= F(X_k) - this * (size of F's parts): no exact MM step from X_k can lower
  // the surrogate by more (Summary::stationarity). 0: small steps alone.
  double stationarity_tolerance = 1e-6;
  // At the end of a row-split run, bracket its result's distance from a fixed point of the exact
  // surrogate (Summary::stationarity and stationarity_lower; docs/method.md section 7.2), where the
  // dual coordinate or linearised step applies; Summary::message says when it is proved above
  // stationarity_tolerance.
  bool measure_stationarity = false;
  // Models whose terms are constraints (Model::infeasibility, e.g. sdpa): `sdprl run` accepts a
  // result only when its relative violation is at most this; otherwise it lowers gamma tenfold and
  // solves again from that result, up to four times (docs/method.md section 9). Also the bound on
  // the relative gap and dual infeasibility of summary.json's `constrained.optimal`.
  double feasibility_tolerance = 1e-6;
  int min_mm_iterations = 5;         // and never before this many MM steps (docs/method.md section 2)
  // tau in B = tau C + (lambda I + gamma A_+)/2 (docs/method.md section 2.1): the share of the loss terms'
  // curvature bound C that each MM step's surrogate keeps. 1 is the paper's majoriser, H >= F
  // everywhere. Below 1, H majorises F only where it is checked: an MM step is accepted when
  // F(X_k + Xt) <= H(Xt), and a refused one is taken again from X_k with tau doubled (at 1 every
  // step passes), so F still descends as docs/method.md section 2 argues (Summary::rejected_steps).
  // C bounds |<Q, Xt Xt^T>| by squared row norms of Xt, which is loose when many terms share a
  // row: on the l1 problem at n = 300, rank 112 (tools/bench/sdpa_compare) 0.1 reaches 1e-4 of
  // the optimum in 376 MM steps instead of 1768 and no step is refused; on the rank-5 quickstart it
  // takes 202 MM steps instead of 169 (docs/performance.md). 0, the default: automatic, from 1; on
  // the exact surrogate of a model without a constraint (and without the rank staircase), halved
  // on trial when a step measures that a quarter of it would have passed and the last two steps
  // lowered F, and the halving undone unless the next step gains as much per ADMM iteration as
  // the last one did (section 2.1).
  double curvature_scale = 0.0;
  // Over-relaxed steps on the exact surrogate (docs/method.md section 7.5): after an accepted MM
  // step X_k -> X_k + Xt, F is tried at X_k + (1 + s) Xt for s = 1, 2, 4, ..., 64 and the lowest
  // value kept while F keeps falling (Summary::overrelaxed_steps). MM's fixed points are those
  // of the plain MM map, and F still descends at every step.
  bool overrelax = true;
  // The active-set polish of a convex (l1, no constraint) result that its certificate leaves short
  // of optimal (docs/method.md section 7.6; Summary::polish): Newton's method on the KKT
  // conditions of the terms the result fits exactly, kept when F and the certified gap fall.
  bool polish = true;
  double time_limit = 0.0;           // seconds; 0 = none
  InitKind init = InitKind::kSpectral;
  double init_scale = 1.0;           // standard deviation of the Gaussian start
  // First solve the l1 problem (convex in Z) from the start above and continue from its solution:
  // concave losses give small weight to residuals that are large at the start, so a poor start
  // can be kept as "outliers" for ever; the l1 solution fixes that. With the l1 loss itself this
  // is one restart of MM (fresh ADMM state and tolerance schedule), which lowered F by 1% on NPKL
  // a1a, where the first run had stalled: see docs/paper-results.md (NPKL).
  bool l1_warm_start = false;
  // A lambda grid (sdprl run): each lambda after the first starts from the previous lambda's result
  // in place of `init` (and its l1 warm start, if any, from there), as regularisation paths are
  // solved (glmnet). Read by the runner; solve() itself sees one lambda.
  bool lambda_path = false;
  std::uint64_t seed = 1;            // for the Gaussian start
  // Threads of the row loops (OpenMP); 0 = OpenMP's default (OMP_NUM_THREADS, else every core).
  // The result is bit-identical for any thread count (fixed chunks, partial sums added in order).
  // A thread that spins at a barrier while another process holds the core its partner needs stalls
  // every ADMM iteration: the program bounds the spin (GOMP_SPINCOUNT, tools/sdprl/main.cc), and a
  // library user on a shared machine sets GOMP_SPINCOUNT=3000 or OMP_WAIT_POLICY=passive.
  int threads = 0;
  bool verbose = true;               // print the iteration table on stderr
  int print_every = 1;               // print every k-th MM iteration (the first and last always)
  AdmmOptions admm;
  int lbfgs_memory = 10;             // L-BFGS: number of correction pairs kept
  // Set to true (e.g. by a signal handler) to stop after the current MM step with kInterrupted.
  const std::atomic<bool>* interrupt = nullptr;
  // Seconds between checkpoints (MM solver, when solve() is given a CheckpointCallback): one is
  // taken at the end of the first MM step that ends this long after the last one (or after the
  // start of the solve); 0 = no periodic checkpoints. A stop by `interrupt` always takes one, so
  // that an interrupted run can be resumed whatever this is. 60 s: a run shorter than that never
  // pays for one, and at most a minute of a long run is lost to a crash or SIGKILL.
  double checkpoint_interval = 60.0;

  // Ceres-style validation: false with a message naming the field, its value and the rule.
  // The rules are those of the model file's [solver] keys (docs/options.md).
  SDPRL_API bool is_valid(std::string* error) const;
};

enum class SolverStatus {
  kConverged,        // relative change below tolerance
  kIterationLimit,   // max_mm_iterations reached
  kTimeLimit,        // time_limit reached
  kNumericalError,   // NaN/Inf in the objective, or F rose by more than eps_k in an MM step
                     // whose ADMM met its tolerance; X holds the last good iterate
  kInterrupted,      // options.interrupt was set
  kUnbounded,        // F is unbounded below, proved along a ray c X_k (docs/method.md section 7.1);
                     // X holds the iterate that proves it
  kInfeasible,       // set by `sdprl run` for a model with Model::infeasibility: the result (X, the
                     // last penalty's) violates the model's constraints by more than
                     // SolverOptions::feasibility_tolerance
  kOptimal,          // set by `sdprl run` for a converged result that a certificate proves optimal:
                     // a model with Model::infeasibility whose constrained answer is (relative gap,
                     // primal and dual infeasibility <= feasibility_tolerance; docs/method.md
                     // section 9), any other whose certificate of F itself is (section 7.3)
};
SDPRL_API const char* to_string(SolverStatus status);

// One row of the trace: one MM iteration.
struct TraceRow {
  int mm_iteration = 0;
  double objective = 0.0;        // F(X_k) after the step
  double relative_change = 0.0;  // |F_{k-1} - F_k| / |F_{k-1}|
  int admm_iterations = 0;
  double gap = 0.0;              // duality gap at the end of the ADMM
  double tolerance = 0.0;        // eps_k
  double time = 0.0;             // seconds since the start of the solve
  // The MM solver's step parameters (NaN for L-BFGS): tau of the step's surrogate
  // (SolverOptions::curvature_scale, as refused steps have raised it) and the ADMM's rho (the
  // automatic one after its scale rule and the switch to the exact surrogate).
  double curvature_scale = std::numeric_limits<double>::quiet_NaN();
  double rho = std::numeric_limits<double>::quiet_NaN();
};

// A lower bound on the convex SDP behind the model and the gap it certifies for the result
// (docs/method.md section 7.3): the run's X X^T is within `gap` of the SDP's optimum. For a
// non-convex loss the numbers are those of the final convex surrogate, the weighted l1 problem with
// the weights phi'(|r_tau|) at X (`surrogate` true). Not computed (computed false, `note` says why)
// under a constraint X in K, for the L-BFGS path, or when the eigensolver does not converge.
struct Certificate {
  bool computed = false;
  bool surrogate = false;      // of the weighted-l1 surrogate, not of F itself
  double value = 0.0;          // f(X X^T): F(X), or the surrogate's value at X
  double lower_bound = -std::numeric_limits<double>::infinity();
  double gap = std::numeric_limits<double>::infinity();           // value - lower_bound
  double relative_gap = std::numeric_limits<double>::infinity();  // gap / |value|
  double lambda_min = 0.0;     // lambda_min(S(y))
  double trace_bound = 0.0;    // R: tr Z <= R at every Z as good as X X^T (used when lambda_min < 0)
  // -<y, t>: the Lagrange dual function at the multipliers y, a lower bound on the SDP's minimum
  // when lambda_min >= 0 (lower_bound adds R lambda_min when it is not).
  double dual_value = -std::numeric_limits<double>::infinity();
  bool optimal = false;        // relative_gap <= SolverOptions::stationarity_tolerance
  std::string note = "computed at the end of an MM run with a result";  // why not, or what limits the bound
  double seconds = 0.0;        // its wall time (multipliers, eigensolve, bound; not the polish)
  // "certified optimal (gap ...)" or "not certified: ...", for the final line.
  SDPRL_API std::string brief() const;
};

// The active-set polish of a result of the convex (l1) problem (docs/method.md section 7.6):
// Newton's method on the KKT conditions of the terms the result fits exactly, kept when it lowers
// F and the certified gap.
struct PolishReport {
  bool tried = false;  // a linear loss, a certificate computed but not optimal, its relative gap <= 0.1
                       // (any gap where the certificate has no bound: the sdpa models)
  bool kept = false;   // its point replaced the MM result
  int rounds = 0;        // guesses of the fitted set solved
  int newton_steps = 0;  // over all rounds
  long products = 0;     // products with the KKT matrix (MINRES iterations), within a budget
                         // (a direct solve counted by its flops)
  int attempts = 0;      // polishes run: MM's early ones (direct solves only, docs/method.md
                         // section 7.6) and the end's; the figures here are the last one's
  int factorizations = 0;  // of the KKT system, for Newton steps solved directly (pair terms, small n and |E|)
  int single_factorizations = 0;  // of those, in single precision (far from the KKT point)
  Index fitted = 0;      // terms fitted exactly at its point
  // The last guess's KKT point: solved (its residual within 1e-8 of F's scale), and how many terms
  // it leaves with a multiplier on or outside the box |y| = w (not fitted, or fitted at a price above
  // w). For a model whose terms are all constraints (the sdpa models) boxed > 0 at a solved point
  // says the l1 penalty is not exact at this gamma: the penalty path lowers it (docs/method.md
  // section 9).
  bool kkt_solved = false;
  Index boxed = 0;
  double objective_before = std::numeric_limits<double>::quiet_NaN();  // F of the MM result
  std::string note;      // why not tried or not kept
};

// One step of the rank staircase (SolverOptions::max_rank).
struct RankRaise {
  int mm_iteration = 0;     // the converged MM step after which the columns were added
  Index from = 0, to = 0;   // the rank before and after
  double lambda_min = 0.0;  // lambda_min(S(y)) at the converged point
  double objective_before = 0.0;  // F at the converged point
  double objective = 0.0;         // F after the new columns
};

struct Summary {
  SolverStatus status = SolverStatus::kNumericalError;  // pessimistic until set (Ceres)
  std::string message;
  Index n = 0, rank = 0, terms = 0, split_terms = 0;
  double rho = 0.0;
  RegularizationWeights weights;
  SolverType solver = SolverType::kMm;  // the algorithm that ran
  int warm_start_iterations = 0;        // MM iterations of the l1 warm start (l1_warm_start)
  int mm_iterations = 0;                // MM iterations (L-BFGS: its iterations)
  long admm_iterations = 0;
  long cg_iterations = 0;               // CG iterations of the coupled Xt-step (0 for the direct one)
  int monotonicity_violations = 0;  // steps with F_{k+1} > F_k + eps_k (docs/method.md check 3); see solve()
  int rejected_steps = 0;           // MM steps refused and taken again (SolverOptions::curvature_scale)
  int undone_tau_trials = 0;        // halvings of the automatic tau tried and undone (TauTrial)
  int overrelaxed_steps = 0;        // MM steps lengthened by SolverOptions::overrelax
  double curvature_scale = 1.0;     // tau at the end (raised from the option's by refused steps)
  // How far the result X is from a fixed point of MM on the exact surrogate H of Prop. 2 (so from
  // a stationary point of F): an upper bound on (F(X) - min H) / (size of F's parts), from the
  // ADMM's dual; 0 exactly at a fixed point (docs/method.md section 7.2). Proved by a run with
  // admm.split = kExactFinish that converged; the last step's bound at the end of a kAuto run on the
  // exact surrogate (it ends at that step's X_k); measured once at the end of a row-split run with
  // SolverOptions::measure_stationarity (where the exact surrogate's linearised step applies);
  // NaN where not measured.
  double stationarity = std::numeric_limits<double>::quiet_NaN();
  // A lower bound on the same quantity, F(X) - H(D) for the ADMM's D: stationarity_lower > 0
  // proves that one exact MM step from X lowers F by at least that much.
  double stationarity_lower = std::numeric_limits<double>::quiet_NaN();
  int finishing_step = 0;  // admm.split kAuto, kExactFinish: the first MM step on the exact surrogate (0: none)
  Certificate certificate;  // at the end of an MM run (docs/method.md section 7.3)
  std::vector<RankRaise> rank_raises;  // the rank staircase's steps; `rank` is the final rank
  PolishReport polish;  // at the end of an MM run with a linear loss
  double initial_objective = 0.0;
  double final_objective = 0.0;
  double init_time = 0.0;    // seconds spent in the initialisation
  double solve_time = 0.0;   // seconds in the MM loop
  std::vector<TraceRow> trace;
  std::vector<Metric> metrics;  // the model's metrics at the final X

  // False when the run has no result: a numerical failure or an unbounded model.
  bool usable() const { return status != SolverStatus::kNumericalError && status != SolverStatus::kUnbounded; }
  SDPRL_API std::string brief_report() const;
};

// F(X) = sum_tau phi(|<X, Q_tau X> - t_tau|) + (gamma/2)<X, A X> + (lambda/2)||X||^2.
SDPRL_API double objective(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                           const Matrix& X);

// Why MM could not leave the starting factor X (a zero column; a zero row that the model's terms
// use), or "" when it can. initialize() refuses such a given start.
SDPRL_API std::string starting_factor_problem(const Model& model, const Matrix& X);

// The starting point of options.init (kGiven: X unchanged). Throws Error if X has the wrong shape
// or is a start MM cannot leave (starting_factor_problem).
SDPRL_API void initialize(const Model& model, const SolverOptions& options, Index rank, Matrix& X);

// The algorithm that will minimise F with this loss: `requested` unless it is kAuto, which picks
// L-BFGS for a loss differentiable at 0 (phi'(0) = 0, e.g. square) and MM otherwise.
SDPRL_API SolverType resolve_solver_type(const Loss& loss, SolverType requested);

// Sets the number of threads of the row loops (OpenMP; 0 = OpenMP's default) for this process and
// returns the number the next parallel loop will use (1 when built without OpenMP). solve() calls
// it with SolverOptions::threads.
SDPRL_API int set_threads(int threads);

// The automatic rho of AdmmOptions.
SDPRL_API double automatic_rho(const Loss& loss, const AdmmOptions& options);

// Called after every MM step with the current row and iterate; return false to stop (kInterrupted).
using IterationCallback = std::function<bool(const TraceRow& row, const Matrix& X)>;

// The automatic curvature scale's trial of a halved tau (SolverOptions::curvature_scale = 0;
// docs/method.md section 2.1), as it stands between two MM steps.
struct TauTrial {
  // -e < 0: the next step is a trial's first, taken unjudged; e > 0: its second, kept when it gains
  // e per ADMM iteration (e: the gain per ADMM iteration of the last step before the halving).
  double reference = 0.0;
  int not_before = 0;      // no trial before this MM step (after the last undone one)
};

// The complete state of the MM loop at the end of an MM step. solve() started from it continues
// bit for bit as the run that produced it would have (same model, loss, weights and options):
// everything the next step reads is here, and the rest (the surrogate, the ADMM's factors) is
// rebuilt from X. Written by `sdprl run` into checkpoints (sdprl run --resume).
struct SolverState {
  int k = 0;                // MM steps done; the next one is k + 1
  Matrix X;                 // X_k
  double objective = 0.0;   // F(X_k)
  double c0 = 0.0;          // numerator of the tolerance schedule eps_k = max(eps_min, c0 / k^b0)
  double rho = 0.0;         // the ADMM penalty (the automatic one as balanced so far, AdmmOptions::adaptive_rho)
  int small_steps = 0;      // consecutive MM steps with a relative change below the tolerance
  double curvature_scale = 1.0;  // the surrogate's tau (SolverOptions::curvature_scale, as raised)
  bool tight = false;       // steps solved to the proof's tolerance (kExactFinish) or relative to their gain
  TauTrial tau_trial;       // the automatic tau's pending trial and its record
  // The ADMM warm start.
  Vector nu, e;             // multipliers and split variables of the terms
  Vector u;                 // or both packed at `rho`, u = nu + rho e (nu and e empty then)
  Matrix Y, mu;             // constraint split Y = X_k + Xt in K and its multiplier (else empty)
  // The Xt-step's own warm start (empty for the direct Xt-step), in a format private to the
  // solver: kept and given back unchanged, so that a resumed run is bit for bit the uninterrupted one.
  std::string xt_step_state;
  Summary summary;          // counters, trace and times so far (status and message unused)
};

// Receives the state at a checkpoint (see SolverOptions::checkpoint_interval). It may throw
// (e.g. sdprl::Error when the checkpoint cannot be written); solve() lets the exception through.
using CheckpointCallback = std::function<void(const SolverState& state)>;

// Minimises F from the starting point of options.init; X is the result (n x r).
//
// Numerical faults stop the MM solver with kNumericalError and X = the last good iterate (the
// message names the MM iteration): a NaN/Inf objective or iterate, and a rise of F by more than
// the step's tolerance eps_k (plus 1e-12 |F| of rounding) in an MM step whose ADMM met that
// tolerance: then H(Xt) <= F(X_k) + eps_k and F <= H, so such a rise means a broken majoriser,
// loss or terms. A step whose ADMM stopped at admm.max_iterations with gap > eps_k guarantees
// only F_{k+1} <= F_k + gap; a rise beyond eps_k but within gap there is counted in
// Summary::monotonicity_violations and the run goes on; beyond gap it is a fault as above. With
// options.curvature_scale < 1 a step is first checked against H itself (F(X_k + Xt) <= H(Xt));
// one that fails is refused and taken again (Summary::rejected_steps), never a fault.
//
// `start` (MM solver): continue from this state instead of options.init (the l1 warm start is
// not repeated); its X must be n x r. `checkpoint`: called with the state at the end of an MM
// step, every options.checkpoint_interval seconds and when `interrupt` stops the run (not during
// the l1 warm start, and not by the L-BFGS solver).
SDPRL_API Summary solve(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                        const SolverOptions& options, Matrix& X,
                        const IterationCallback& callback = {}, const SolverState* start = nullptr,
                        const CheckpointCallback& checkpoint = {});

}  // namespace sdprl
