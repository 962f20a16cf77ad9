// solve(): the checks, the start (initialisation, the l1 warm start) and the choice between the MM
// loop (mm/mm_loop.h; docs/method.md sections 2-3) and L-BFGS; the option names and the Summary.
#include "sdprl/solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "mm/certificate.h"
#include "mm/loop_support.h"
#include "mm/mm_loop.h"
#include "mm/solve_checks.h"
#include "mm/solve_paths.h"
#include "parallel/processes.h"
#include "sdp/augmented_lagrangian.h"
#include "sdp/interior_point.h"
#include "sdp/spheres.h"
#include "sdprl/error.h"
#include "sdprl/l1_loss.h"
#include "sdprl/loss_check.h"
#include "smooth/lbfgs.h"

namespace sdprl {
namespace {

using mm::Clock;
using mm::fmt;
using mm::seconds_since;

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
constexpr Name<SplitMode> kSplitNames[] = {
    {SplitMode::kRowSplit, "row-split"}, {SplitMode::kCoupled, "coupled"}, {SplitMode::kAuto, "auto"},
    {SplitMode::kExactFinish, "exact-finish"}};
constexpr Name<CgPreconditioner> kPreconditionerNames[] = {{CgPreconditioner::kAuto, "auto"},
                                                           {CgPreconditioner::kBlocks, "blocks"},
                                                           {CgPreconditioner::kRowScaled, "row-scaled"}};
constexpr Name<CoupledStep> kCoupledStepNames[] = {
    {CoupledStep::kAuto, "auto"}, {CoupledStep::kCg, "cg"}, {CoupledStep::kLinearized, "linearized"},
    {CoupledStep::kDualCoordinate, "dual-cd"}};
constexpr Name<SolverType> kSolverNames[] = {
    {SolverType::kAuto, "auto"}, {SolverType::kMm, "mm"}, {SolverType::kLbfgs, "lbfgs"},
    {SolverType::kSpheres, "spheres"}, {SolverType::kAugmentedLagrangian, "augmented-lagrangian"},
    {SolverType::kInteriorPoint, "interior-point"}};
constexpr Name<SolverStatus> kStatusNames[] = {{SolverStatus::kConverged, "converged"},
                                               {SolverStatus::kIterationLimit, "iteration_limit"},
                                               {SolverStatus::kTimeLimit, "time_limit"},
                                               {SolverStatus::kNumericalError, "numerical_error"},
                                               {SolverStatus::kInterrupted, "interrupted"},
                                               {SolverStatus::kUnbounded, "unbounded"},
                                               {SolverStatus::kInfeasible, "infeasible"},
                                               {SolverStatus::kOptimal, "optimal"}};

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
const char* to_string(SplitMode mode) { return name_of(kSplitNames, mode); }
bool from_string(const std::string& text, SplitMode* mode) { return parse_name(kSplitNames, text, mode); }
const char* to_string(CgPreconditioner p) { return name_of(kPreconditionerNames, p); }
bool from_string(const std::string& text, CgPreconditioner* p) { return parse_name(kPreconditionerNames, text, p); }
const char* to_string(CoupledStep step) { return name_of(kCoupledStepNames, step); }
bool from_string(const std::string& text, CoupledStep* step) { return parse_name(kCoupledStepNames, text, step); }
const char* to_string(SolverType type) { return name_of(kSolverNames, type); }
bool from_string(const std::string& text, SolverType* type) { return parse_name(kSolverNames, text, type); }
const char* to_string(SolverStatus status) { return name_of(kStatusNames, status); }

std::string Summary::brief_report() const {
  std::ostringstream os;
  os << "sdprl: " << to_string(status) << " after " << mm_iterations << " MM iterations ("
     << admm_iterations << " ADMM), objective " << fmt("%.6e", final_objective) << " (from "
     << fmt("%.6e", initial_objective) << "), " << fmt("%.3f", init_time + solve_time) << " s";
  if (!std::isnan(stationarity)) {
    os << ", stationarity " << fmt("%.1e", stationarity);
    if (stationarity_lower > 0.0) os << " (at least " << fmt("%.1e", stationarity_lower) << ")";
  }
  if (!rank_raises.empty()) os << ", rank " << rank_raises.front().from << " -> " << rank;
  if (certificate.computed) os << ", " << certificate.brief();
  if (polish.kept) os << " after a polish (" << polish.newton_steps << " Newton steps)";
  if (rejected_steps > 0)
    os << ", " << rejected_steps << " steps refused (curvature scale now " << fmt("%g", curvature_scale) << ")";
  if (undone_tau_trials > 0) os << ", " << undone_tau_trials << " halvings of tau undone";
  if (overrelaxed_steps > 0) os << ", " << overrelaxed_steps << " steps over-relaxed";
  for (const Metric& m : metrics) os << ", " << m.name << " = " << fmt("%.6g", m.value);
  if (!message.empty()) os << " [" << message << "]";
  return os.str();
}

std::string Certificate::brief() const {
  if (!computed) return "no certificate: " + note;
  const std::string what = surrogate ? " (of the weighted-l1 surrogate)" : "";
  if (optimal) return "certified optimal" + what + " (gap " + fmt("%.1e", relative_gap) + ")";
  return "not certified" + what + ": relative gap " + fmt("%.1e", relative_gap) + ", lambda_min(S) = " +
         fmt("%.3e", lambda_min);
}

double objective(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                 const Matrix& X) {
  Vector residuals, weights_scratch;
  return mm::objective_value(model, loss, weights, X, residuals, weights_scratch);
}

int set_threads(int threads) {
#ifdef _OPENMP
  // OpenMP's own default (OMP_NUM_THREADS, else every core), read before anything changes it.
  // Under mpirun the processes on one machine share its cores: where the launcher left each of
  // them every core (no binding, as with --oversubscribe) and OMP_NUM_THREADS is unset, each takes
  // its share, so that P processes do not run P times as many threads as there are cores.
  static const int default_threads = [] {
    const int all = omp_get_max_threads(), local = processes::local_count();
    if (local > 1 && !std::getenv("OMP_NUM_THREADS") && all >= omp_get_num_procs()) return std::max(1, all / local);
    return all;
  }();
  omp_set_num_threads(threads > 0 ? threads : default_threads);
  // Eigen's own threads off: its parallel matrix products choose their blocking by the thread
  // count, which changed cmvu_usps's iterates in the last bits from MM step 43 on between 1 and 2
  // threads (and so between 1 and 2 MPI processes). The row loops carry the parallelism; its
  // time did not change (cmvu_usps 0.77 s, spca_colon 4.6-4.8 s either way, 2 runs each).
  Eigen::setNbThreads(1);
  return omp_get_max_threads();
#else
  (void)threads;
  return 1;
#endif
}

namespace mm {

std::string lbfgs_loss_problem(const Loss& loss) {
  const double slope = loss.derivative(0.0);
  if (slope == 0.0) return "";
  return "L-BFGS needs a loss differentiable at 0 (phi'(0) = 0); loss '" + loss.name() + "' has phi'(0) = " +
         fmt("%g", slope) + ": use type = \"mm\"";
}

std::string model_start_problem(const Model& model) {
  if (model.start) return "";
  return "init = \"model\": the application '" + model.application +
         "' has no starting point of its own; use \"spectral\" or \"gaussian\"";
}

}  // namespace mm

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

namespace {

// SolverOptions::rank = kAutoRank made concrete (sdprl/solver.h): rank and max_rank for this model
// and loss; other options as given. `given` is the start's column count with init = "file".
SolverOptions resolve_auto_rank(const Model& model, const Loss& loss, SolverOptions options, Index given) {
  if (options.rank != kAutoRank) return options;
  const Index n = model.terms->dimension();
  if (!mm::linear_loss(loss) || model.constraint || loss.derivative(0.0) == 0.0) {
    options.rank = 0;  // the model's default: no certificate to climb by
    return options;
  }
  options.rank = given > 0 ? given : std::min<Index>(2, n);
  if (options.max_rank == 0) {
    // Barvinok-Pataki: the SDP of section 7.3 with m terms (as m equality constraints with slacks)
    // has an optimum of rank r with r (r + 1) / 2 <= m.
    const double m = static_cast<double>(model.terms->size());
    const Index bound = static_cast<Index>(std::floor((std::sqrt(8.0 * m + 1.0) - 1.0) / 2.0));
    options.max_rank = std::clamp<Index>(bound, options.rank, n);
  }
  return options;
}

}  // namespace

Summary detail::solve(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                      const SolverOptions& requested, Matrix& X, const xt_step::Paths& paths,
                      const IterationCallback& callback, const SolverState* start,
                      const CheckpointCallback& checkpoint) {
  const auto t0 = Clock::now();
  std::string problem;
  if (!requested.is_valid(&problem)) throw Error("solver", problem);
  if (!model.terms) throw Error("model", "Model::terms is empty; every model needs its terms (sdprl/model.h)");
  const SolverOptions options =
      resolve_auto_rank(model, loss, requested, requested.init == InitKind::kGiven ? X.cols() : 0);
  if (!model.terms) throw Error("model", "Model::terms is empty; every model needs its terms (sdprl/model.h)");
  set_threads(options.threads);
  if (!model.terms) throw Error("model", "the application built no terms");
  // The algorithm: MM needs the contract of Assumption 3; a loss differentiable at 0 (phi'(0) = 0,
  // e.g. the square loss) goes to L-BFGS instead.
  const SolverType type = resolve_solver_type(loss, options.type);
  if (type == SolverType::kSpheres) {
    if (start) throw Error("solver.type", "\"spheres\" keeps no state to continue from; run it afresh");
    // The penalty it reports is its own choice (sdp/spheres.h): weights is the path's first.
    RegularizationWeights chosen = weights;
    return sdp::solve_on_spheres(model, loss, chosen, options, X, callback);
  }
  if (type == SolverType::kAugmentedLagrangian) {
    if (start) throw Error("solver.type", "\"augmented-lagrangian\" keeps no state to continue from; run it afresh");
    RegularizationWeights chosen = weights;  // its penalty is its own choice (sdp/augmented_lagrangian.h)
    return sdp::solve_augmented_lagrangian(model, loss, chosen, options, X, callback);
  }
  if (type == SolverType::kInteriorPoint) {
    if (start) throw Error("solver.type", "\"interior-point\" keeps no state to continue from; run it afresh");
    RegularizationWeights chosen = weights;  // its penalty is its own choice (sdp/interior_point.h)
    return sdp::solve_interior_point(model, loss, chosen, options, X, callback);
  }
  const bool smooth = loss.derivative(0.0) == 0.0;
  if (type == SolverType::kMm) check_loss_for_mm(loss);
  if (type == SolverType::kLbfgs && model.constraint)
    throw Error("solver.type", "the L-BFGS solver does not handle the constraint '" + model.constraint->name() +
                                   "' of this model; use a loss for the MM solver");
  if (type == SolverType::kLbfgs && !smooth) throw Error("solver.type", mm::lbfgs_loss_problem(loss));
  if (type == SolverType::kLbfgs) check_loss_for_lbfgs(loss);
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
    // The rank staircase (max_rank) may have raised the saved rank above the option's, and its
    // stairs drop columns that carry almost nothing, so it may be below it too.
    const Index top = std::max(rank, options.max_rank);
    const Index bottom = top > rank ? 1 : rank;
    if (start->X.rows() != n || start->X.cols() < bottom || start->X.cols() > top)
      throw Error("solver", "the saved state's X is " + std::to_string(start->X.rows()) + " x " +
                                std::to_string(start->X.cols()) + ", the model needs " + std::to_string(n) + " x " +
                                (top > rank ? std::to_string(bottom) + " to " + std::to_string(top)
                                            : std::to_string(rank)));
    summary.rank = start->X.cols();
    if (start->k < 1) throw Error("solver", "the saved state has no MM step");
    X = start->X;
    return mm::solve_mm(model, loss, weights, options, X, callback, checkpoint, summary, start, paths);
  }

