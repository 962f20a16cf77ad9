// The MM loop (mm/mm_loop.h): one MM step is prepare (the ADMM's warm start and rho), trial (the
// inexact ADMM solve of the surrogate and the rebuild at the trial point), judgement
// (mm/step_acceptance.h) and, once accepted, the stopping rules and the checkpoint.
#include "mm/mm_loop.h"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "admm/admm.h"
#include "mm/certificate.h"
#include "mm/polish.h"
#include "mm/checkpointer.h"
#include "sdprl/terms/all_entries_terms.h"
#include "sdprl/terms/distance_terms.h"
#include "sdprl/terms/entry_terms.h"
#include "mm/iteration_log.h"
#include "mm/loop_support.h"
#include "mm/step_acceptance.h"
#include "mm/surrogate.h"
#include "mm/unbounded.h"
#include "parallel/processes.h"
#include "rows/row_blocks.h"
#include "terms/dense_row_split.h"
#include "sdprl/error.h"

namespace sdprl::mm {
namespace {

// The largest relative certified gap that the active-set polish is tried at (polish_result()).
// The guess of the fitted terms comes from the run's multipliers, right near the optimum: on
// tests/sdpa_global_test's instances the default stops leave 7e-6 to 3e-2, and the polish certifies
// every one; an l1 completion at a rank below the optimum's leaves 20 (quickstart m = 500, rank 5),
// where it spent 56 s unbudgeted and found nothing.
constexpr double kPolishGap = 0.1;
// The relative change of F per MM step below which a stair of the rank staircase is settled
// (stair_due()), whatever tighter relative_tolerance the run has.
constexpr double kStairTolerance = 1e-5;
// MM steps at least between two stairs: a stair taken sooner finds the last one's directions
// again, before MM has grown its columns (rank 8 -> 25 in five stairs ten MM steps apart on
// tests/sdpa_global_test's rank-3 instance; with the wait, 3 -> 10 -> 13 -> 14, F certified).
// sdpa_compare's n = 100 (tight settings) climbs 2 -> 34 -> 54 -> 59 -> 62 by MM step 512 with
// 128 and ends certified at MM step 768, with 256 at 1280 and 2304 (the time is then the polish's
// factorisations); with 32 its rank swung between 75 and 91 for ten stairs. The quickstart's l1
// runs at m = 1000 and 2000 (rank 2 -> 5) end certified after 155 and 171 MM steps instead of 281
// and 300 (0.8x the time).
constexpr int kStairSteps = 128;
// The early finish's first attempt this many MM steps after the last stair (finish_due()): an
// attempt costs a factorisation or more, and those made sooner (128) failed more often.
constexpr int kFinishSteps = 256;
// The share of sum lambda_j^2 over S(y)'s negative eigenvalues that a stair's new columns hold.
constexpr double kStairEnergy = 0.99;
// X's singular values below this share of the largest are dropped at a stair.
constexpr double kStairTrim = 1e-3;
// The relative certified gap above which a stair is taken before its rank has settled
// (stair_due()): so far from the optimum a missing rank is no artefact of loose multipliers.
constexpr double kUnsettledGap = 1e-2;

// One MM step's trial point X_k + Xt and what the loop needs of it.
struct Trial {
  int inner = 0;                 // ADMM iterations
  double gap = 0.0;              // this step's ADMM gap (a fused rebuild moves the state on)
  double surrogate_value = 0.0;  // H(Xt) (at the feasible Y under a constraint)
  double f_next = 0.0;           // F(X_k + Xt)
  double f_before = 0.0;         // F(X_k)
  double dual = 0.0;             // the ADMM's dual bound: min H >= dual (docs/method.md section 7.2)
  double magnitude = 0.0;        // the size of F(X_k)'s parts
  double curvature = 0.0;        // <Xt, C Xt> at X_k (automatic tau only)
  bool checkpoint_due = false;
};

class MmLoop {
 public:
  MmLoop(const Model& model, const Loss& loss, const RegularizationWeights& weights, const SolverOptions& options,
         Matrix& X, const IterationCallback& callback, const CheckpointCallback& checkpoint, Summary summary,
         const SolverState* start, const xt_step::Paths& paths)
      : model_(model), loss_(loss), weights_(weights), options_(options), X_(X), callback_(callback), start_(start),
        summary_(std::move(summary)), t_solve_(Clock::now()), paths_(paths), log_(options, loss) {
    resolve_split();
    // kExactFinish starts row-split, unless a saved state was already finishing on the exact
    // surrogate, or the exact surrogate's dual coordinate step applies (exact_start_applies()).
    const bool resumed_finishing = start && start->summary.finishing_step > 0;
    const bool exact_start = split_ == SplitMode::kExactFinish && !start && exact_start_applies();
    const SplitMode first =
        split_ == SplitMode::kCoupled || resumed_finishing || exact_start ? SplitMode::kCoupled : SplitMode::kRowSplit;
    if (exact_start || (bracketed_end_ && !start)) summary_.finishing_step = 1;
    surrogate_.emplace(model, loss, weights, first, summary_.rank, diagonal_b_);
    state_.keep_packed = true;  // the fused row pass's packed (nu, e) stays packed between MM steps
    summary_.split_terms = surrogate_->split_terms();
    if (begin()) {
      // The exact surrogate from the start: coupled, or a family whose terms do not split by rows
      // (its row-split linearisation couples rows, or has as many split terms as terms: each term
      // on one row, e.g. diagonal entries or single-entry rank-one terms, known once the surrogate
      // is built). Not all-entries terms: they merge the halves of (i, j) and (j, i) into as many
      // split terms as terms, yet their row-split surrogate is not the exact one.
      const TermLinearization& lin = surrogate_->linearization();
      exact_ = first == SplitMode::kCoupled || !lin.rows_decoupled() ||
               (surrogate_->split_terms() == model.terms->size() && dynamic_cast<const DenseRowSplit*>(&lin) == nullptr);
      admm_.emplace(*surrogate_, summary_.rho, admm_options(), paths);
      if (start) admm_->restore_warm_start(start->xt_step_state, *surrogate_, state_);
      if (options.admm.rho > 0.0 || start) log_.header(summary_);
      checkpointer_.emplace(checkpoint, options, t_solve_, loop_.time_before);
    }
  }

  Summary run() {
    if (!admm_) return summary_;
    summary_.status = SolverStatus::kIterationLimit;
    for (int k = loop_.first_step; k <= options_.max_mm_iterations; ++k) {
      double eps = loop_.c0 / std::pow(static_cast<double>(k), options_.admm.b0);
      // Near stationarity the bound F(X_k) - dual needs the ADMM's gap below the tolerance too.
      // (A coupled run's tight flag asks for the relative rule instead: relative_stop().)
      if (loop_.tight && split_ == SplitMode::kExactFinish)
        eps = std::min(eps, 0.5 * options_.stationarity_tolerance * surrogate_->objective_magnitude());
      eps = std::max(options_.admm.min_tolerance, eps);
      if (!primed_ && !skip_prepare_) prepare(k);
      skip_prepare_ = false;
      const Trial trial = try_step(k, eps);
      TraceRow row;
      row.mm_iteration = k;
      row.objective = trial.f_next;
      row.relative_change = relative_change(loop_.f, trial.f_next);
      row.admm_iterations = trial.inner;
      row.gap = trial.gap;
      row.tolerance = eps;
      row.time = loop_.time_before + seconds_since(t_solve_);
      row.curvature_scale = surrogate_->curvature_scale();  // judge() raises it on a refusal
      row.rho = admm_->rho();
      const Next next = judge(k, trial, eps);
      if (next == Next::kRetry) {
        --k;  // the same step again, with the same eps_k
        continue;
      }
      if (next == Next::kStop || accept_and_stop(k, row, trial)) {
        if (summary_.status == SolverStatus::kConverged && stair_must_wait(k)) {
          // Settled within kStairSteps of the last stair: the new columns have not grown yet, and a
          // stair now finds the same directions again (rank 8 -> 25 in five stairs ten MM steps
          // apart on tests/sdpa_global_test's rank-3 instance). MM goes on from X_k.
          summary_.status = SolverStatus::kIterationLimit;
          loop_.small_steps = 0;
          primed_ = false;
          continue;
        }
        if (summary_.status == SolverStatus::kConverged && raise_rank(k)) continue;  // the staircase
        break;
      }
      // F < 0 is where a model can be unbounded (F(0) = sum phi(|t|) >= 0): checked at k = 1, 2, 4,
      // ... and every 32nd step, an objective evaluation each (under 3% of a run's work).
      if (loop_.f < 0.0 && ((k & (k - 1)) == 0 || k % 32 == 0) && proves_unbounded()) break;
      // Here the step's state is complete (small_steps included) and the loop goes on: a
      // checkpoint taken now continues with step k + 1 exactly as this run does.
      if (trial.checkpoint_due) checkpointer_->take(k, X_, loop_, *surrogate_, *admm_, state_, summary_);
    }
    // A run that ends with a result is checked once more: at its last iterate, and along the
    // direction in which the A-term falls fastest (a saddle point's own ray may prove nothing).
    if (summary_.status == SolverStatus::kConverged || summary_.status == SolverStatus::kIterationLimit ||
        summary_.status == SolverStatus::kTimeLimit) {
      proves_unbounded() || proves_unbounded(lowest_a_ray_slope(model_, loss_, surrogate_->weights_used(), X_.cols()));
    }
    if (summary_.usable()) certify_result();
    if (summary_.usable() && !exact_ && options_.measure_stationarity) measure_stationarity();
    summary_.solve_time = loop_.time_before + seconds_since(t_solve_);
    summary_.curvature_scale = surrogate_->curvature_scale();
    if (model_.evaluator) summary_.metrics = model_.evaluator->evaluate(X_);
    log_.finish(summary_);
    return summary_;
  }

