// The MM outer loop (docs/method.md sections 2-3; paper Alg. 2 and 4).
#include "sdprl/solver.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "admm/admm.h"
#include "mm/solve_paths.h"
#include "mm/surrogate.h"
#include "sdprl/error.h"
#include "sdprl/loss_check.h"
#include "smooth/lbfgs.h"

namespace sdprl {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

// The l1 loss of the warm start (the framework knows no loss plugin by name; this one is the
// mathematics of the convex problem, not a plugin).
class L1 final : public Loss {
 public:
  std::string name() const override { return "l1 (warm start)"; }
  double value(double a) const override { return a; }
  double derivative(double) const override { return 1.0; }
};

}  // namespace

namespace {

// The iteration table on stderr (SolverOptions::verbose, print_every).
class IterationLog {
 public:
  IterationLog(const SolverOptions& options, const Loss& loss) : verbose_(options.verbose), every_(options.print_every), loss_(loss) {}

  // The header, once. It shows the rho used: with the automatic rho it waits for the end of the
  // first MM step, which fixes it (or for a refused first step, whose line it heads).
  void header(const Summary& s) {
    if (verbose_ && !header_printed_)
      std::fprintf(stderr,
                   "-------------------------------------------------------------------------------\n"
                   "  sdprl: SDP-RL, MM + ADMM (docs/method.md)\n"
                   "  n = %ld, rank = %ld, terms = %ld (split terms %ld), loss = %s\n"
                   "  lambda = %.3g, gamma = %.3g, rho = %.3g\n"
                   "-------------------------------------------------------------------------------\n"
                   " iter    objective   rel.change   admm        gap      eps_k      time\n",
                   static_cast<long>(s.n), static_cast<long>(s.rank), static_cast<long>(s.terms),
                   static_cast<long>(s.split_terms), loss_.name().c_str(), s.weights.lambda, s.weights.gamma,
                   s.rho);
    header_printed_ = true;
  }

  // An accepted MM step (the first and every print_every-th).
  void step(const Summary& s, const TraceRow& row) {
    header(s);
    if (verbose_ && (row.mm_iteration == 1 || row.mm_iteration % every_ == 0)) print(row);
  }

  void refused(const Summary& s, int k, double f_next, double surrogate_value, double tau, double raised) {
    header(s);
    if (verbose_)
      std::fprintf(stderr, "%5d step refused: F(X_k + Xt) = %.6e > H(Xt) = %.6e; curvature scale %g -> %g\n", k,
                   f_next, surrogate_value, tau, raised);
  }

  // The last step's row when print_every skipped it, and the summary line.
  void finish(const Summary& s) {
    if (!verbose_) return;
    if (!s.trace.empty() && s.trace.back().mm_iteration % every_ != 0 && s.trace.back().mm_iteration != 1)
      print(s.trace.back());
    std::fprintf(stderr, "%s\n", s.brief_report().c_str());
  }

 private:
  static void print(const TraceRow& t) {
    std::fprintf(stderr, "%5d  %11.6e  %10.3e  %5d  %10.3e  %9.2e  %7.2fs\n", t.mm_iteration, t.objective,
                 t.relative_change, t.admm_iterations, t.gap, t.tolerance, t.time);
  }
  bool verbose_;
  int every_;
  const Loss& loss_;
  bool header_printed_ = false;
};

// The MM loop's own variables besides X, the surrogate and the ADMM: what a checkpoint saves.
struct LoopVariables {
  int first_step = 1;
  double f = 0.0;            // F(X_k)
  double c0 = 0.0;           // eps_k = max(eps_min, c0 / k^b0)
  int small_steps = 0;       // consecutive steps with a relative change below the tolerance
  double time_before = 0.0;  // seconds of MM loop before a resume, so that trace times continue
};

// Resume validation: throws Error unless `start` belongs to this problem. `f` is F at start->X
// here. The same model, data and plugins give the same F(X_k) up to rounding (bit for bit on the
// same machine and thread count); anything else means the problem is not the saved one.
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

// The counters, the trace and the ADMM warm start of a validated saved state.
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
  loop.first_step = start.k + 1;
  loop.time_before = start.summary.solve_time;
}