  initialize(model, options, rank, X);
  // Every iterate lies in K: the start is projected onto it.
  if (model.constraint) model.constraint->project(X);
  int warm_iterations = 0;
  if (options.l1_warm_start && type == SolverType::kMm) {
    // The l1 problem from the same start; its solution is the start of the requested loss.
    const L1Loss l1("l1 (warm start)");
    SolverOptions warm = options;
    warm.l1_warm_start = false;
    warm.init = InitKind::kGiven;
    warm.type = SolverType::kMm;
    warm.polish = false;  // a start needs no certificate: the chosen loss moves on from it
    const Summary ws = detail::solve(model, l1, weights, warm, X, paths);
    if (!ws.usable()) return ws;
    warm_iterations = ws.mm_iterations;
    summary.rank = X.cols();  // the warm start's rank staircase
  }
  summary.init_time = seconds_since(t0);
  summary.warm_start_iterations = warm_iterations;
  if (type == SolverType::kLbfgs) {
    Summary smooth_summary = smooth::solve_lbfgs(model, loss, weights, options, X, callback);
    smooth_summary.init_time = summary.init_time;
    return smooth_summary;
  }
  return mm::solve_mm(model, loss, weights, options, X, callback, checkpoint, summary, nullptr, paths);
}

}  // namespace sdprl