 private:
  enum class Next { kGoOn, kRetry, kStop };

  // SolverOptions::curvature_scale = 0: tau chosen by lower_curvature_scale().
  bool automatic_tau() const { return options_.curvature_scale == 0.0; }
  // Where the automatic tau may halve tau (lower_curvature_scale() says why only there): the exact
  // surrogate of a model without a constraint split.
  bool tau_may_fall() const {
    const xt_step::XtStep* step = admm_ ? admm_->xt_step() : nullptr;
    const bool coordinate = step && step->kind() == xt_step::Kind::kDualCoordinate;
    return automatic_tau() && exact_ && (!model_.constraint || coordinate);
  }

  // |F_k - F_{k+1}| / |F_k| (rule 4), with |F_k| floored at 1e-12 of the problem's size: where the
  // minimum is 0 (observations fitted exactly) F falls geometrically towards it and the ratio stays
  // put (a 2 x 2 all-zero set: 0.066 at F = 4e-64 after 2000 steps, never "converged"). The size
  // is F(0) = sum phi(|t|), the data's own, or |F(X_0)| where that is smaller or F(0) = 0: |F(X_0)|
  // alone grows with the start (init_scale = 1e12 made it 1.7e23, and a run "converged" at F = 2e6
  // falling fourfold a step, where F(0) = 4).
  double relative_change(double f, double f_next) const {
    double size = std::abs(summary_.initial_objective);
    if (std::abs(f) < 1e-12 * size) {
      const double zero = value_at_zero();
      if (zero > 0.0) size = std::min(size, zero);
    }
    return std::abs(f - f_next) / std::max({std::abs(f), 1e-12 * size, 1e-300});
  }

  // F(0) = sum phi(|t_tau|) (the regularizer parts vanish at X = 0), once, and only when the floor
  // above is reached: the all-entries terms (sparse PCA) form their n^2 zero targets on a first
  // targets() call.
  double value_at_zero() const {
    if (!std::isnan(value_at_zero_)) return value_at_zero_;
    // Zero targets (sparse PCA) give F(0) = 0 without their n^2-vector (3.2 GB at n = 20000).
    if (const auto* all = dynamic_cast<const AllEntriesTerms*>(model_.terms.get()); all && all->zero_targets())
      return value_at_zero_ = 0.0;
    const Vector& t = model_.terms->targets();
    constexpr Index kChunk = 4096;
    Vector a, phi, dphi;
    double sum = 0.0;
    for (Index start = 0; start < t.size(); start += kChunk) {
      a = t.segment(start, std::min(kChunk, t.size() - start)).cwiseAbs();
      loss_.evaluate(a, phi, dphi);
      sum += phi.sum();
    }
    value_at_zero_ = std::isfinite(sum) ? sum : 0.0;
    return value_at_zero_;
  }
  mutable double value_at_zero_ = std::nan("");

  // The surrogate at X_0 (or the saved X_k) and the loop's variables; false when F(X_0) is not
  // finite (the summary says so).
  bool begin() {
    // tau of SolverOptions::curvature_scale, as refused steps have raised it so far.
    // (0, automatic, starts at the majoriser's 1.)
    const double tau_start = start_ ? start_->curvature_scale
                                    : automatic_tau() ? 1.0 : options_.curvature_scale;
    if (!(tau_start > 0.0 && tau_start <= 1.0))
      throw Error("solver", "the saved curvature scale " + fmt("%.17g", tau_start) + " is not in (0, 1]");
    surrogate_->set_curvature_scale(tau_start);
    summary_.curvature_scale = tau_start;
    surrogate_->update(X_);
    loop_.f = surrogate_->center_objective();
    if (start_) {
      validate_resume(*start_, model_, loop_.f, summary_.n, summary_.rank, summary_.split_terms);
      resume_from(*start_, summary_, state_, loop_);
      return true;
    }
    summary_.initial_objective = summary_.final_objective = loop_.f;
    if (!std::isfinite(loop_.f)) {
      summary_.status = SolverStatus::kNumericalError;
      summary_.message = "the objective at the starting point is not finite";
      return false;
    }
    // c0 scales the ADMM tolerance schedule with the objective (docs/method.md section 3: F(X_1)).
    // With an indefinite A, F's parts can cancel: sparse PCA's F is sum_ij |Z_ij| - (gamma/2)
    // tr(X^T Sigma X), and |F| at the PCA start was 10x smaller than at the random start (22
    // against 220), so the PCA start's ADMM ran to a 10x tighter tolerance (8.6 against 3.8
    // iterations per MM step), and an F(X_0) near 0 would send every ADMM to its iteration cap.
    // The size of F's parts is F itself whenever A is PSD, and does not cancel when it is not.
    loop_.c0 = options_.admm.c0 > 0.0 ? options_.admm.c0 : std::max(surrogate_->objective_magnitude(), 1e-12);
    return true;
  }

  // The ADMM's options: the automatic coupled step is the dual coordinate or linearised one, also
  // with the rank staircase (max_rank > 0), whose stairs once needed CG's settled multipliers
  // (their joint step found no descent otherwise) until the stairs moved X to keep the fitted terms
  // fitted (raise_rank()): the quickstart at n = 100, lambda = 1, from rank 2 took 111 s with CG
  // and stopped at rank 48, 0.4% above the optimum; now 5.9 s, 2e-6 above it. Auto's finish (its proof of stationarity reads them too) was CG's as well until Anderson
  // acceleration (section 3.7) made the linearised proofs converge: the quickstart at lambda = 1,
  // xt_step = "auto", takes 4.9 s linearised against 34 s with CG (stationarity 1e-6, both proved).
  // Without the acceleration (anderson_memory = 0) runs not coupled from the start keep CG.
  // make_xt_step applies the rest of the rule (B diagonal, blocks in budget).
  AdmmOptions admm_options() const {
    AdmmOptions o = options_.admm;
    o.split = split_;
    const bool unaccelerated_finish = o.anderson_memory == 0 && o.split != SplitMode::kCoupled;
    if (o.coupled_step == CoupledStep::kAuto && unaccelerated_finish) o.coupled_step = CoupledStep::kCg;
    return o;
  }

  // SIGINT or SIGTERM seen. A signal reaches the processes of an MPI run at different moments, so
  // there they agree once per MM step (agree_on_interrupt(), collective) and act on that; one
  // process reads the flag as it is.
  void agree_on_interrupt() {
    if (processes::distributed())
      interrupt_agreed_ = processes::any(options_.interrupt && options_.interrupt->load());
  }
  bool interrupted() const {
    if (processes::distributed()) return interrupt_agreed_;
    return options_.interrupt && options_.interrupt->load();
  }

  // The ADMM of step k made ready, unless the previous step's fused rebuild already did it.
  void prepare(int k) {
    admm_->prepare(rebuild_preconditioner_);
    rebuild_preconditioner_ = false;
    if (k == 1) balance_rho();
    // Warm start (docs/method.md section 3): keep nu and e from the previous MM step. The ADMM's
    // first Xt-step does not read Xt, so the direct step starts it from 0; the coupled step's
    // CG starts from the previous MM step's Xt (docs/method.md: "CG warm-started from the previous
    // Xt"; the steps of consecutive MM iterations are alike): 28% fewer CG iterations at
    // n = 100, rank 60, l1 (docs/performance.md).
    admm_->reset_if_needed(state_);
    if (admm_->direct()) state_.D.setZero();
  }

  // Scale-aware automatic rho (docs/method.md section 3 asks for one), after the first prepare()
  // of a surrogate: when tr(2B)/tr(P*P) exceeds rho_scale / phi'(0), the P*P part of the Xt-step
  // is too small to matter and the ADMM crawls (sparse PCA, tr Z = 1, n = 800: 273 ADMM iterations
  // per MM step at rho = 10, 3 at the balanced rho 1600). Fixed from then on, so that the warm
  // start stays consistent.
  void balance_rho() {
    if (options_.admm.rho == 0.0 && admm_->balanced_rho() > summary_.rho) {
      summary_.rho = admm_->balanced_rho();
      admm_->set_rho(summary_.rho);
    }
  }

  // A coupled run stops on small steps alone, and eps_k (far above the gap its steps need near the
  // end) let each of its dual coordinate steps take one sweep, so that it stopped while still
  // improving (quickstart m = 2000, lambda = 1: 3.6e-4 above auto's proved end point). So once its
  // steps are first small (loop_.tight), they are also solved relative to their gain
  // (AdmmOptions::decrease_ratio; docs/method.md section 3.9) until they are small again, which
  // bounds how far its end is from a fixed point. Not from the start: where the steps are many and
  // each sweep dear (sdpa_compare, rank 60, to 1e-10) that made the run 3x to 5x slower for no
  // fewer MM steps. Not in auto's proof phase, where the steps before the last need only gain their
  // share: 25% fewer sweeps on the quickstart, but twice as many on hard random instances, whose MM
  // then took 2.5x the steps. Not in the linearised or CG ADMMs, whose iterations cost several
  // sweeps (snmf_synthetic: 7x the time).
  bool relative_rule_applies() const {
    const xt_step::XtStep* step = admm_->xt_step();
    return split_ == SplitMode::kCoupled && options_.admm.decrease_ratio > 0.0 && step &&
           step->kind() == xt_step::Kind::kDualCoordinate;
  }
  RelativeStop relative_stop() const {
    if (!loop_.tight || !relative_rule_applies()) return {};
    const double proof = 0.5 * options_.stationarity_tolerance * surrogate_->objective_magnitude();
    return {options_.admm.decrease_ratio, std::max(options_.admm.min_tolerance, proof)};
  }