// Takes the checkpoints of one solve: every SolverOptions::checkpoint_interval seconds, and when
// an interrupt stops the run.
class Checkpointer {
 public:
  Checkpointer(const CheckpointCallback& callback, const SolverOptions& options, Clock::time_point t_solve,
               double time_before)
      : callback_(callback), options_(options), t_solve_(t_solve), time_before_(time_before), last_(Clock::now()) {}

  bool enabled() const { return static_cast<bool>(callback_); }
  // A periodic checkpoint is due at the end of MM step k (not after the last one).
  bool due(int k) const {
    return callback_ && options_.checkpoint_interval > 0.0 && k < options_.max_mm_iterations &&
           seconds_since(last_) >= options_.checkpoint_interval;
  }

  // The state at the end of MM step k: X_k and F(X_k), the loop's variables, the surrogate's
  // curvature scale, the ADMM's warm start and the Xt-step's own.
  void take(int k, const Matrix& X, const LoopVariables& loop, const Surrogate& surrogate, const Admm& admm,
            AdmmState& state, const Summary& summary) {
    SolverState saved;
    saved.k = k;
    saved.X = X;
    saved.objective = loop.f;
    saved.c0 = loop.c0;
    saved.rho = summary.rho;
    saved.small_steps = loop.small_steps;
    saved.curvature_scale = surrogate.curvature_scale();
    saved.xt_step_state = admm.save_warm_start(state);
    // The ADMM vectors are lent, not copied (m = 10^5: 23M doubles), and given back even when
    // the callback throws. A packed state is saved packed (at saved.rho, the ADMM's rho): unpacked
    // and packed again, (nu, e) would come back different in the last bits.
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

 private:
  const CheckpointCallback& callback_;
  const SolverOptions& options_;
  Clock::time_point t_solve_;
  double time_before_;
  Clock::time_point last_;
};

// Step acceptance: what becomes of MM step k from F(X_k) = f to F(X_k + Xt) = f_next, with
// H(Xt) = surrogate_value, the surrogate's curvature scale tau, the tolerance eps_k and the ADMM's
// gap.
struct StepVerdict {
  enum Kind { kAccept, kRefuse, kFault } kind = kAccept;
  bool violation = false;  // a rise beyond eps_k within the ADMM's gap (Summary::monotonicity_violations)
  std::string message;     // kFault
};

StepVerdict judge_step(int k, double f, double f_next, double surrogate_value, double tau, double eps, double gap) {
  StepVerdict v;
  // With tau < 1 (SolverOptions::curvature_scale) H majorises F only where checked. Accepting
  // the step when F(X_k + Xt) <= H(Xt) keeps the descent argument below (H(Xt) <= F(X_k) + gap);
  // otherwise the step is taken again from X_k with tau doubled, which ends at tau = 1, where H
  // is the majoriser and every step passes. Nothing of the refused step is kept but the ADMM's
  // state, a warm start (the same multipliers' terms at another X_k).
  if (tau < 1.0 && f_next > surrogate_value + 1e-12 * std::max(std::abs(f), std::abs(f_next))) {
    v.kind = StepVerdict::kRefuse;
    return v;
  }
  // Check 3 of docs/method.md: an inexact MM step may rise by at most eps_k. The ADMM's gap bounds
  // the rise: H(Xt) <= min H + gap <= H(0) + gap = F(X_k) + gap and F(X_k + Xt) <= H(Xt). So with
  // gap <= eps_k (the ADMM met its tolerance) a rise beyond eps_k, and after an ADMM stopped by
  // its iteration cap a rise beyond its gap, cannot come from inexactness: the surrogate does not
  // majorise F (a loss, terms or regularizer whose values and derivatives disagree). Such a step
  // is refused and the run stops on the last good iterate. 1e-12 |F| allows for the rounding of
  // F's sums, which eps_k (>= min_tolerance, absolute) may not cover when |F| is large.
  if (f_next > f + eps) {
    v.violation = true;
    const double bound = std::max(eps, gap) + 1e-12 * std::max(std::abs(f), std::abs(f_next));
    if (f_next > f + bound) {
      v.kind = StepVerdict::kFault;
      v.message = "the objective rose at MM iteration " + std::to_string(k) + " from " + fmt("%.17g", f) + " to " +
                  fmt("%.17g", f_next) + " (by " + fmt("%.3g", f_next - f) + "), more than eps_k = " +
                  fmt("%.3g", eps) + " (ADMM gap " + fmt("%.3g", gap) +
                  ") allows: the surrogate does not majorise F (a loss, terms or regularizer plugin whose "
                  "values and derivatives disagree?); the factor is the last good iterate";
    }
  }
  return v;
}

// The MM loop, from the initialised X (start == nullptr; `summary` holds the sizes and the rho
// chosen so far) or from a saved state (sdprl/solver.h: SolverState).
Summary solve_mm(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                 const SolverOptions& options, Matrix& X, const IterationCallback& callback,
                 const CheckpointCallback& checkpoint, Summary summary, const SolverState* start,
                 const xt_step::Paths& paths) {
  const auto t_solve = Clock::now();
  const Index n = summary.n, rank = summary.rank;
  Surrogate surrogate(model, loss, weights, options.admm.split, rank);
  AdmmState state;
  state.keep_packed = true;  // the fused row pass's packed (nu, e) stays packed between MM steps
  summary.split_terms = surrogate.split_terms();
  // tau of SolverOptions::curvature_scale, as refused steps have raised it so far.
  const double tau_start = start ? start->curvature_scale : options.curvature_scale;
  if (!(tau_start > 0.0 && tau_start <= 1.0))
    throw Error("solver", "the saved curvature scale " + fmt("%.17g", tau_start) + " is not in (0, 1]");
  surrogate.set_curvature_scale(tau_start);
  summary.curvature_scale = tau_start;

  surrogate.update(X);
  LoopVariables loop;
  loop.f = surrogate.center_objective();
  if (start) {
    validate_resume(*start, model, loop.f, n, rank, summary.split_terms);
    resume_from(*start, summary, state, loop);
  } else {
    summary.initial_objective = summary.final_objective = loop.f;
    if (!std::isfinite(loop.f)) {
      summary.status = SolverStatus::kNumericalError;
      summary.message = "the objective at the starting point is not finite";
      return summary;
    }
    // c0 scales the ADMM tolerance schedule with the objective (docs/method.md section 3: F(X_1)).
    // With an indefinite A, F's parts can cancel: sparse PCA's F is sum_ij |Z_ij| - (gamma/2)
    // tr(X^T Sigma X), and |F| at the PCA start was 10x smaller than at the random start (22
    // against 220), so the PCA start's ADMM ran to a 10x tighter tolerance (8.6 against 3.8
    // iterations per MM step), and an F(X_0) near 0 would send every ADMM to its iteration cap.
    // The size of F's parts is F itself whenever A is PSD, and does not cancel when it is not.
    loop.c0 = options.admm.c0 > 0.0 ? options.admm.c0 : std::max(surrogate.objective_magnitude(), 1e-12);
  }
  Admm admm(surrogate, summary.rho, options.admm, paths);
  if (start) admm.restore_warm_start(start->xt_step_state, surrogate, state);
  IterationLog log(options, loss);
  if (options.admm.rho > 0.0 || start) log.header(summary);
  Checkpointer checkpointer(checkpoint, options, t_solve, loop.time_before);

  Matrix X_next;
  summary.status = SolverStatus::kIterationLimit;
  // True when the rebuild of the previous step also prepared this step's ADMM and ran its first
  // iteration (Admm::update_and_iterate: one pass over the rows instead of two).
  bool primed = false;
  bool rebuild_preconditioner = false;  // after a refused step: B changed with tau
  for (int k = loop.first_step; k <= options.max_mm_iterations; ++k) {
    const double eps =
        std::max(options.admm.min_tolerance, loop.c0 / std::pow(static_cast<double>(k), options.admm.b0));
    if (!primed) {
      admm.prepare(rebuild_preconditioner);
      rebuild_preconditioner = false;
      if (k == 1 && options.admm.rho == 0.0 && admm.balanced_rho() > summary.rho) {
        // Scale-aware automatic rho (docs/method.md section 3 asks for one): when tr(2B)/tr(P*P) exceeds
        // rho_scale / phi'(0), the P*P part of the Xt-step is too small to matter and the ADMM crawls
        // (sparse PCA, tr Z = 1, n = 800: 273 ADMM iterations per MM step at rho = 10, 3 at the
        // balanced rho 1600). Fixed after the first MM step, so that the warm start stays consistent.
        summary.rho = admm.balanced_rho();
        admm.set_rho(summary.rho);
      }
      // Warm start (docs/method.md section 3): keep nu and e from the previous MM step. The ADMM's
      // first Xt-step does not read Xt, so the direct step starts it from 0; the coupled step's
      // CG starts from the previous MM step's Xt (docs/method.md: "CG warm-started from the previous
      // Xt"; the steps of consecutive MM iterations are alike): 28% fewer CG iterations at
      // n = 100, rank 60, l1 (docs/performance.md).
      admm.reset_if_needed(state);
      if (admm.direct()) state.D.setZero();
    }
    const int inner = admm.run(state, eps);
    summary.admm_iterations += inner;
    summary.cg_iterations += state.cg_iterations;

    X_next = X + state.step;  // under a constraint, the feasible Y of the ADMM
    const double gap = state.gap;  // this step's: a fused rebuild moves the state on
    const double surrogate_value = state.primal;  // H(Xt) (at the feasible Y under a constraint)
    // A checkpoint must hold the state between two MM steps: no fused rebuild before one (nor
    // when an interrupt, which takes one, is already known).
    const bool checkpoint_due = checkpointer.due(k);
    const bool interrupting = options.interrupt && options.interrupt->load();
    primed = false;
    // (update_and_iterate() itself falls back to the plain update where the fusion does not apply.)
    if (k < options.max_mm_iterations && !checkpoint_due && !interrupting)
      primed = admm.update_and_iterate(surrogate, X_next, state);
    else
      surrogate.update(X_next);
    const double f = loop.f, f_next = surrogate.center_objective();
    TraceRow row;
    row.mm_iteration = k;
    row.objective = f_next;
    row.relative_change = std::abs(f - f_next) / std::max(std::abs(f), 1e-300);
    row.admm_iterations = inner;
    row.gap = gap;
    row.tolerance = eps;
    row.time = loop.time_before + seconds_since(t_solve);
    if (!std::isfinite(f_next) || !X_next.allFinite()) {
      summary.status = SolverStatus::kNumericalError;
      summary.message = "non-finite objective at MM iteration " + std::to_string(k) +
                        "; the factor is the last finite iterate";
      surrogate.update(X);
      break;
    }
    const double tau = surrogate.curvature_scale();
    const StepVerdict verdict = judge_step(k, f, f_next, surrogate_value, tau, eps, gap);
    if (verdict.kind == StepVerdict::kRefuse) {
      ++summary.rejected_steps;
      const double raised = std::min(1.0, 2.0 * tau);
      log.refused(summary, k, f_next, surrogate_value, tau, raised);
      surrogate.set_curvature_scale(raised);
      surrogate.update(X);
      primed = false;
      rebuild_preconditioner = true;
      --k;  // the same step again, with the same eps_k
      continue;
    }
    if (verdict.violation) ++summary.monotonicity_violations;
    if (verdict.kind == StepVerdict::kFault) {
      summary.status = SolverStatus::kNumericalError;
      summary.message = verdict.message;
      surrogate.update(X);
      break;
    }
    X.swap(X_next);
    loop.f = f_next;
    summary.mm_iterations = k;
    summary.final_objective = f_next;
    summary.trace.push_back(row);
    log.step(summary, row);

    // The callback sees every MM iterate, the last one included.
    if (callback && !callback(row, X)) {
      summary.status = SolverStatus::kInterrupted;
      summary.message = "stopped by the caller";
      break;
    }
    loop.small_steps = row.relative_change < options.relative_tolerance ? loop.small_steps + 1 : 0;
    if (loop.small_steps >= options.consecutive && k >= options.min_mm_iterations) {
      summary.status = SolverStatus::kConverged;
      break;
    }
    // An interrupt that came during a fused rebuild finds the next step's first ADMM iteration
    // done: with a checkpoint to take, that step is finished first (unfused, as interrupting is
    // then set), so that the checkpoint holds a state between two steps.
    if (options.interrupt && options.interrupt->load() && !(primed && checkpointer.enabled())) {
      summary.status = SolverStatus::kInterrupted;
      summary.message = "interrupted";
      // Always: an interrupted run must be resumable, whatever the checkpoint interval.
      if (checkpointer.enabled()) checkpointer.take(k, X, loop, surrogate, admm, state, summary);
      break;
    }
    if (options.time_limit > 0.0 && row.time >= options.time_limit) {
      summary.status = SolverStatus::kTimeLimit;
      break;
    }
    // Here the step's state is complete (small_steps included) and the loop goes on: a
    // checkpoint taken now continues with step k + 1 exactly as this run does.
    if (checkpoint_due) checkpointer.take(k, X, loop, surrogate, admm, state, summary);
  }
  summary.solve_time = loop.time_before + seconds_since(t_solve);
  summary.curvature_scale = surrogate.curvature_scale();
  if (model.evaluator) summary.metrics = model.evaluator->evaluate(X);
  log.finish(summary);
  return summary;
}

}  // namespace