  // The ADMM solve of step k to eps_k and the surrogate rebuilt at X_k + Xt (into X_next_); with
  // the fused rebuild, that rebuild also runs the next step's first ADMM iteration (primed_).
  Trial try_step(int k, double eps) {
    Trial t;
    t.f_before = loop_.f;
    t.inner = admm_->run(state_, eps, relative_stop());
    summary_.rho = admm_->rho();  // residual balancing may have changed it (AdmmOptions::adaptive_rho)
    if (tau_may_fall()) t.curvature = surrogate_->curvature_along(state_.step);
    t.dual = state_.dual;
    t.magnitude = surrogate_->objective_magnitude();
    summary_.admm_iterations += t.inner;
    summary_.cg_iterations += state_.cg_iterations;
    X_next_ = X_ + state_.step;  // under a constraint, the feasible Y of the ADMM
    t.gap = state_.gap;
    t.surrogate_value = state_.primal;
    // A checkpoint must hold the state between two MM steps: no fused rebuild before one (nor
    // when an interrupt, which takes one, is already known).
    t.checkpoint_due = checkpointer_->due(k);
    agree_on_interrupt();
    const bool interrupting = interrupted();
    primed_ = false;
    // (update_and_iterate() itself falls back to the plain update where the fusion does not apply.)
    if (k < options_.max_mm_iterations && !t.checkpoint_due && !interrupting)
      primed_ = admm_->update_and_iterate(*surrogate_, X_next_, state_);
    else
      surrogate_->update(X_next_);
    t.f_next = surrogate_->center_objective();
    return t;
  }

  // Whether the trial point is accepted (kGoOn), refused and taken again with a larger curvature
  // scale (kRetry), or ends the run on X_k (kStop); the surrogate is back at X_k unless accepted.
  Next judge(int k, const Trial& t, double eps) {
    if (!std::isfinite(t.f_next) || !X_next_.allFinite()) {
      summary_.status = SolverStatus::kNumericalError;
      // F(X_k) was finite, so the step overflowed: the surrogate's products grow as X^4 (CMVU data
      // near 1e100, F = 7e200 at the start, ended here), which data of unit scale keeps far away.
      summary_.message = "non-finite objective at MM iteration " + std::to_string(k) + " (F(X_k) = " +
                         fmt("%.3g", loop_.f) +
                         "): the step overflowed; data or parameters far from unit scale? rescale them; the "
                         "factor is the last finite iterate";
      surrogate_->update(X_);
      return Next::kStop;
    }
    const double tau = surrogate_->curvature_scale();
    const StepVerdict verdict = judge_step(k, loop_.f, t.f_next, t.surrogate_value, tau, eps, t.gap);
    // A trial's first step at the halved tau passes unjudged (reference < 0) and its second is
    // judged (> 0), once, on its first attempt: the first step starts from multipliers settled for
    // the old tau and gains less than the steps after it (sdpa_compare n = 300: 4.3 against 10.0
    // at the old tau, every trial undone and tau held at 1 for 1535 MM steps).
    const double pending = loop_.tau_trial.reference;
    const double trial_reference = pending > 0.0 ? pending : 0.0;
    loop_.tau_trial.reference = pending < 0.0 ? -pending : 0.0;
    if (verdict.kind == StepVerdict::kRefuse) {
      if (pending != 0.0) {
        fail_tau_trial(k);  // the refusal doubles tau back
        loop_.tau_trial.reference = 0.0;
      }
      ++summary_.rejected_steps;
      log_.refused(summary_, k, t.f_next, t.surrogate_value, tau, std::min(1.0, 2.0 * tau));
      return retry_with_doubled_tau();
    }
    if (verdict.kind == StepVerdict::kFault) {
      ++summary_.monotonicity_violations;
      summary_.status = SolverStatus::kNumericalError;
      summary_.message = verdict.message;
      surrogate_->update(X_);
      return Next::kStop;
    }
    // A trial of a halved tau (lower_curvature_scale) that gains less per ADMM iteration than the
    // old tau was expected to is undone as a refusal is: taken again from X_k at the old tau, its
    // ADMM iterations spent but not its effect on F (kept, its F rose at 2 of 3 failed trials on
    // the quickstart at m = 2000, 266145 -> 266206: the halved tau's first sweeps leave H(Xt)
    // above F(X_k), which the refusal test does not catch).
    if (trial_reference > 0.0 && !((t.f_before - t.f_next) / std::max(1, t.inner) >= trial_reference)) {
      fail_tau_trial(k);
      log_.undone(summary_, k, t.f_next, tau, std::min(1.0, 2.0 * tau));
      return retry_with_doubled_tau();
    }
    if (verdict.violation) ++summary_.monotonicity_violations;  // (not for a step that was undone)
    return Next::kGoOn;
  }

  // A refused or undone step: taken again from X_k with tau doubled (at most 1).
  Next retry_with_doubled_tau() {
    surrogate_->set_curvature_scale(std::min(1.0, 2.0 * surrogate_->curvature_scale()));
    surrogate_->update(X_);
    primed_ = false;
    rebuild_preconditioner_ = true;  // B changed with tau
    return Next::kRetry;
  }

  // A trial of a halved tau failed at MM step k: the next is allowed 8, 16, 32, ... steps later.
  void fail_tau_trial(int k) {
    const int failed = ++summary_.undone_tau_trials;
    loop_.tau_trial.not_before = k + (8 << std::min(failed - 1, 20));
  }

  // X_{k+1} = X_k + Xt, then the stopping rules; true when the run ends here.
  bool accept_and_stop(int k, const TraceRow& row, const Trial& trial) {
    // Small steps end a row-split run (or, with xt_step = "auto", its row-split part). On the exact
    // surrogate an auto run must also be proved near-stationary, so that a run still improving
    // slowly is not stopped (docs/method.md section 7.2); it then ends at X_k, the point the proof
    // is about, without the step just tried. (A coupled run stops on small steps alone: proofs need
    // tight ADMMs, which cost too much where CG is slow, 1000 ADMM iterations per MM step on the
    // quickstart at rho = 2. On the dual coordinate step those small steps must come from steps
    // solved relative to their gain: relative_stop().)
    const bool small = row.relative_change < options_.relative_tolerance ||
                       small_over_window(row.objective, row.curvature_scale);
    const bool settled = (small ? loop_.small_steps + 1 : 0) >= options_.consecutive && k >= options_.min_mm_iterations;
    const bool auto_split = split_ == SplitMode::kExactFinish;
    // kAuto on the exact surrogate ends as kCoupled does, once its steps solved relative to their
    // gain are small again, but at X_k, the point the last step's bracket is about.
    const bool bracketed = settled && exact_ && bracketed_end_ && loop_.tight;
    if (bracketed || (settled && exact_ && auto_split && stationary(trial))) {
      if (bracketed) record_stationarity(trial);
      summary_.status = SolverStatus::kConverged;
      surrogate_->update(X_);
      return true;
    }
    X_.swap(X_next_);  // X_next_ is X_k now
    TraceRow taken = row;
    if (options_.overrelax && overrelaxes()) overrelax(taken);
    loop_.f = taken.objective;
    summary_.mm_iterations = k;
    summary_.final_objective = taken.objective;
    summary_.trace.push_back(taken);
    log_.step(summary_, taken);

    // The callback sees every MM iterate, the last one included.
    if (callback_ && !callback_(taken, X_)) {
      summary_.status = SolverStatus::kInterrupted;
      summary_.message = "stopped by the caller";
      return true;
    }
    if (const StairCheck due = stair_due(k);
        due != StairCheck::kNone && raise_rank(k, due == StairCheck::kUnsettled ? kUnsettledGap : 0.0))
      return false;
    if (finish_due(k) && finish_early()) return true;
    // An over-relaxed step's progress counts: small steps are judged on the step taken.
    const bool small_taken = taken.relative_change < options_.relative_tolerance ||
                             small_over_window(taken.objective, taken.curvature_scale, 1);
    loop_.small_steps = small_taken ? loop_.small_steps + 1 : 0;
    if (loop_.small_steps >= options_.consecutive && k >= options_.min_mm_iterations) {
      if (!auto_split && !loop_.tight && relative_rule_applies()) {
        loop_.tight = true;  // small, but perhaps only loosely solved: again, relative to the gain
        loop_.small_steps = 0;
      } else if (!auto_split) {
        summary_.status = inner_solves_failed() ? SolverStatus::kIterationLimit : SolverStatus::kConverged;
        return true;
      } else {
        // Small steps but no proof yet: from now on the ADMMs go to half the stationarity tolerance,
        // so that their gap does not hide a fixed point.
        // On the exact surrogate a run below the optimum's rank climbs the staircase here, before
        // the tight ADMMs: the stairs below the top need no proof of stationarity.
        if (exact_ && !loop_.tight && steps_on_stair(k) >= kStairSteps && raise_rank(k)) return false;
        if (exact_) loop_.tight = true;
        else switch_to_exact(k + 1);
      }
    }
    // The automatic tau, before any checkpoint of this step (an interrupt's below) so that a
    // resumed run continues at the tau this one does; not on a step whose switch to the exact
    // surrogate already prepared the next step's ADMM (skip_prepare_) at this tau.
    if (automatic_tau() && !skip_prepare_) lower_curvature_scale(k, trial);
    // An interrupt that came during a fused rebuild finds the next step's first ADMM iteration
    // done: with a checkpoint to take, that step is finished first (unfused, as interrupting is
    // then set), so that the checkpoint holds a state between two steps.
    if (interrupted() && !(primed_ && checkpointer_->enabled())) {
      summary_.status = SolverStatus::kInterrupted;
      summary_.message = "interrupted";
      // Always: an interrupted run must be resumable, whatever the checkpoint interval.
      if (checkpointer_->enabled()) checkpointer_->take(k, X_, loop_, *surrogate_, *admm_, state_, summary_);
      return true;
    }
    const bool over_time = options_.time_limit > 0.0 && row.time >= options_.time_limit;
    if (processes::distributed() ? processes::any(over_time) : over_time) {  // each process has its clock
      summary_.status = SolverStatus::kTimeLimit;
      return true;
    }
    return false;
  }

  // Below tau = 1 an accepted step may raise F within its ADMM's gap, and near a minimum such
  // steps rise and fall by more than the relative tolerance while F as a whole no longer moves:
  // there a step is small when F moved by less than the tolerance per step over the last
  // `consecutive` steps, |F_{k-c} - F_k| < c tol |F_{k-c}|. `pushed`: the trace holds the step.
  bool small_over_window(double f, double tau, std::size_t pushed = 0) const {
    const std::size_t c = static_cast<std::size_t>(std::max(1, options_.consecutive));
    const std::vector<TraceRow>& trace = summary_.trace;
    if (!automatic_tau() || !(tau < 1.0) || trace.size() < c + pushed) return false;
    const double before = trace[trace.size() - pushed - c].objective;
    return relative_change(before, f) < static_cast<double>(c) * options_.relative_tolerance;
  }

  // Small steps prove nothing when every one of them came from an ADMM stopped by its iteration
  // cap above its tolerance: the steps are short because the subproblems were not solved (a rho
  // far from balanced: rho = 1e8 on the quickstart ended "converged" 9% above the default run's F).
  // Such a run ends with status iteration_limit and says why. Read from the trace, which a
  // checkpoint keeps.
  bool inner_solves_failed() {
    const auto& trace = summary_.trace;
    const std::size_t n = static_cast<std::size_t>(std::max(1, options_.consecutive));
    if (trace.size() < n) return false;
    for (std::size_t i = trace.size() - n; i < trace.size(); ++i)
      if (trace[i].admm_iterations < options_.admm.max_iterations || !(trace[i].gap > trace[i].tolerance)) return false;
    summary_.message = "the last " + std::to_string(n) + " MM steps' ADMM runs all stopped at admm.max_iterations = " +
                       std::to_string(options_.admm.max_iterations) + " above their tolerance (gap " +
                       fmt("%.3g", trace.back().gap) + " > eps_k " + fmt("%.3g", trace.back().tolerance) +
                       "): the small steps are the unsolved subproblems', not a stationary point; rho = " +
                       fmt("%.3g", summary_.rho) + (options_.admm.rho > 0.0 ? " (set by hand)" : "");
    return true;
  }

  // The automatic curvature scale (SolverOptions::curvature_scale = 0; docs/method.md section 2.1),
  // after an accepted step Xt at tau: H is linear in tau, H_tau(Xt) = H_0(Xt) + tau <Xt, C Xt>, so
  // the step needed tau* = tau - (H_tau(Xt) - F(X_k + Xt)) / <Xt, C Xt> to pass. When 2 tau* is at
  // most tau / 2 (a factor 2 to spare for the next step's direction), tau is halved and the
  // surrogate at X_{k+1} rebuilt with it. It never goes below 2^(refused steps) / 64: each refusal
  // (which doubles tau, judge()) doubles that floor, so a run refuses at most 6 steps this way
  // and cannot alternate between a tau and its refusal. The floor is a function of the summary's
  // count, so a resumed run lowers tau exactly as the uninterrupted one.
  //
  // The curvature says what the step needed, not whether a smaller tau pays: on matrix completion
  // (m = 2000) every halving it asked for made the run slower (152 MM steps and 2265 ADMM
  // iterations against 41 and 88 at tau = 1), on sdpa_compare's rank-60 instance it made it 3.6x
  // faster. So a halving is a trial (TauTrial): only after 3 steps at this tau, and the next step
  // must gain per ADMM iteration at least e_k = (F_{k-1} - F_k) / iterations_k, what the last step
  // at the old tau gained; judge() undoes a trial that does not. (Against q e_k with
  // q = min(1, e_k / e_{k-1}), the rate's decay allowed for, the quickstart's trial at step 4 was
  // kept and its coupled run took 124 ADMM iterations against 88 at tau = 1; against e_k, 94.)
  //
  // Not on the row-split surrogate (xt_step = "row-split", or auto's first phase), whose ADMMs are
  // solved loosely (one or two iterations a step): the quickstart at m = 2000, lambda = 1 took tau
  // to 1/64 with every trial kept, its steps' gap grew to 100x their gain and the small-change
  // rule stopped it at 108 MM steps with F 266202.8 and test RMSE 0.11236, where tau = 1 goes on to
  // 169 steps, F 266161.1 and 0.11214. Nor under a constraint split, whose rho was balanced for
  // B at tau = 1: snmf_synthetic (X >= 0, coupled, CG) kept its trials down to tau = 1/8 and took
  // 35 s against 11 s (sparse PCA: 32 s, docs/notes). The dual coordinate step under X >= 0 has no
  // split and no rho, and there tau falls (snmf_usps: l1 warm start 81 MM steps against 185 at
  // tau = 1, F 0.5% lower). With the rank staircase too, since its stairs move X to
  // keep the fitted terms fitted (raise_rank()): before that, from rank 3 on
  // tests/sdpa_global_test's instance, its run settled at tau 1/2 where S(y)'s eigenvectors gave no
  // step, and stopped at rank 3, 23% above SDPA's optimum.
  void lower_curvature_scale(int k, const Trial& t) {
    const double tau = surrogate_->curvature_scale();
    const double floor = std::min(1.0, std::ldexp(1.0 / 64.0, summary_.rejected_steps));
    // (Not after the last step: no step would use the halved tau.)
    if (!(t.curvature > 0.0) || 0.5 * tau < floor || k + 1 < loop_.tau_trial.not_before ||
        k >= options_.max_mm_iterations)
      return;
    const double needed = tau - (t.surrogate_value - t.f_next) / t.curvature;
    if (!(2.0 * needed <= 0.5 * tau)) return;
    const double reference = tau_trial_reference(tau, t);
    if (!(reference > 0.0)) return;
    loop_.tau_trial.reference = -reference;  // judged at the second step (judge())
    surrogate_->set_curvature_scale(0.5 * tau);
    surrogate_->update(X_);
    primed_ = false;
    // B changed with tau: the preconditioner (linearised: the scale) is rebuilt at the next
    // prepare(). Said through its age, which a checkpoint keeps, not through rebuild_preconditioner_,
    // which it does not: a run resumed from this step rebuilds there too.
    admm_->set_preconditioner_age(options_.admm.preconditioner_refresh);
  }

  // e_k of lower_curvature_scale(), measured as the trial will be, on F(X_k + Xt) before any
  // over-relaxation; 0 when tau has not held for 3 steps or the last two steps taken (the trace's
  // rows) did not both lower F.
  double tau_trial_reference(double tau, const Trial& t) const {
    constexpr std::size_t kHold = 3;
    const std::vector<TraceRow>& trace = summary_.trace;
    if (trace.size() < kHold) return 0.0;
    for (std::size_t i = trace.size() - kHold; i < trace.size(); ++i)
      if (trace[i].curvature_scale != tau) return 0.0;
    const auto lowered = [&](std::size_t i) {
      return (i == 0 ? summary_.initial_objective : trace[i - 1].objective) > trace[i].objective;
    };
    if (!lowered(trace.size() - 1) || !lowered(trace.size() - 2)) return 0.0;
    const double last = (t.f_before - t.f_next) / std::max(1, t.inner);
    return last > 0.0 ? last : 0.0;
  }

  // Where over-relaxation is tried: on the exact surrogate without a constraint (its fixed points
  // are MM's, and nothing is fused into its rebuild), and on all-entries terms (sparse PCA, under
  // its constraint too: a trial is half a product X X^T, a tenth of its row-split step, and the
  // run takes 46 MM steps instead of 80). Not on other row-split runs: a trial that moves X
  // discards the fused rebuild's first iteration of the next step (Admm::update_and_iterate), so
  // their iterates would depend on whether the pass fuses.
  bool overrelaxes() const {
    return (exact_ && !model_.constraint) || dynamic_cast<const AllEntriesTerms*>(model_.terms.get()) != nullptr;
  }