namespace {

// Each option enum's names: to_string gives a value's first name, from_string takes any (aliases
// after the first).
template <class E>
struct Name {
  E value;
  const char* text;
};
constexpr Name<InitKind> kInitNames[] = {{InitKind::kSpectral, "spectral"},
                                         {InitKind::kGaussian, "gaussian"},
                                         {InitKind::kGiven, "given"},
                                         {InitKind::kGiven, "file"},
                                         {InitKind::kModel, "model"}};
constexpr Name<SplitMode> kSplitNames[] = {{SplitMode::kRowSplit, "row-split"}, {SplitMode::kCoupled, "coupled"}};
constexpr Name<CgPreconditioner> kPreconditionerNames[] = {{CgPreconditioner::kAuto, "auto"},
                                                           {CgPreconditioner::kBlocks, "blocks"},
                                                           {CgPreconditioner::kRowScaled, "row-scaled"}};
constexpr Name<SolverType> kSolverNames[] = {
    {SolverType::kAuto, "auto"}, {SolverType::kMm, "mm"}, {SolverType::kLbfgs, "lbfgs"}};
constexpr Name<SolverStatus> kStatusNames[] = {{SolverStatus::kConverged, "converged"},
                                               {SolverStatus::kIterationLimit, "iteration_limit"},
                                               {SolverStatus::kTimeLimit, "time_limit"},
                                               {SolverStatus::kNumericalError, "numerical_error"},
                                               {SolverStatus::kInterrupted, "interrupted"}};

template <class E, std::size_t N>
const char* name_of(const Name<E> (&names)[N], E value) {
  for (const Name<E>& n : names)
    if (n.value == value) return n.text;
  return "?";
}

template <class E, std::size_t N>
bool parse_name(const Name<E> (&names)[N], const std::string& text, E* value) {
  for (const Name<E>& n : names) {
    if (text == n.text) {
      *value = n.value;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* to_string(InitKind kind) { return name_of(kInitNames, kind); }
bool from_string(const std::string& text, InitKind* kind) { return parse_name(kInitNames, text, kind); }
bool from_string(const std::string& text, SplitMode* mode) { return parse_name(kSplitNames, text, mode); }
const char* to_string(CgPreconditioner p) { return name_of(kPreconditionerNames, p); }
bool from_string(const std::string& text, CgPreconditioner* p) { return parse_name(kPreconditionerNames, text, p); }
const char* to_string(SolverType type) { return name_of(kSolverNames, type); }
bool from_string(const std::string& text, SolverType* type) { return parse_name(kSolverNames, text, type); }
const char* to_string(SolverStatus status) { return name_of(kStatusNames, status); }

std::string Summary::brief_report() const {
  std::ostringstream os;
  os << "sdprl: " << to_string(status) << " after " << mm_iterations << " MM iterations ("
     << admm_iterations << " ADMM), objective " << fmt("%.6e", final_objective) << " (from "
     << fmt("%.6e", initial_objective) << "), " << fmt("%.3f", init_time + solve_time) << " s";
  if (rejected_steps > 0)
    os << ", " << rejected_steps << " steps refused (curvature scale now " << fmt("%g", curvature_scale) << ")";
  for (const Metric& m : metrics) os << ", " << m.name << " = " << fmt("%.6g", m.value);
  if (!message.empty()) os << " [" << message << "]";
  return os.str();
}

double objective(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                 const Matrix& X) {
  Vector values, phi, dphi;
  model.terms->evaluate(X, values);
  loss.evaluate((values - model.terms->targets()).cwiseAbs(), phi, dphi);
  double f = phi.sum() + 0.5 * weights.lambda * X.squaredNorm();
  if (model.quadratic && weights.gamma != 0.0) {
    Matrix AX;
    model.quadratic->apply(X, AX);
    f += 0.5 * weights.gamma * AX.cwiseProduct(X).sum();
  }
  return f;
}

int set_threads(int threads) {
#ifdef _OPENMP
  // OpenMP's own default (OMP_NUM_THREADS, else every core), read before anything changes it.
  static const int default_threads = omp_get_max_threads();
  omp_set_num_threads(threads > 0 ? threads : default_threads);
  return omp_get_max_threads();
#else
  (void)threads;
  return 1;
#endif
}

SolverType resolve_solver_type(const Loss& loss, SolverType requested) {
  if (requested != SolverType::kAuto) return requested;
  return loss.derivative(0.0) == 0.0 ? SolverType::kLbfgs : SolverType::kMm;
}

double automatic_rho(const Loss& loss, const AdmmOptions& options) {
  if (options.rho > 0.0) return options.rho;
  // rho ~ 10 / phi'(0) worked across losses in the prototype (l1: 10, leaky-MCP theta = 5: 2);
  // the half-term scale w = phi'(|r|) <= phi'(0) sets the size of P, and rho balances it.
  const double slope = loss.derivative(0.0);
  return options.rho_scale / (std::isfinite(slope) && slope > 0.0 ? slope : 1.0);
}

Summary solve(const Model& model, const Loss& loss, const RegularizationWeights& weights,
              const SolverOptions& options, Matrix& X, const IterationCallback& callback,
              const SolverState* start, const CheckpointCallback& checkpoint) {
  return detail::solve(model, loss, weights, options, X, xt_step::Paths{}, callback, start, checkpoint);
}

Summary detail::solve(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                      const SolverOptions& options, Matrix& X, const xt_step::Paths& paths,
                      const IterationCallback& callback, const SolverState* start,
                      const CheckpointCallback& checkpoint) {
  const auto t0 = Clock::now();
  std::string problem;
  if (!options.is_valid(&problem)) throw Error("solver", problem);
  set_threads(options.threads);
  if (!model.terms) throw Error("model", "the application built no terms");
  // The algorithm: MM needs the contract of Assumption 3; a loss differentiable at 0 (phi'(0) = 0,
  // e.g. the square loss) goes to L-BFGS instead.
  const SolverType type = resolve_solver_type(loss, options.type);
  const bool smooth = loss.derivative(0.0) == 0.0;
  if (type == SolverType::kMm) check_loss_for_mm(loss);
  if (type == SolverType::kLbfgs && model.constraint)
    throw Error("solver.type", "the L-BFGS solver does not handle the constraint '" + model.constraint->name() +
                                   "' of this model; use a loss for the MM solver");
  if (type == SolverType::kLbfgs && !smooth)
    throw Error("solver.type", "L-BFGS needs a loss differentiable at 0 (phi'(0) = 0); loss '" + loss.name() +
                                   "' has phi'(0) = " + std::to_string(loss.derivative(0.0)) + ": use type = \"mm\"");
  if (!(weights.lambda >= 0.0)) throw Error("regularizer.lambda", "must be >= 0");
  if (!(weights.gamma >= 0.0)) throw Error("regularizer.gamma", "must be >= 0");
  const Index n = model.terms->dimension();
  const Index rank = options.rank > 0 ? options.rank : model.default_rank;
  if (rank < 1) throw Error("solver.rank", "no rank given and the model has no default rank");
  if (rank > n)
    throw Error("solver.rank", "rank " + std::to_string(rank) + " exceeds the dimension n = " + std::to_string(n));

  Summary summary;
  summary.n = n;
  summary.rank = rank;
  summary.terms = model.terms->size();
  summary.weights = weights;
  summary.rho = automatic_rho(loss, options.admm);
  if (start) {
    // A resumed run (sdprl run --resume): X_k, the counters and the ADMM warm start come from the
    // state; nothing of the start (initialisation, l1 warm start) is repeated.
    if (type != SolverType::kMm) throw Error("solver.type", "only the MM solver can continue from a saved state");
    if (start->X.rows() != n || start->X.cols() != rank)
      throw Error("solver", "the saved state's X is " + std::to_string(start->X.rows()) + " x " +
                                std::to_string(start->X.cols()) + ", the model needs " + std::to_string(n) + " x " +
                                std::to_string(rank));
    if (start->k < 1) throw Error("solver", "the saved state has no MM step");
    X = start->X;
    return solve_mm(model, loss, weights, options, X, callback, checkpoint, summary, start, paths);
  }

  initialize(model, options, rank, X);
  // Every iterate lies in K: the start is projected onto it.
  if (model.constraint) model.constraint->project(X);
  int warm_iterations = 0;
  if (options.l1_warm_start && type == SolverType::kMm) {
    // The l1 problem from the same start; its solution is the start of the requested loss.
    const L1 l1;
    SolverOptions warm = options;
    warm.l1_warm_start = false;
    warm.init = InitKind::kGiven;
    warm.type = SolverType::kMm;
    const Summary ws = detail::solve(model, l1, weights, warm, X, paths);
    if (!ws.usable()) return ws;
    warm_iterations = ws.mm_iterations;
  }
  summary.init_time = seconds_since(t0);
  summary.warm_start_iterations = warm_iterations;
  if (type == SolverType::kLbfgs) {
    Summary smooth_summary = smooth::solve_lbfgs(model, loss, weights, options, X, callback);
    smooth_summary.init_time = summary.init_time;
    return smooth_summary;
  }
  return solve_mm(model, loss, weights, options, X, callback, checkpoint, summary, nullptr, paths);
}

}  // namespace sdprl