  // Over-relaxation (SolverOptions::overrelax; docs/method.md section 7.5), with X_ = X_k + Xt just
  // accepted and X_next_ = X_k: F at X_k + (1 + s) Xt for s = 1, 2, 4, ..., 64 (projected onto K
  // under a constraint) until it stops falling; X_ becomes the lowest point tried, the surrogate is
  // rebuilt there and `row` records it. MM converges linearly, and where its majoriser keeps the
  // steps short consecutive steps point the same way (the exact surrogate near a point where many
  // terms have zero residual: q = 0.9975 per step on tests/sdpa_global_test's completion n = 25;
  // sparse PCA's row-split surrogate, whose curvature bound C = sum_j w_ij is about n), and one F
  // evaluation per trial buys several of them. The trials are F evaluations only (terms, loss,
  // regularizers), not rebuilds of the surrogate, which cost about as much as a sweep: with a
  // rebuild at each trial and one back at X_ after the usual first-trial failure, the quickstart
  // (m = 2000, lambda = 1) spent 0.10 s of its 0.38 s here. Their sums are not the rebuild's, so a
  // trial must beat the best by more than their rounding (kMargin); the surrogate is rebuilt once,
  // at the point kept, and `row` takes its F. All-entries terms sum their loss tile by tile
  // (AllEntriesTerms::loss_sum: their values are n^2 doubles, which nothing else forms).
  void overrelax(TraceRow& row) {
    constexpr double kMargin = 1e-12;
    const double f_before = loop_.f;
    // On the row-split surrogate a step that raised F (a loose ADMM's, within eps_k) gives no
    // direction to extend: F rose along it (sparse PCA: every such trial failed, 22 of 46). On the
    // exact surrogate such rises are rounding-sized and a trial may still win, so it tries them.
    if (!exact_ && !(row.objective < f_before)) return;
    const Matrix step = X_ - X_next_;
    const auto* all_entries = dynamic_cast<const AllEntriesTerms*>(model_.terms.get());
    Matrix best, trial;
    // F(X_{k+1}) is the step's row.objective: the surrogate's rebuild at X_next_ (try_step)
    // computed it from the same terms' values and loss sums as objective_at(), to the same bits
    // (checked on the quickstart, cmvu_usps, matrix_completion_l1, sdpa_example and SDPLIB's
    // mcp124-1); recomputing it was a third of the passes over the terms of an MM step (m = 10^5:
    // three evaluations a step, each about 42 ms, a tenth of the solve in all).
    double f_best = row.objective;
    for (double s = 1.0; s <= 64.0; s *= 2.0) {
      trial = X_ + s * step;
      if (model_.constraint) model_.constraint->project(trial);
      const double f = all_entries ? all_entries->loss_sum(trial, loss_) +
                                         regularizer_value(model_, surrogate_->weights_used(), trial)
                                   : objective_at(trial);
      if (!(f < f_best - kMargin * std::abs(f_best) && trial.allFinite())) break;  // a NaN stops it too
      f_best = f;
      best.swap(trial);
    }
    if (best.size() == 0) return;  // the surrogate is still at X_
    primed_ = false;  // a fused rebuild's first iteration (try_step) was at X_; rebuilt below
    X_.swap(best);
    surrogate_->update(X_);
    // The constraint split's Y is the ADMM's feasible point, X_{k+1} before the trials: the next
    // step's first Xt-step pulls X towards it (rho_k (X_k - Y)), which undid every over-relaxed
    // step of sparse PCA the step after (F rose at every other MM step).
    if (state_.Y.rows() == X_.rows()) state_.Y = X_;
    ++summary_.overrelaxed_steps;
    row.objective = surrogate_->center_objective();
    row.relative_change = relative_change(f_before, row.objective);
  }

  // F(X) without rebuilding the surrogate.
  double objective_at(const Matrix& X) {
    return objective_value(model_, loss_, surrogate_->weights_used(), X, residuals_, weights_scratch_);
  }

  // The stopping rule on the exact surrogate H_k (docs/method.md section 7.2): the ADMM's dual
  // bounds min H_k from below, so (F(X_k) - dual) / |F's parts| bounds what one more exact MM step
  // from X_k could gain; below stationarity_tolerance X_k is as good as a fixed point.
  // (stationarity_tolerance = 0 is the small-steps rule alone.)
  bool stationary(const Trial& t) {
    const double tol = options_.stationarity_tolerance * t.magnitude;
    if (tol > 0.0 && t.f_before - t.dual > tol + options_.admm.min_tolerance) return false;
    record_stationarity(t);
    return true;
  }
  // Summary::stationarity of X_k, bracketed by the step's surrogate value and the ADMM's dual.
  void record_stationarity(const Trial& t) {
    summary_.stationarity = std::max(0.0, (t.f_before - t.dual) / t.magnitude);
    summary_.stationarity_lower = std::max(0.0, (t.f_before - t.surrogate_value) / t.magnitude);
  }

  // SplitMode::kAuto, resolved once per run (so a resumed run resolves it as the first did):
  // kCoupled where the exact surrogate's dual coordinate step applies,
  // its sweeps costing about a row-split iteration (quickstart m = 2000, lambda = 1: 0.34 s
  // against row-split's 0.32 s, F 265892.7 against 266161.1). Where an A-term adds curvature
  // (NPKL's Laplacian) B is made diagonal with the regularizer's diagonal majorant of A_+, and
  // distance terms' (CMVU) Laplacian curvature with its diagonal majorant (diagonal_b_), as
  // row-split does: H is still tight to first order at X_k, so MM still ends at a stationary
  // point of F, and the dual coordinate step applies (npkl_a1a, l1, rank 40, lambda 1.5:
  // F 1757.91 in 0.52 s, against row-split's 1798.00 in 4.8 s and CG's exact surrogate 1758.32
  // in 8.6 s). kExactFinish for models whose terms are constraints (sdpa),
  // where a row-split stall is a wrong answer, and with the staircase; else kRowSplit, since
  // there the exact steps are CG or linearised ADMMs.
  // (Under several processes the dual coordinate step is not distributed: every process runs it
  // whole, with the single process's result; only the row-split pass is divided.)
  void resolve_split() {
    split_ = options_.admm.split;
    if (split_ != SplitMode::kAuto) return;
    split_ = SplitMode::kCoupled;  // (exact_start_applies() reads the options of a coupled run)
    Vector majorant;
    diagonal_b_ = !a_curvature() || model_.quadratic->positive_diagonal_majorant(majorant);
    bracketed_end_ = exact_start_applies(diagonal_b_);
    // The rank staircase (max_rank) climbs only on the exact surrogate, whose multipliers its
    // stairs read, so with it auto is the exact finish too; so it is for a convex
    // problem (a linear loss, no constraint), whose result the certificate and the polish then
    // prove optimal (tests/sdpa_global_test's general sparse terms: row-split stopped 6e-2 above
    // the optimum, the exact finish and its polish reach SDPA's).
    if (!bracketed_end_) {
      diagonal_b_ = false;
      const bool convex = linear_loss(loss_) && !model_.constraint;
      split_ = model_.infeasibility || options_.max_rank > 0 || convex ? SplitMode::kExactFinish : SplitMode::kRowSplit;
    }
  }

  // Summary::stationarity of a result that did not end on the exact surrogate (docs/method.md
  // section 7.2), measured once at the result X: the exact surrogate H at X, solved by the
  // dual coordinate step or the linearised coupled ADMM from the multipliers 2 w sign(r)
  // (warm_exact_multipliers). Any of its iterates D and multipliers nu bracket the measure,
  //     F(X) - H(D) <= F(X) - min H <= F(X) - D(nu),
  // and it runs, in rounds of kRound iterations, until the upper end is within the stationarity
  // tolerance (X is a fixed point), or the bracket is known to a factor 4 (X is not, and by how
  // much), or kMaxIterations. X, rho and the counts of the run stay as they were. Not where the
  // linearised step does not apply (a constraint, or B not diagonal): those need CG, at up to 0.4 s
  // an iteration on cmvu_usps, and stay unmeasured (NaN).
  void measure_stationarity() {
    constexpr int kRound = 5, kMaxIterations = 300;
    // Known before any rebuild: the A-term's curvature makes B non-diagonal (npkl, cmvu), and a
    // rebuild only to find that cost them 0.1 s (npkl_a1a: 0.47 -> 0.57 s).
    if (model_.constraint || surrogate_->has_a_curvature()) return;
    const double rho = summary_.rho;
    const Index split_terms = summary_.split_terms;
    AdmmOptions admm = options_.admm;
    // The dual coordinate step where it applies (its sweeps cost a row-split iteration; section
    // 3.9), else the linearised ADMM (the option's fallback, xt_step::make_xt_step).
    admm.coupled_step = CoupledStep::kDualCoordinate;
    admm.max_iterations = kRound;
    start_exact(admm);
    const xt_step::XtStep* step = admm_->xt_step();
    if (step && (step->linearized() || step->kind() == xt_step::Kind::kDualCoordinate)) {
      const double f = surrogate_->center_objective(), magnitude = surrogate_->objective_magnitude();
      const double tol = options_.stationarity_tolerance * magnitude;
      double lower = 0.0, upper = std::numeric_limits<double>::infinity();
      for (int done = 0; done < kMaxIterations;) {
        const int its = admm_->run(state_, 0.5 * tol);
        done += its;
        upper = std::max(0.0, f - state_.dual);
        lower = std::max(0.0, std::min(upper, f - state_.primal));
        if (its == 0 || upper <= tol || (lower > 0.0 && upper <= 4.0 * lower)) break;
      }
      if (std::isfinite(upper) && magnitude > 0.0) {
        summary_.stationarity = upper / magnitude;
        summary_.stationarity_lower = lower / magnitude;
        // Proved above the tolerance: the run's status stays, but its line and summary.json say
        // that the result is not a fixed point, and what ends at one.
        if (lower > tol && summary_.message.empty())
          summary_.message = "not stationary: one exact MM step would lower F by at least " +
                             fmt("%.1e", lower / magnitude) + " of its size (stationarity_tolerance " +
                             fmt("%.0e", options_.stationarity_tolerance) +
                             "); solver.admm.xt_step = \"auto\" goes on to a fixed point";
      }
    }
    summary_.rho = rho;
    summary_.split_terms = split_terms;
  }

  // kAuto starts on the exact surrogate where its Xt-step is the dual coordinate step (entry terms,
  // B diagonal, no constraint; xt_step::make_xt_step): with its subspace step, that is faster than
  // a row-split phase first (docs/method.md section 7.2; quickstart m = 2000, lambda = 1: 37 MM
  // steps and 225 sweeps against 195 and 511), since the exact steps are longer and the row-split
  // phase's end is no warmer a start for the proof.
  // With `diagonal_b`, B is made diagonal by majorants (Surrogate): A_+'s (the caller has checked
  // that the regularizer offers one) and distance terms' curvature.
  bool exact_start_applies(bool diagonal_b = false) const {
    const AdmmOptions admm = admm_options();
    if (admm.coupled_step != CoupledStep::kAuto && admm.coupled_step != CoupledStep::kDualCoordinate) return false;
    // (A constraint of one set per row, X >= 0, keeps it: its multiplier is closed-form.)
    if (model_.constraint && !model_.constraint->rows_independent()) return false;
    const bool entry = dynamic_cast<const EntryTerms*>(model_.terms.get()) != nullptr;
    const bool distance = dynamic_cast<const DistanceTerms*>(model_.terms.get()) != nullptr;
    if (!entry && !(distance && diagonal_b)) return false;
    // The exact surrogate's B is diagonal unless A adds curvature (Surrogate: no majorant of A
    // outside row-split unless asked).
    return diagonal_b || !a_curvature();
  }
  bool a_curvature() const {
    return model_.quadratic && weights_.gamma > 0.0 && !model_.quadratic->positive_part_is_zero();
  }

  // kAuto: from MM step k on, the exact surrogate (coupled Xt-step) with the same tau. Its
  // multipliers start from the row-split run's end: nu_h = 2 w_h sign(b_h), the value every ADMM
  // fixed point has at a term whose residual is not zero (the e-step's threshold), and 0 at a zero
  // residual, where the row-split half-terms carry no usable value; e = b, the split of D = 0.
  void switch_to_exact(int k) {
    summary_.finishing_step = k;
    start_exact(admm_options());
    log_.switched(k, summary_.rho);
  }

  // The exact surrogate at X_ with its ADMM (options `admm`) at a rho chosen afresh for it, and the
  // ADMM's state started from the multipliers 2 w sign(b) and D = 0.
  void start_exact(const AdmmOptions& admm) {
    summary_.rho = automatic_rho(loss_, options_.admm);
    rebuild_exact(admm);
    balance_rho();
    state_.packed_rho = 0.0;
    state_.packed_weights = nullptr;
    Vector().swap(state_.u);
    state_.partial_terms.clear();
    state_.partial_rows.clear();  // (every process holds the whole D here)
    warm_exact_multipliers(*surrogate_, state_);
    state_.D.setZero(X_.rows(), X_.cols());
  }

  // The rank staircase (SolverOptions::max_rank; docs/method.md section 7.4), after MM step k on
  // the exact surrogate settled: when the certificate's S(y) has negative eigenvalues, their
  // eigenvectors v_j become new columns sqrt(s a_j) v_j of X, with a_j = lambda_j / lambda_1 and the
  // s that minimises the weighted-l1 surrogate of F along Z + s sum_j a_j v_j v_j^T (so F falls at
  // least as much), and MM goes on at the higher rank with the same multipliers (the m split terms
  // of the exact surrogate do not change with the rank). False, and the run goes on to its proof
  // or ends, when X is certified (or its relative gap is at most min_gap), when the step along the
  // directions lowers F by no more than the stationarity tolerance, or at max_rank.
  bool raise_rank(int k, double min_gap = 0.0) {
    const Index r = X_.cols(), room = options_.max_rank - r;
    // Convex losses only: for a concave phi the certificate is the weighted-l1 surrogate's, whose
    // minimiser is not X, so it never certifies and every run would climb to max_rank (the
    // quickstart's leaky-MCP, m = 1000, lambda = 1, coupled, from rank 2: rank 6 at once, test
    // RMSE 0.1349).
    if (!may_climb()) return false;
    state_.unpack();
    if (state_.nu.size() != model_.terms->size()) return false;
    const ConstraintSet& terms = *model_.terms;
    const Index n = X_.rows();
    // y_tau / w_tau from the multipliers, as certify_result() takes them.
    const Vector scaled = multipliers_over_weights();
    Descent descent;
    // Every negative eigenvalue there is room for: on tests/sdpa_global_test's rank-3 instance all 7
    // at once took the rank to 10 (SDPA's Z: 9) in one stair, where r at a time took 14 stairs.
    const Certificate c = certify(model_, loss_, surrogate_->weights_used(), X_, scaled, room, &descent);
    if (!c.computed || c.relative_gap <= std::max(options_.stationarity_tolerance, min_gap) ||
        descent.values.size() == 0)
      return false;

    const RegularizationWeights& rw = surrogate_->weights_used();
    // One step for all the directions together, Z + s sum_j a_j v_j v_j^T with
    // a_j = lambda_j / lambda_1, so that the steepest direction leads. One at a time, most of them
    // were blocked by the terms with zero residual (s = 0 for 4 of 7 on tests/sdpa_global_test's
    // rank-3 instance); together the blocks are shared.
    // The leading eigenvalues that hold kStairEnergy of sum lambda_j^2 (the first-order fall along
    // the joint direction is sum_j a_j lambda_j, so lambda_j^2 / lambda_1 each): at a stair's loose
    // settle S(y) has a tail of small negative eigenvalues from the multipliers' own error
    // (sdpa_compare's n = 100 at rank 47: 11 from -1.8 to -0.17, then 30 from -0.05 to -1e-5),
    // and taking them all made the rank overshoot the optimum's 60 (2 -> 47 -> 81 -> 73, or -> 85
    // at tight tolerances); with 99%: 2 -> 34 -> 52 -> 58 -> 61 -> 63.
    Index p = 0;
    const double energy = kStairEnergy * descent.values.squaredNorm();
    for (double sum = 0.0; p < descent.values.size() && (p == 0 || sum < energy); ++p)
      sum += descent.values[p] * descent.values[p];
    const Vector a = descent.values.head(p) / descent.values[0];
    Vector q = Vector::Zero(terms.size()), qj;
    double c_lin = 0.0;
    Matrix v;
    for (Index j = 0; j < p; ++j) {
      v = descent.vectors.col(j);
      terms.evaluate(v, qj);  // <v, Q_tau v> = <Q_tau, v v^T>
      q += a[j] * qj;
      c_lin += a[j] * regularizer_value(model_, rw, v);
    }
    // The new columns alone break the fits of the terms E whose multipliers are inside their box
    // (a cost w |q_tau| s each, where S(y) counts y_tau q_tau s), and that blocked every stair
    // after the first (quickstart n = 100, lambda = 1, from rank 2: at rank 47 lambda_min(S) =
    // -1.9 and the best step fell by 7e-5). So X moves by s D too, D the least-norm change that
    // keeps E's residuals at first order (2 <sym(Q_tau) X, D> = -q_tau); along
    // Z(s) = (X + s D)(X + s D)^T + s V V^T, F's slope at 0 is then <S(y), V V^T> < 0, as
    // S(y) X = 0 makes D's own part vanish (docs/method.md section 7.4).
    // Where B B^T is near singular D is of no use (2e11 times |X| at that example's rank 2, and a
    // step of 1e-15): the step without D is taken when it falls further.
    std::vector<Index> fitted;
    for (Index h = 0; h < scaled.size(); ++h)
      if (std::abs(scaled[h]) < 1.0 - 1e-9) fitted.push_back(h);
    const long budget = 4 * static_cast<long>(fitted.size()) + 200;
    Matrix D = refit_direction(model_, X_, fitted, q, budget);
    double fall = 0.0;
    double step_s = best_column_step(descent.residuals, descent.weights, q, c_lin, &fall);
    const double dn = D.norm();
    if (dn > 0.0 && std::isfinite(dn)) {
      // Every residual's slope along D (exact central differences: the residuals are quadratic).
      const double h = std::max(X_.norm(), 1e-300) / dn;
      Vector plus, minus;
      terms.evaluate(X_ + h * D, plus);
      terms.evaluate(X_ - h * D, minus);
      const Vector q_d = q + (plus - minus) / (2.0 * h);
      const double c_d =
          c_lin + (regularizer_value(model_, rw, X_ + h * D) - regularizer_value(model_, rw, X_ - h * D)) / (2.0 * h);
      double fall_d = 0.0;
      const double step_d = best_column_step(descent.residuals, descent.weights, q_d, c_d, &fall_d);
      if (fall_d > fall) {
        fall = fall_d;
        step_s = step_d;
      } else {
        D.setZero();
      }
    } else {
      D.setZero();
    }
    // The columns of X + s D that carry almost nothing are dropped (X's singular values below
    // kStairTrim of the largest; Z changes by their squares): above the optimum's rank MM leaves
    // them slowly, and the stair would otherwise keep them beside its new ones.
    const Index keep = step_s > 0.0 ? kept_columns(X_ + step_s * D) : r;
    // A fall within the stationarity tolerance is noise in y, not a missing rank; not where the
    // certified gap is above kUnsettledGap and the stair raises the rank: there the rank is
    // missing whatever the fall (the objective() test below still asks F to fall). At the defaults
    // sdpa_compare's n = 100 settled at rank 59 (the optimum's: 60) with a relative gap of 0.12,
    // its predicted fall 0.002 below the tolerance's 0.0026, and ended there uncertified; taking
    // the stair, it ends certified. A stair that raises nothing (the trimmed columns as many as
    // the new ones) is no stair: with stairs 128 MM steps apart they came at every check on
    // tests/sdpa_global_test's rank-3 instance (13 -> 13, ten times), where MM alone certifies.
    const bool raises = keep + p > r;
    const double noise = c.relative_gap > kUnsettledGap && raises
                             ? 0.0
                             : options_.stationarity_tolerance * surrogate_->objective_magnitude();
    if (!(step_s > 0.0) || !(fall > noise) || !raises) return false;
    // The model is first order in s (D D^T's part is not in it): the best F over s / 2^j,
    // j = 0..30. (The first s that lowered F left the new columns so small that the next stair
    // found the same directions again: rank 8 -> 25 in five stairs ten MM steps apart on
    // tests/sdpa_global_test's rank-3 instance.)
    Matrix raised(n, keep + p), trial(n, keep + p);
    double f_raised = loop_.f;
    for (int halving = 0; halving <= 30; ++halving, step_s *= 0.5) {
      trial << leading_columns(X_ + step_s * D, keep), descent.vectors.leftCols(p) * (step_s * a).cwiseSqrt().asDiagonal();
      const double f_trial = objective(model_, loss_, surrogate_->weights_used(), trial);
      if (f_trial < f_raised) {
        f_raised = f_trial;
        raised = trial;
      } else if (f_raised < loop_.f) {
        break;  // past the best of a descent already found
      }
    }
    if (!(f_raised < loop_.f)) return false;  // rounding at a point that is all but certified
    X_ = std::move(raised);
    RankRaise step;
    step.mm_iteration = k;
    step.from = r;
    step.to = X_.cols();
    step.lambda_min = c.lambda_min;
    step.objective_before = loop_.f;
    step.objective = f_raised;
    summary_.rank_raises.push_back(step);
    summary_.rank = X_.cols();
    log_.raised(k, step);

    // The exact surrogate at the new rank, the multipliers kept as its warm start.
    rebuild_exact();
    loop_.f = surrogate_->center_objective();
    loop_.tight = false;
    summary_.final_objective = loop_.f;
    summary_.status = SolverStatus::kIterationLimit;
    summary_.stationarity = std::numeric_limits<double>::quiet_NaN();
    summary_.stationarity_lower = std::numeric_limits<double>::quiet_NaN();
    state_.adjoint_generation = 0;
    state_.D.setZero(n, summary_.rank);
    return true;
  }

  // How many of X's singular values are at least kStairTrim times the largest.
  static Index kept_columns(const Matrix& X) {
    const Eigen::JacobiSVD<Matrix> svd(X);
    const Vector& sv = svd.singularValues();
    Index k = 0;
    while (k < sv.size() && sv[k] >= kStairTrim * sv[0]) ++k;
    return std::max<Index>(k, 1);
  }
  // X U_k Sigma_k: the k leading singular directions of X (X X^T without the others).
  static Matrix leading_columns(const Matrix& X, Index k) {
    if (k >= X.cols()) return X;
    const Eigen::JacobiSVD<Matrix> svd(X, Eigen::ComputeThinU | Eigen::ComputeThinV);
    return svd.matrixU().leftCols(k) * svd.singularValues().head(k).asDiagonal();
  }

  // MM steps since the last stair (since the start before the first).
  int steps_on_stair(int k) const {
    return k - (summary_.rank_raises.empty() ? 0 : summary_.rank_raises.back().mm_iteration);
  }
  // Where the staircase applies: room above the rank, the exact surrogate's multipliers, and a
  // convex problem (raise_rank() says why).
  bool may_climb() const {
    return options_.max_rank > X_.cols() && exact_ && !model_.constraint && linear_loss(loss_);
  }
  // A settled run that may climb but whose last stair is fewer than kStairSteps steps back.
  bool stair_must_wait(int k) const {
    return may_climb() && !summary_.rank_raises.empty() && steps_on_stair(k) < kStairSteps;
  }
  // The staircase's own checks, kStairSteps, 2 kStairSteps, 3 kStairSteps, ... MM steps after the
  // last stair (so that a rank that proves enough costs few eigensolves): kSettled when the last
  // `consecutive` steps at this rank changed F by less than kStairTolerance (a run whose
  // tolerances are tighter than a stair needs: sdpa_compare's relative_tolerance = 1e-10 kept
  // n = 100 at rank 2 for 20000 MM steps), else kUnsettled, where raise_rank() climbs only when
  // the certified gap is above kUnsettledGap. Settling at rank 34 of sdpa_compare's n = 100 took
  // 1280 MM steps, with the gap at 0.2 long before: with the unsettled stairs the run goes
  // 2 -> 34 -> 53 -> 58 -> 60 (SDPA's rank) and reaches 1e-4 of the optimum at MM step 864
  // instead of 2540. Read from the trace and the stairs alone, so that a resumed run checks
  // where the uninterrupted one does.
  enum class StairCheck { kNone, kSettled, kUnsettled };
  StairCheck stair_due(int k) const {
    if (!may_climb()) return StairCheck::kNone;
    const int since = steps_on_stair(k);
    if (since < kStairSteps || since % kStairSteps != 0) return StairCheck::kNone;
    const double tolerance = std::max(options_.relative_tolerance, kStairTolerance);
    const auto& trace = summary_.trace;
    const std::size_t c = static_cast<std::size_t>(options_.consecutive);
    if (trace.size() < c) return StairCheck::kUnsettled;
    for (std::size_t i = trace.size() - c; i < trace.size(); ++i)
      if (!(trace[i].relative_change < tolerance)) return StairCheck::kUnsettled;
    return StairCheck::kSettled;
  }

  // y_tau / w_tau from the exact surrogate's multipliers: the term of split term h is
  // 2 |<D, P_h> + b_h| = w |linearised residual| (weights folded into P, |nu_h| <= 2) or
  // 2 w_h |...| (ExternalWeights, |nu_h| <= 2 w_h), so nu_h / 2 or nu_h / (2 w_h).
  Vector multipliers_over_weights() const {
    Vector scaled = 0.5 * state_.nu;
    if (const ExternalWeights* external = surrogate_->linearization().external_weights()) {
      const Vector& w = external->term_weights();
      const Index m = scaled.size();
#pragma omp parallel for schedule(static) if (m > detail::kParallelWork)
      for (Index h = 0; h < m; ++h) scaled[h] = w[h] > 0.0 ? scaled[h] / w[h] : 0.0;
    }
    return scaled;
  }

  // The exact surrogate (coupled Xt-step) at X_ and its rank, with the same tau, and its ADMM
  // made ready for the next step at summary_.rho; rule 4 starts afresh.
  void rebuild_exact() { rebuild_exact(admm_options()); }
  void rebuild_exact(const AdmmOptions& admm) {
    const double tau = surrogate_->curvature_scale();
    admm_.reset();
    surrogate_.reset();
    surrogate_.emplace(model_, loss_, weights_, SplitMode::kCoupled, summary_.rank, diagonal_b_);
    surrogate_->set_curvature_scale(tau);
    surrogate_->update(X_);
    exact_ = true;
    primed_ = false;
    loop_.small_steps = 0;
    summary_.split_terms = surrogate_->split_terms();
    admm_.emplace(*surrogate_, summary_.rho, admm, paths_);
    admm_->prepare();
    skip_prepare_ = true;
  }

  static void warm_exact_multipliers(const Surrogate& s, AdmmState& st) {
    const Vector& b = s.linearization().offsets();
    const ExternalWeights* external = s.linearization().external_weights();
    st.e = b;
    st.nu.resize(b.size());
    for (Index h = 0; h < b.size(); ++h) {
      const double bound = 2.0 * (external ? external->term_weights()[h] : 1.0);
      st.nu[h] = b[h] > 0.0 ? bound : (b[h] < 0.0 ? -bound : 0.0);
    }
    st.adjoint_generation = 0;
  }

  // The certificate of the convex SDP behind the model at the result X (mm/certificate.h), with y
  // from the last ADMM's multipliers when it ran on the exact surrogate. A run that did not finish on the exact surrogate has no such y: its y = w sign(r) certified
  // nothing on any shipped model (relative gaps 0.4 to 1000) at up to 23% of the solve's time
  // (matrix_completion_l1: 0.07 s of 0.30 s), so it gets no certificate.
  void certify_result() {
    if (certified_early_) return;  // finish_early()'s certificate, at the polished point
    const auto t0 = Clock::now();
    // Under a constraint certify() has no certificate and reads no multipliers: none are unpacked
    // or scaled (sparse PCA: n^2 doubles each).
    if (model_.constraint) {
      summary_.certificate = certify(model_, loss_, surrogate_->weights_used(), X_, Vector());
      summary_.certificate.seconds = seconds_since(t0);
      return;
    }
    if (exact_) state_.unpack();
    if (!exact_ || state_.nu.size() != model_.terms->size() || surrogate_->split_terms() != state_.nu.size()) {
      summary_.certificate.note = "the run did not finish on the exact surrogate (admm.xt_step = \"" +
                                  std::string(to_string(options_.admm.split)) +
                                  (split_ != options_.admm.split ? "\", here \"" + std::string(to_string(split_)) : "") +
                                  "\")";
      return;
    }
    const Vector multipliers = multipliers_over_weights();
    Certificate& c = summary_.certificate = certify(model_, loss_, surrogate_->weights_used(), X_, multipliers);
    c.seconds = seconds_since(t0);
    polish_result(multipliers);
    c.optimal = c.computed && c.relative_gap <= options_.stationarity_tolerance;
  }

  // The active-set polish (mm/polish.h) of a convex result that its certificate leaves short of
  // optimal: kept when F is no higher at its point and the certified gap is smaller there. A
  // certificate far from optimal (relative gap above kPolishGap: most often a rank below the
  // optimum's, lambda_min(S) clearly negative) is the staircase's to close, not a local method's.
  void polish_result(const Vector& multipliers) {
    Certificate& c = summary_.certificate;
    PolishReport& report = summary_.polish;
    if (!options_.polish) {
      report.note = "off (solver.polish = false)";
      return;
    }
    if (!linear_loss(loss_)) {
      report.note = "the loss is not linear (the problem is not convex)";
      return;
    }
    if (!c.computed || c.relative_gap <= options_.stationarity_tolerance) {
      report.note = c.computed ? "certified without it" : "no certificate";
      return;
    }
    // Without a bound on tr Z (lambda = 0 and an indefinite A: the sdpa models) a negative
    // lambda_min(S) leaves no lower bound; there the polish is judged by lambda_min(S) itself, the
    // dual infeasibility (section 9).
    const bool bounded = std::isfinite(c.lower_bound);
    if (bounded && !(c.relative_gap <= kPolishGap)) {
      report.note = "the certified gap is above " + fmt("%g", kPolishGap);
      return;
    }
    Polished p = polish(model_, loss_.derivative(0.0), surrogate_->weights_used(), X_, multipliers, c.value,
                        summary_.admm_iterations);
    p.report.attempts = report.attempts + 1;
    report = p.report;
    if (!p.improved) return;
    const Certificate polished = certify(model_, loss_, surrogate_->weights_used(), p.X, p.multipliers);
    if (!polished.computed || !(bounded ? polished.gap < c.gap : polished.lambda_min > c.lambda_min)) {
      report.note = bounded ? "its certified gap is no smaller" : "its lambda_min(S) is no larger";
      return;
    }
    adopt_polished(p, polished, c.seconds);  // (the polished point's certificate is the polish's work)
  }

  // The run's result becomes the polished point p, certified by `polished`: X, F as MM evaluates
  // it everywhere (objective(): chunked sums, not the polish's own sum, which differs in the last
  // bits: 1 ulp at n = 100 in a clang build), the polish's report (kept) and the certificate.
  void adopt_polished(Polished& p, const Certificate& polished, double seconds) {
    p.report.kept = true;
    summary_.polish = p.report;
    X_ = std::move(p.X);
    summary_.final_objective = objective(model_, loss_, surrogate_->weights_used(), X_);
    adopt_certificate(polished, seconds);
  }
  // Summary::certificate = c, and the stationarity it implies: F(X) - min H <= F(X) - min F <= the
  // certified gap (H majorises F).
  void adopt_certificate(const Certificate& c, double seconds) {
    summary_.certificate = c;
    summary_.certificate.seconds = seconds;
    summary_.stationarity = std::max(0.0, c.gap) / surrogate_->objective_magnitude();
    summary_.stationarity_lower = 0.0;
  }

  // The early finish: kFinishSteps, 2 kFinishSteps, 4 kFinishSteps, ... MM steps after the last
  // stair (after the start at a fixed rank), a convex run whose polish has the direct solve
  // (mm/polish.h) tries it, and ends certified when the polished point is. After its last stair
  // sdpa_compare's n = 100 (lambda = 1, tight tolerances, rank "auto") ran to its 20000-step cap
  // (F rises by 6e-5 a step and falls back every ~125 steps, so the relative rule never fires)
  // although the end's polish certified the optimum from every point after step 6000; with the
  // direct solve a polish costs about a second there. Doubling the interval bounds the attempts'
  // cost by the run's own length. Read from the trace and the stairs alone, so that a resumed
  // run tries where the uninterrupted one does.
  bool finish_due(int k) const {
    if (!options_.polish || !exact_ || model_.constraint || !linear_loss(loss_)) return false;
    const int since = steps_on_stair(k);
    if (since < kFinishSteps || since % kFinishSteps != 0) return false;
    const int multiple = since / kFinishSteps;
    return (multiple & (multiple - 1)) == 0;
  }
  bool finish_early() {
    state_.unpack();
    if (state_.nu.size() != model_.terms->size() || surrogate_->split_terms() != state_.nu.size()) return false;
    const Vector multipliers = multipliers_over_weights();
    if (!polish_is_direct(model_, X_.rows(), multipliers)) return false;
    auto t0 = Clock::now();
    const RegularizationWeights& rw = surrogate_->weights_used();
    const Certificate c = certify(model_, loss_, rw, X_, multipliers);
    double seconds = seconds_since(t0);  // the certificates' own time, as certify_result() reports it
    if (!c.computed || !std::isfinite(c.lower_bound) || !(c.relative_gap <= kPolishGap)) return false;
    if (c.relative_gap > options_.stationarity_tolerance) {
      Polished p = polish(model_, loss_.derivative(0.0), rw, X_, multipliers, c.value, summary_.admm_iterations, true);
      p.report.attempts = ++summary_.polish.attempts;
      if (!p.improved) return false;
      t0 = Clock::now();
      const Certificate polished = certify(model_, loss_, rw, p.X, p.multipliers);
      seconds += seconds_since(t0);
      if (!polished.computed || !(polished.relative_gap <= options_.stationarity_tolerance)) return false;
      adopt_polished(p, polished, seconds);
    } else {
      summary_.polish.note = "certified without it";
      adopt_certificate(c, seconds);
    }
    summary_.certificate.optimal = true;
    summary_.status = SolverStatus::kConverged;
    certified_early_ = true;
    return true;
  }

  // True when X_k proves F unbounded below (mm/unbounded.h); the run then ends with kUnbounded.
  bool proves_unbounded() { return proves_unbounded(ray_slope(model_, loss_, surrogate_->weights_used(), X_)); }
  bool proves_unbounded(const RaySlope& ray) {
    if (!ray.certifies_unbounded()) return false;
    summary_.status = SolverStatus::kUnbounded;
    summary_.message = ray.message(surrogate_->weights_used());
    return true;
  }

  const Model& model_;
  const Loss& loss_;
  const RegularizationWeights& weights_;
  const SolverOptions& options_;
  Matrix& X_;
  const IterationCallback& callback_;
  const SolverState* start_;
  Summary summary_;
  const Clock::time_point t_solve_;
  const xt_step::Paths& paths_;
  std::optional<Surrogate> surrogate_;  // row-split, then (kAuto) the exact one: switch_to_exact()
  AdmmState state_;
  LoopVariables loop_;
  std::optional<Admm> admm_;
  IterationLog log_;
  std::optional<Checkpointer> checkpointer_;
  Matrix X_next_;
  Vector residuals_, weights_scratch_;  // objective_at()'s
  // True when the rebuild of the previous step also prepared this step's ADMM and ran its first
  // iteration (Admm::update_and_iterate: one pass over the rows instead of two).
  bool primed_ = false;
  bool interrupt_agreed_ = false;  // interrupted(), under several processes
  bool rebuild_preconditioner_ = false;  // after a refused step: B changed with tau
  bool exact_ = false;         // the surrogate is the exact H of Prop. 2 (coupled Xt-step)
  bool skip_prepare_ = false;  // switch_to_exact() made the next step's ADMM ready
  SplitMode split_ = SplitMode::kRowSplit;  // options_.admm.split, kAuto resolved (resolve_split())
  bool bracketed_end_ = false;  // kAuto run as kCoupled: it ends at X_k with the last step's bracket
  bool diagonal_b_ = false;     // kAuto's exact surrogate with B's diagonal majorants (resolve_split())
  bool certified_early_ = false;  // finish_early() ended the run certified
};

}  // namespace

Summary solve_mm(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                 const SolverOptions& options, Matrix& X, const IterationCallback& callback,
                 const CheckpointCallback& checkpoint, Summary summary, const SolverState* start,
                 const xt_step::Paths& paths) {
  return MmLoop(model, loss, weights, options, X, callback, checkpoint, std::move(summary), start, paths).run();
}

}  // namespace sdprl::mm
