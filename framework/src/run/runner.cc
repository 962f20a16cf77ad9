// run_model(): the TOML-to-files pipeline behind `sdprl run` (see sdprl/runner.h).
#include "sdprl/runner.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <iomanip>
#include <limits>
#include <new>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "sdprl/application.h"
#include "sdprl/config.h"
#include "sdprl/error.h"
#include "sdprl/io/atomic_file.h"
#include "sdprl/io/matrix_market.h"
#include "sdprl/loss_check.h"
#include "sdprl/plugin_host.h"
#include "config/options_table.h"
#include "linalg/symmetric_eigen.h"
#include "mm/certificate.h"
#include "mm/loop_support.h"
#include "mm/polish.h"
#include "mm/solve_checks.h"
#include "parallel/processes.h"
#include "run/checkpoint.h"
#include "sdp/augmented_lagrangian.h"
#include "sdp/interior_point.h"
#include "sdp/spheres.h"

namespace sdprl {
namespace {

// The steps shared by run_model() and load_model(): the TOML with its overrides, the plugin host
// (--plugin-path, then [plugins] path) and the application named by model.type.
struct Setup {
  ConfigTable config;
  std::unique_ptr<PluginHost> host;
  ConfigTable model_table;
  std::string application;
};

Setup open_model(const RunRequest& req) {
  // Eigen's own threads off from the start, the model's build included (set_threads() in
  // mm/solver.cc says why): CMVU's kernel_top_eigenvalue differed in its last bits between 1 and 2
  // threads.
  Eigen::setNbThreads(1);
  Setup s;
  s.config = ConfigTable::parse_file(req.model_file);
  for (const auto& [key, value] : req.overrides) s.config.set(key, value);
  std::vector<std::filesystem::path> plugin_paths = req.plugin_paths;
  const ConfigTable plugins = s.config.table("plugins");
  if (plugins.contains("path")) {
    // [plugins] path = "dir" or ["dir", ...], relative to the model file.
    if (plugins.is_array("path")) {
      plugins.fail("path", "give one directory as a string (several: use SDPRL_PLUGIN_PATH)");
    }
    const std::filesystem::path path = *plugins.file("path");
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))  // as --plugin-path: a typo would search nothing
      plugins.fail("path", "'" + path.string() + "' does not exist (expected a directory of plugins or a plugin file)");
    plugin_paths.push_back(path);
  }
  s.host = std::make_unique<PluginHost>(plugin_paths);
  s.model_table = s.config.table("model");
  s.application = s.model_table.require_string("type");
  return s;
}

// [regularizer]: the lambda grid and gamma, with the model's defaults.
std::pair<std::vector<double>, double> read_regularizer(const ConfigTable& config, const Model& model) {
  const ConfigTable reg = config.table("regularizer");
  std::vector<double> lambdas = reg.numbers("lambda", {model.default_lambda}, NumberRule::non_negative());
  if (lambdas.empty()) reg.fail("lambda", "expected a number >= 0 or a non-empty array of them");
  // A value twice would be solved twice, and the grid's choice would not say which.
  for (std::size_t i = 0; i < lambdas.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (lambdas[i] == lambdas[j])
        reg.fail("lambda", "the grid holds " + mm::fmt("%g", lambdas[i]) + " twice (entries " + std::to_string(j + 1) +
                               " and " + std::to_string(i + 1) + "); expected distinct values");
  const double gamma = reg.number("gamma", model.default_gamma, NumberRule::non_negative());
  return {std::move(lambdas), gamma};
}

// Models whose terms are constraints (Model::infeasibility; docs/method.md section 9). With the
// l1 loss, F = sum_i |tr(Q_i Z) - t_i| + (gamma/2) <X, A X> is an exact penalty of the constrained
// problem only when 2 / gamma bounds its multipliers; above that F is unbounded below or its
// minimiser violates the constraints. So while the result `X` of the solve at `weights.gamma`
// (`trial.summary`) is unbounded or violates them by more than options.feasibility_tolerance,
// gamma falls tenfold and the model is solved again: from X when it is a result (the constraints
// it meets are kept), else from the start. At most kPenaltyReductions times, and never when the
// user set gamma (`adapt` false). A result still infeasible ends with status kInfeasible.
constexpr int kPenaltyReductions = 4;

using mm::constrained_answer;
using mm::ConstrainedAnswer;

// The polish (mm/polish.h) solved the KKT conditions of a guess and left terms on the box: for a
// model whose terms are all constraints, multipliers of at least 1 / gamma (docs/method.md
// section 9). A certified result needs no more.
bool penalty_not_exact(const Summary& s) {
  return s.usable() && s.polish.tried && s.polish.kkt_solved && s.polish.boxed > 0 && !s.certificate.optimal;
}

// An uncertified attempt this close to a certificate (certificate_distance below) is kept as the
// run's result should the methods after it end further away.
constexpr double kCloseEnough = 1e-3;

// How far a constrained answer is from a certificate: the larger of |relative gap| and dual
// infeasibility (infinite without a dual bound).
double certificate_distance(const ConstrainedAnswer& a) {
  const double d = std::max(std::abs(a.relative_gap), a.dual_infeasibility);
  return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
}

// A converged result of a model whose terms are constraints that its constrained answer does not
// prove optimal: the polish with every constraint fitted and unboxed multipliers (mm/polish.h,
// polish_constraints; docs/method.md section 9), kept when its point is feasible and its answer
// optimal or closer to a certificate. Where the SDP's multipliers exceed the penalty's box (hinf1:
// 2.7e4 against 2 / gamma = 1000) the penalised minimiser is off the SDP's optimum by what the
// violation buys; the KKT point is not.
void polish_constraints(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                        const SolverOptions& options, Matrix& X, LambdaTrial& trial, ConstrainedAnswer& answer) {
  Summary& s = trial.summary;
  if (answer.optimal || s.status != SolverStatus::kConverged || !options.polish || !mm::linear_loss(loss) ||
      trial.penalty_path.empty())
    return;
  mm::Polished p = mm::polish_constraints(model, loss.derivative(0.0), weights, X, s.final_objective, s.admm_iterations);
  if (!p.improved) return;
  const double infeasibility = model.infeasibility(p.X);
  if (!(infeasibility <= options.feasibility_tolerance)) return;
  const Certificate c = mm::certify(model, loss, weights, p.X, p.multipliers, 1, nullptr, /*boxed=*/false);
  const ConstrainedAnswer a = constrained_answer(model, weights, p.X, infeasibility, c, options.feasibility_tolerance);
  if (!(a.optimal || certificate_distance(a) < certificate_distance(answer))) return;
  X = std::move(p.X);
  answer = a;
  s.certificate = c;
  s.certificate.note = "of the constrained problem: the multipliers of the polish with every constraint fitted, "
                       "beyond the penalty's box";
  s.final_objective = p.objective;
  if (model.evaluator) s.metrics = model.evaluator->evaluate(X);
  s.polish = p.report;
  s.polish.kept = true;
  s.polish.note = "every constraint fitted, multipliers unboxed";
  trial.penalty_path.back().infeasibility = infeasibility;
}

void solve_penalty_path(const Model& model, const SolverOptions& options, bool adapt,
                        const Matrix& given_start, RegularizationWeights& weights, Matrix& X, LambdaTrial& trial,
                        const std::function<Summary(const RegularizationWeights&, const SolverOptions&, Matrix&)>&
                            solve_at) {
  const double tol = options.feasibility_tolerance;
  double earlier_time = 0.0;
  auto record = [&] {
    const Summary& s = trial.summary;
    const double infeasibility = s.usable() ? model.infeasibility(X) : std::nan("");
    trial.penalty_path.push_back({weights.gamma, s.status, s.mm_iterations, infeasibility, s.init_time + s.solve_time});
    return infeasibility;
  };
  double infeasibility = record();
  for (int reduction = 0; adapt && reduction < kPenaltyReductions; ++reduction) {
    const SolverStatus status = trial.summary.status;
    if (status == SolverStatus::kInterrupted || status == SolverStatus::kNumericalError ||
        status == SolverStatus::kTimeLimit)
      break;
    // Feasible, but the polish's KKT point puts constraint multipliers on the box |y| = 1 / gamma:
    // the penalty is not exact there, and the feasible point is not the constrained optimum
    // (gpp124-1 at gamma = 0.02: error 5.3e-6, dual infeasibility 1e-5; at 0.002 certified).
    const bool feasible = trial.summary.usable() && infeasibility <= tol;
    const ConstrainedAnswer before =
        feasible ? constrained_answer(model, weights, X, infeasibility, trial.summary.certificate, tol)
                 : ConstrainedAnswer();
    const bool inexact = feasible && penalty_not_exact(trial.summary) && !before.optimal;
    if (feasible && !inexact) break;
    // Each process has its own clock: they agree on the largest, so that all take the same path.
    const double spent = processes::largest(earlier_time + trial.summary.init_time + trial.summary.solve_time);
    SolverOptions o = options;
    if (options.time_limit > 0.0) {  // solver.time_limit bounds the whole path
      o.time_limit = options.time_limit - spent;
      if (!(o.time_limit > 0.0)) break;
    }
    earlier_time = spent;
    if (options.verbose) {
      // The solve's own last line said "unbounded ... lower gamma" or gave the violation: say
      // that the run is doing just that.
      const bool usable = trial.summary.usable();
      const std::string why =
          !usable ? "F is unbounded below"
          : infeasibility > tol
              ? "the result violates the constraints by " + mm::fmt("%.3g", infeasibility) + " (relative)"
              : "the polished KKT point puts " + std::to_string(trial.summary.polish.boxed) +
                    " constraint multiplier(s) on the penalty's bound, so the penalty is not exact";
      std::fprintf(stderr, "sdprl: gamma = %g: %s; solving again at gamma = %g from %s (docs/method.md section 9)\n",
                   weights.gamma, why.c_str(), weights.gamma / 10.0, usable ? "this result" : "the start");
    }
    const double previous_gamma = weights.gamma;
    weights.gamma /= 10.0;
    Matrix next = given_start;
    if (trial.summary.usable() && starting_factor_problem(model, X).empty()) {
      o.init = InitKind::kGiven;
      next = X;
    }
    Summary solved = solve_at(weights, o, next);
    // A feasible result is replaced only by a converged, feasible one that the constrained
    // answer judges closer to optimal (the larger of |gap| and dual infeasibility smaller):
    // hinf1's step from gamma = 0.002 (error 2.6e-4, converged) to 0.0002 stopped at the MM step
    // cap (exit 1), and qap5's ended converged but further from a certificate (gap 1.1e-2 and
    // dual infeasibility 4.3 against 3e-3 and 3.0).
    bool better = !inexact;
    if (inexact && solved.status == SolverStatus::kConverged) {
      const double next_infeasibility = model.infeasibility(next);
      const ConstrainedAnswer after =
          constrained_answer(model, weights, next, next_infeasibility, solved.certificate, tol);
      better = next_infeasibility <= tol && (after.optimal || certificate_distance(after) < certificate_distance(before));
    }
    if (!better) {
      // earlier_time holds the kept result's own time, which its summary adds again below.
      earlier_time += solved.init_time + solved.solve_time - (trial.summary.init_time + trial.summary.solve_time);
      if (options.verbose)
        std::fprintf(stderr, "sdprl: gamma = %g ended %s%s; the result at gamma = %g stands\n", weights.gamma,
                     to_string(solved.status),
                     solved.status == SolverStatus::kConverged ? " no closer to a certificate" : "", previous_gamma);
      weights.gamma = previous_gamma;
      break;
    }
    trial.summary = std::move(solved);
    X = std::move(next);
    infeasibility = record();
  }
  trial.summary.solve_time += earlier_time;
  if (trial.summary.status == SolverStatus::kUnbounded && trial.penalty_path.size() > 1) {
    // Along a ray that no constraint sees, F falls at every gamma > 0: the problem itself has no
    // lower bound (an SDPA problem whose dual is infeasible), not the penalty.
    std::ostringstream why;
    why << "; F was unbounded at every penalty tried (gamma = " << trial.penalty_path.front().gamma << " down to "
        << weights.gamma << "), so the problem itself is likely unbounded (SDPA: dual infeasible), or its "
        << "constraints' multipliers exceed 2 / gamma = " << 2.0 / weights.gamma
        << " (large data, e.g. an objective of 1e5 against constraints of 1: rescale it, or set a lower "
           "regularizer.gamma)";
    trial.summary.message += why.str();
  }
  if (!trial.summary.usable() || trial.summary.status == SolverStatus::kInterrupted || infeasibility <= tol) return;
  std::ostringstream why;
  why.precision(3);
  why << "the result violates the model's constraints by " << infeasibility
      << " (relative), more than feasibility_tolerance = " << tol << ", at gamma = " << weights.gamma;
  if (adapt)
    why << " after " << trial.penalty_path.size() << " penalties (each a tenth of the last): the run stopped before "
        << "the constraints were met, or the problem is infeasible";
  else
    why << " (set by [regularizer]): the l1 penalty is exact only when 2 / gamma bounds the constraints' "
           "multipliers; lower gamma, or leave it out and the run lowers it itself";
  trial.summary.status = SolverStatus::kInfeasible;
  trial.summary.message = why.str();
}

nlohmann::json number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

// Under several processes, a run whose steps exchanged no rows computed every part of its solve
// on every process (docs/method.md section 11 lists what is split): said, so that a user who
// expected a speed-up learns why there is none. Empty otherwise.
std::string whole_on_every_process() {
  if (!processes::distributed() || processes::traffic().bytes > 0) return "";
  return "each of the " + std::to_string(processes::count()) +
         " processes computed the whole solve: nothing of this model's path is split across processes "
         "(only the row-split Xt-step of entry and distance terms is; docs/method.md section 11)";
}

// `constrained`: the chosen result's answer to the constrained problem (models with
// Model::infeasibility only). `peak_memory_mib`: the largest peak resident memory of the run's
// processes.
nlohmann::json summary_json(const RunResult& r, const RunRequest& req, const Model& model, const Loss& loss,
                            const ConstrainedAnswer& constrained, double peak_memory_mib) {
  const Summary& s = r.summary;
  nlohmann::json j;
  j["status"] = to_string(s.status);
  j["solver"] = to_string(s.solver);
  j["message"] = s.message;
  j["model_file"] = req.model_file.string();
  j["application"] = r.application;
  nlohmann::json lp = nlohmann::json::object();
  for (const auto& [k, v] : loss.parameters()) lp[k] = number(v);
  j["loss"] = {{"name", r.loss}, {"parameters", lp}};
  for (const PluginInfo& p : r.plugins)
    j["plugins"][to_string(p.kind)] = {{"name", p.name}, {"version", p.version}, {"file", p.file.string()}};
  j["lambda"] = number(r.weights.lambda);
  j["gamma"] = number(r.weights.gamma);
  j["n"] = s.n;
  j["rank"] = s.rank;
  // Z's rank as sdpa_compare counts sdpa's (eigenvalues above 1e-6 of the largest): above the
  // optimum's rank the staircase's surplus columns shrink without vanishing (sdpa_compare's
  // n = 300: 154 columns, numerical rank 113, sdpa's 112).
  const Index numerical = linalg::numerical_rank(r.X);
  j["numerical_rank"] = numerical >= 0 ? nlohmann::json(numerical) : nlohmann::json();
  j["terms"] = s.terms;
  j["split_terms"] = s.split_terms;
  j["rho"] = number(s.rho);
  j["mm_iterations"] = s.mm_iterations;
  j["warm_start_iterations"] = s.warm_start_iterations;
  j["admm_iterations"] = s.admm_iterations;
  j["monotonicity_violations"] = s.monotonicity_violations;
  j["rejected_steps"] = s.rejected_steps;
  j["undone_tau_trials"] = s.undone_tau_trials;
  j["overrelaxed_steps"] = s.overrelaxed_steps;
  j["cg_iterations"] = s.cg_iterations;
  j["curvature_scale"] = number(s.curvature_scale);
  j["stationarity"] = number(s.stationarity);
  j["stationarity_lower"] = number(s.stationarity_lower);
  j["finishing_step"] = s.finishing_step;
  const Certificate& c = s.certificate;
  j["certificate"] = c.computed ? nlohmann::json{{"computed", true},
                                                 {"of", c.surrogate ? "weighted-l1 surrogate" : "objective"},
                                                 {"optimal", c.optimal},
                                                 {"value", number(c.value)},
                                                 {"lower_bound", number(c.lower_bound)},
                                                 {"gap", number(c.gap)},
                                                 {"relative_gap", number(c.relative_gap)},
                                                 {"lambda_min", number(c.lambda_min)},
                                                 {"trace_bound", number(c.trace_bound)},
                                                 {"time", number(c.seconds)},
                                                 {"note", c.note}}
                                : nlohmann::json{{"computed", false}, {"note", c.note}};
  const PolishReport& p = s.polish;
  j["polish"] = {{"tried", p.tried},
                 {"kept", p.kept},
                 {"rounds", p.rounds},
                 {"newton_steps", p.newton_steps},
                 {"products", p.products},
                 {"factorizations", p.factorizations},
                 {"single_factorizations", p.single_factorizations},
                 {"attempts", p.attempts},
                 {"fitted_terms", p.fitted},
                 {"kkt_solved", p.kkt_solved},
                 {"boxed_terms", p.boxed},
                 {"objective_before", number(p.objective_before)},
                 {"note", p.note}};
  nlohmann::json raises = nlohmann::json::array();
  for (const RankRaise& step : s.rank_raises)
    raises.push_back({{"mm_iteration", step.mm_iteration},
                      {"from", step.from},
                      {"to", step.to},
                      {"lambda_min", number(step.lambda_min)},
                      {"objective_before", number(step.objective_before)},
                      {"objective", number(step.objective)}});
  j["rank_raises"] = raises;
  j["objective"] = {{"initial", number(s.initial_objective)}, {"final", number(s.final_objective)}};
  j["time"] = {{"init", s.init_time}, {"solve", s.solve_time}, {"total", s.init_time + s.solve_time}};
  const processes::Traffic traffic = processes::traffic();
  j["processes"] = {{"count", processes::count()},
                    {"exchanges", traffic.exchanges},
                    {"received_bytes", traffic.bytes},
                    {"exchange_seconds", traffic.seconds},
                    {"peak_memory_mib", number(peak_memory_mib)}};
  if (const std::string note = whole_on_every_process(); !note.empty()) j["processes"]["note"] = note;
  nlohmann::json metrics = nlohmann::json::object();
  for (const Metric& m : s.metrics) metrics[m.name] = number(m.value);
  j["metrics"] = metrics;
  nlohmann::json facts = nlohmann::json::object();
  for (const Metric& m : model.facts) facts[m.name] = number(m.value);
  j["facts"] = facts;
  nlohmann::json grid = nlohmann::json::array();
  for (const LambdaTrial& t : r.trials) {
    nlohmann::json g;
    g["lambda"] = number(t.lambda);
    g["validation_error"] = number(t.validation_error);
    g["status"] = to_string(t.summary.status);
    g["mm_iterations"] = t.summary.mm_iterations;
    g["objective"] = number(t.summary.final_objective);
    g["time"] = t.summary.init_time + t.summary.solve_time;
    nlohmann::json tm = nlohmann::json::object();
    for (const Metric& m : t.summary.metrics) tm[m.name] = number(m.value);
    g["metrics"] = tm;
    if (!t.penalty_path.empty()) {
      nlohmann::json path = nlohmann::json::array();
      for (const PenaltyStep& step : t.penalty_path)
        path.push_back({{"gamma", number(step.gamma)},
                        {"status", to_string(step.status)},
                        {"mm_iterations", step.mm_iterations},
                        {"infeasibility", number(step.infeasibility)},
                        {"time", step.time}});
      g["penalty_path"] = path;
    }
    grid.push_back(g);
  }
  j["lambda_grid"] = grid;
  if (model.infeasibility) {
    const ConstrainedAnswer& a = constrained;
    j["constrained"] = {{"objective", number(a.objective)},
                        {"dual_bound", number(a.dual_bound)},
                        {"relative_gap", number(a.relative_gap)},
                        {"primal_infeasibility", number(a.primal_infeasibility)},
                        {"dual_infeasibility", number(a.dual_infeasibility)},
                        {"optimal", a.optimal}};
  }
  return j;
}

void write_trace(std::ostream& os, const RunResult& r) {
  os << "lambda,mm_iteration,objective,relative_change,admm_iterations,gap,tolerance,time,curvature_scale,rho\n";
  // %.12g by to_chars into one line: a stream's operator<< for doubles took 8% of a short run's
  // instructions (mcp250-1's 929 rows: 12M of 151M). curvature_scale and rho, where not finite,
  // are empty fields.
  std::string line;
  char buffer[64];
  const auto number = [&](double x) {
    line.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::general, 12).ptr);
  };
  const auto optional = [&](double x) {
    if (std::isfinite(x)) number(x);
  };
  for (const LambdaTrial& t : r.trials) {
    // L-BFGS and sphere-sweep rows have no ADMM, tau or rho: empty fields (a gap of 0 read as a real one).
    const bool no_admm = t.summary.solver == SolverType::kLbfgs || t.summary.solver == SolverType::kSpheres ||
                         t.summary.solver == SolverType::kAugmentedLagrangian ||
                         t.summary.solver == SolverType::kInteriorPoint;
    for (const TraceRow& row : t.summary.trace) {
      line.clear();
      number(t.lambda);
      line += ',' + std::to_string(row.mm_iteration) + ',';
      number(row.objective);
      line += ',';
      number(row.relative_change);
      line += ',';
      if (!no_admm) {
        line += std::to_string(row.admm_iterations);
        line += ',';
        number(row.gap);
      } else {
        line += ',';
      }
      line += ',';
      if (!no_admm) number(row.tolerance);
      line += ',';
      number(row.time);
      line += ',';
      optional(row.curvature_scale);
      line += ',';
      optional(row.rho);
      line += '\n';
      os << line;
    }
  }
}


std::string read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string(), "cannot read the model file of the checkpointed run");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// --resume DIR: the request of the run saved in DIR's checkpoint (its model file, overrides and
// plugin paths; the output directory DIR), with the checkpoint itself.
std::pair<RunRequest, run_detail::Checkpoint> resumed_request(const RunRequest& req) {
  const std::filesystem::path dir = *req.resume_directory;
  if (!req.model_file.empty() || !req.overrides.empty() || req.output_directory)
    throw Error("--resume", "continues the run saved in " + dir.string() +
                                " with its own model file, --set options and output directory; give none of them "
                                "(to change them, start a new run)");
  run_detail::Checkpoint c = run_detail::read_checkpoint(dir / run_detail::kCheckpointFile);
  RunRequest r = req;
  r.model_file = c.model_file;
  r.overrides = c.overrides;
  r.output_directory = dir;
  for (const std::string& p : c.plugin_paths) r.plugin_paths.emplace_back(p);
  // The model file is read again (its data files, relative to it, too): a changed file would
  // continue another problem from this one's state.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(c.model_file, ec))
    throw Error(c.model_file, "the model file of the checkpointed run in " + dir.string() +
                                  " is gone; --resume needs it unchanged");
  if (read_bytes(c.model_file) != c.model_text)
    throw Error(c.model_file, "the model file changed since the checkpoint in " + dir.string() +
                                  " was written; --resume continues only the run as it was started (restore the "
                                  "file, or start a new run)");
  return {std::move(r), std::move(c)};
}

}  // namespace

RunResult run_model(const RunRequest& request) {
  std::optional<run_detail::Checkpoint> resumed;
  RunRequest resumed_req;
  if (request.resume_directory) {
    auto [r, c] = resumed_request(request);
    resumed_req = std::move(r);
    resumed = std::move(c);
  }
  const RunRequest& req = resumed ? resumed_req : request;
  Setup setup = open_model(req);
  ConfigTable& config = setup.config;
  const PluginHost& host = *setup.host;
  const ConfigTable& model_table = setup.model_table;

  RunResult result;
  result.application = setup.application;
  Matrix given_start;
  SolverOptions base_options = read_solver_options(config.table("solver"), &given_start);
  // [loss] type = NAME; the parameters of each loss live in their own table [loss.NAME], so one
  // file can hold several losses' parameters and `--set loss.type=...` switches between them.
  const ConfigTable loss_table = config.table("loss");
  result.loss = loss_table.string("type", "l1");
  // A plugin that is not found has no file to point at: the message points at the key naming it.
  auto at_key = [](const ConfigTable& table, const std::string& key, auto create) {
    try {
      return create();
    } catch (const Error& e) {
      if (!e.where().empty()) throw;
      throw Error(table.where(key), (table.path().empty() ? key : table.path() + "." + key) + ": " + e.message());
    }
  };
  for (const std::string& key : loss_table.keys()) {
    if (key == "type") continue;
    if (!loss_table.is_table(key))
      loss_table.fail(key, "loss parameters go in the loss's own table, e.g. [loss." + result.loss + "] " + key + " = ...");
    // The other losses' tables are built as their losses, and dropped: a table named after no loss
    // ([loss.leaky-mpc]) or a key its loss does not read was ignored without a word.
    if (key != result.loss) at_key(loss_table, key, [&] { return host.create_loss(key, loss_table.table(key)); });
  }
  std::shared_ptr<Application> app =
      at_key(model_table, "type", [&] { return host.create_application(result.application); });
  std::shared_ptr<Loss> loss =
      at_key(loss_table, "type", [&] { return host.create_loss(result.loss, loss_table.table(result.loss)); });
  // Which files these are, for summary.json; a plugin that shadows another of its name (a user's
  // l1 before the installed one) is said, as it changes what "l1" means in this run.
  for (const auto& [kind, name] : {std::pair{PluginKind::kApplication, result.application},
                                   std::pair{PluginKind::kLoss, result.loss}}) {
    const std::vector<std::filesystem::path> files = host.candidates(kind, name);
    if (files.empty()) continue;  // (create_* found it: not reached)
    result.plugins.push_back(PluginHost::inspect(files.front()));
    result.plugins.back().file = std::filesystem::absolute(files.front());
    // (A build tree's plugins before an installed copy's are no user's choice: not said.)
    if (files.size() > 1 && host.from_user_paths(files.front()) && !req.quiet && processes::writer())
      std::fprintf(stderr, "sdprl: note: the %s plugin '%s' is %s, which comes first in the search order; %s is not used\n",
                   to_string(kind), name.c_str(), files.front().c_str(), files[1].c_str());
  }
  // Refuse a loss the MM solver cannot use before anything is built or written, at the place of
  // its parameters ([loss.NAME]; else loss.type): geman's theta = 1e-200 gives phi'(0) = inf.
  const std::string loss_key = loss_table.is_table(result.loss) ? result.loss : "type";
  auto at_loss = [&](auto check) {
    try {
      check();
    } catch (const Error& e) {
      throw Error(loss_table.where(loss_key), "loss." + loss_key + ": " +
                                                  (e.where().empty() ? e.message() : e.where() + ": " + e.message()));
    }
  };
  if (base_options.type == SolverType::kSpheres || base_options.type == SolverType::kAugmentedLagrangian ||
      base_options.type == SolverType::kInteriorPoint) {
    // (checked with the model below)
  } else if (resolve_solver_type(*loss, base_options.type) == SolverType::kMm) {
    at_loss([&] { check_loss_for_mm(*loss); });
  }
  // (solve() says the same for a program that calls it; here the message has the key's place.)
  else if (const std::string problem = mm::lbfgs_loss_problem(*loss); !problem.empty())
    config.table("solver").fail("type", problem);
  else
    at_loss([&] { check_loss_for_lbfgs(*loss); });

  BuildContext context;
  context.seed = base_options.seed;
  const Model model = [&] {
    try {
      Model built = app->build(model_table, context);
      if (built.application.empty()) built.application = result.application;  // messages name it
      return built;
    } catch (const std::bad_alloc&) {
      throw Error(req.model_file.string(), "out of memory while the application '" + result.application +
                                               "' built the model's data ([model]); use fewer data, or raise the "
                                               "process's memory limit");
    }
  }();
  // Model::terms is required (sdprl/model.h); a plugin that leaves it empty segfaulted below.
  if (!model.terms)
    model_table.fail("type", "the application '" + result.application +
                                 "' built a model without terms (Model::terms is required: a plugin error)");
  // What solve() would refuse later without a place (and after the output directory exists).
  if (base_options.init == InitKind::kModel && !model.start)
    config.table("solver").fail("init", mm::model_start_problem(model));
  if (model.constraint && resolve_solver_type(*loss, base_options.type) == SolverType::kLbfgs)
    loss_table.fail("type", "the loss '" + result.loss + "' (differentiable at 0) runs on the L-BFGS solver, which does "
                            "not handle this model's constraint '" + model.constraint->name() +
                            "'; use a loss for the MM solver (l1, leaky-mcp, ...)");

  const ConfigTable reg = config.table("regularizer");
  const auto [lambdas, gamma] = read_regularizer(config, model);
  // A penalty model (Model::infeasibility) chooses gamma itself unless the file or --set gives one.
  const bool gamma_pinned = reg.contains("gamma");
  result.options = base_options;
  const ConfigTable output = config.table("output");
  // Read even when the request names the directory (as --resume does), so that a run started with
  // --set output.directory=... resumes instead of failing on an "unknown key".
  const std::string configured_dir = output.string("directory", "sdprl-results/" + req.model_file.stem().string());
  std::filesystem::path out_dir = req.output_directory ? *req.output_directory : std::filesystem::path(configured_dir);
  const bool write_factor = output.boolean("write_factor", true);
  config.check_unknown_keys();

  if (lambdas.size() > 1 && (!model.evaluator || !model.evaluator->has_validation()))
    reg.fail("lambda", "a lambda grid needs a validation set, and this model has none");
  // With rank = "auto" the solver picks the rank (sdprl/solver.h: kAutoRank); a given start then
  // sets the first one, and the model's default stands for it here.
  const bool auto_rank = base_options.rank == kAutoRank;
  const Index rank = base_options.rank > 0 ? base_options.rank
                     : auto_rank && base_options.init == InitKind::kGiven ? given_start.cols()
                                                                          : model.default_rank;
  if (rank < 1 && !auto_rank) config.table("solver").fail("rank", "the model has none; set solver.rank");
  if (rank > model.terms->dimension())
    config.table("solver").fail("rank", "rank " + std::to_string(rank) + " exceeds the dimension n = " +
                                            std::to_string(model.terms->dimension()));
  if (base_options.init == InitKind::kGiven) {
    if (given_start.rows() != model.terms->dimension() || given_start.cols() != rank)
      config.table("solver").fail("init_file", "the starting factor is " + std::to_string(given_start.rows()) + " x " +
                                                   std::to_string(given_start.cols()) + ", expected " +
                                                   std::to_string(model.terms->dimension()) + " x " + std::to_string(rank));
    if (const std::string problem = starting_factor_problem(model, given_start); !problem.empty())
      config.table("solver").fail("init_file", problem);
  }
  if (!req.output_directory && out_dir.empty())
    output.fail("directory", "an empty directory would write the outputs into the current directory; name one");
  if (req.output_directory && out_dir.empty())
    throw Error("--out", "an empty directory would write the outputs into the current directory; name one");
  if (!resumed && std::filesystem::exists(out_dir / run_detail::kCheckpointFile) && !req.force)
    throw Error(out_dir.string(), "holds the checkpoint of an unfinished run: continue it with `sdprl run --resume " +
                                      out_dir.string() + "`, or start a new run there with --force (which deletes it)");
  // Under mpirun process 0 alone writes (parallel/processes.h); the others hold the same result.
  const bool writer = processes::writer();
  // A run that fails after making its output directory (a plugin throwing mid-solve) leaves no
  // empty directory behind, as a refused run makes none. Declared before the lock, so that it runs
  // after the lock's destructor has removed .sdprl.lock.
  struct RemoveIfEmptyOnFailure {
    std::filesystem::path directory;
    bool created = false;
    int exceptions = std::uncaught_exceptions();
    ~RemoveIfEmptyOnFailure() {
      if (!created || std::uncaught_exceptions() <= exceptions) return;
      std::error_code ec;
      if (std::filesystem::is_empty(directory, ec) && !ec) std::filesystem::remove(directory, ec);
    }
  } remove_if_empty{out_dir, writer && !std::filesystem::exists(out_dir)};
  // One run at a time per output directory: two at once would mix their files.
  std::optional<OutputLock> lock;
  std::exception_ptr setup_failure;
  try {
    if (writer) {
      io::ensure_writable_directory(out_dir);
      lock.emplace(out_dir);
    }
  } catch (...) {
    setup_failure = std::current_exception();
  }
  // The others learn of process 0's failure here rather than wait for it in the solve's exchanges.
  if (processes::distributed() ? processes::any(setup_failure != nullptr) : setup_failure != nullptr) {
    if (setup_failure) std::rethrow_exception(setup_failure);
    throw Error(out_dir.string(), "process 0 could not prepare the output directory");
  }
  result.output_directory = out_dir;

  SolverOptions options = base_options;
  options.verbose = !req.quiet;
  // The SDPs whose constraints each fix one diagonal entry of their own row (max-cut) are solved on
  // the spheres those constraints describe, without a penalty to choose (docs/method.md section
  // 9.1); a gamma given in the file asks for F at that penalty, which is MM's to minimise.
  if (const std::string problem = sdp::spheres_problem(model, *loss, options); options.type == SolverType::kSpheres) {
    if (!problem.empty()) config.table("solver").fail("type", "\"spheres\" does not apply to this model: " + problem);
  } else if (options.type == SolverType::kAuto && problem.empty() && !gamma_pinned &&
             resolve_solver_type(*loss, options.type) == SolverType::kMm) {
    options.type = SolverType::kSpheres;
  }
  const bool spheres = options.type == SolverType::kSpheres;
  // The other sdpa models: the interior-point method where their blocks fit densely, else or where
  // it does not certify the augmented Lagrangian (docs/method.md sections 9.2-9.3), where these
  // apply (lambda = 0, checked per lambda); MM's penalty path where neither certifies.
  const bool lagrangian_first = options.type == SolverType::kAuto && model.infeasibility && !gamma_pinned &&
                                resolve_solver_type(*loss, options.type) == SolverType::kMm;
  if (options.type == SolverType::kAugmentedLagrangian) {
    const RegularizationWeights first{lambdas.front(), gamma};
    if (const std::string problem = sdp::augmented_lagrangian_problem(model, *loss, options, first); !problem.empty())
      config.table("solver").fail("type", "\"augmented-lagrangian\" does not apply to this model: " + problem);
  }
  if (options.type == SolverType::kInteriorPoint) {
    const RegularizationWeights first{lambdas.front(), gamma};
    if (const std::string problem = sdp::interior_point_problem(model, *loss, options, first); !problem.empty())
      config.table("solver").fail("type", "\"interior-point\" does not apply to this model: " + problem);
  }
  options.interrupt = req.interrupt;
  std::size_t best = 0;
  std::size_t first = 0;
  if (resumed) {
    // The finished lambdas come from the checkpoint; the grid must be the one they belong to
    // (it is, when the model file and overrides are unchanged; checked all the same).
    const auto& trials = resumed->trials;
    if (trials.size() > lambdas.size() || (resumed->has_state && trials.size() == lambdas.size()))
      throw Error(out_dir.string(), "the checkpoint has more lambdas than the model's grid");
    for (std::size_t i = 0; i < trials.size(); ++i)
      if (trials[i].lambda != lambdas[i])
        throw Error(out_dir.string(), "the checkpoint's lambda grid differs from the model's");
    result.trials = trials;
    first = trials.size();
    if (!trials.empty()) {
      best = resumed->best;
      result.summary = trials[best].summary;
      result.X = resumed->best_X;
      result.weights = RegularizationWeights{trials[best].lambda, gamma};
    }
  }
  // The previous lambda's result, the next one's start under lambda_path (SolverOptions).
  Matrix last_X = resumed ? resumed->last_X : Matrix();
  // The checkpoint: this run's request and the grid so far (the solver adds its state).
  run_detail::Checkpoint saved;
  const std::filesystem::path checkpoint_file = out_dir / run_detail::kCheckpointFile;
  if (resumed) {
    saved.model_file = resumed->model_file;
    saved.model_text = std::move(resumed->model_text);
    saved.plugin_paths = resumed->plugin_paths;
  } else {
    saved.model_file = std::filesystem::absolute(req.model_file).string();
    saved.model_text = read_bytes(req.model_file);
    for (const auto& p : req.plugin_paths) saved.plugin_paths.push_back(std::filesystem::absolute(p).string());
  }
  saved.overrides = req.overrides;
  // A checkpoint that cannot be written (disk full) does not end the run: losing the run would be
  // worse than losing its insurance. The first failure is reported.
  bool warned = false;
  bool state_saved = false;  // by the current lambda's solve
  auto write_checkpoint = [&](const SolverState* state) {
    if (!writer) return true;
    saved.trials = result.trials;
    saved.best = best;
    saved.best_X = result.X;
    saved.last_X = last_X;
    saved.has_state = state != nullptr;
    saved.state_ref = state;  // written from the solver's own copy: no second copy of its ADMM state
    try {
      run_detail::write_checkpoint(checkpoint_file, saved);
      saved.state_ref = nullptr;
      return true;
    } catch (const Error& e) {
      saved.state_ref = nullptr;
      if (!warned)
        std::fprintf(stderr, "sdprl: warning: checkpoint not written: %s: %s\n", e.where().c_str(), e.message().c_str());
      warned = true;
      return false;
    }
  };
  const CheckpointCallback checkpoint = [&](const SolverState& state) { state_saved = write_checkpoint(&state); };
  // A lambda that fails (a plugin throwing, memory running out) after others finished loses
  // nothing: they go to the checkpoint, as an interrupt's do, and the message says how to go on.
  // Returns what the message adds; nothing when no finished work is on disk.
  // (`lambda` is lambdas[i], passed: a structured binding cannot be captured in C++17.)
  auto keep_finished = [&](std::size_t i, double lambda) -> std::string {
    // Not on the other processes, which write nothing; not for a resumed lambda that failed before
    // saving anything new (its checkpoint may be what failed: resuming it again would repeat that).
    if (!writer) return "";
    const bool on_disk = state_saved || (i > first && write_checkpoint(nullptr));
    if (!on_disk) return "";
    const std::size_t finished = result.trials.size();
    const std::string resume = ": `sdprl run --resume " + out_dir.string() + "` continues from lambda = " +
                               mm::fmt("%g", lambda);
    if (finished == 0) return ". Its last checkpoint is kept" + resume;
    return ". " + (finished == 1 ? std::string("The lambda") : std::to_string(finished) + " lambdas") +
           " finished before it " + (finished == 1 ? "is" : "are") + " kept" +
           (state_saved ? ", with this one's last checkpoint" : "") + resume;
  };

  bool interrupted = false;
  ConstrainedAnswer constrained;  // of the chosen trial
  for (std::size_t i = first; i < lambdas.size(); ++i) {
    const double lambda = lambdas[i];
    LambdaTrial trial;
    trial.lambda = lambda;
    RegularizationWeights weights{lambda, gamma};
    Matrix X = given_start;
    // Along the path: from the previous lambda's result (the rank staircase may have changed its
    // rank, which a fixed rank would refuse: then the run's own start).
    const bool from_path = options.lambda_path && last_X.size() > 0 &&
                           (last_X.cols() == rank || base_options.rank == kAutoRank);
    SolverOptions lambda_options = options;
    if (from_path) {
      X = last_X;
      lambda_options.init = InitKind::kGiven;
    }
    const SolverState* start = resumed && resumed->has_state && i == first ? &resumed->state : nullptr;
    // A resumed penalty model continues at the penalty its state was solved with.
    if (start && model.infeasibility) weights.gamma = start->summary.weights.gamma;
    ConstrainedAnswer answer;
    state_saved = false;
    IterationCallback after_step;
    if (req.after_mm_step) after_step = [&req](const TraceRow& row, const Matrix&) {
      req.after_mm_step(row);
      return true;
    };
    try {
      // The augmented Lagrangian's result stands when the constrained answer proves it optimal (or
      // it was interrupted); otherwise MM's penalty path solves from the run's own start, and the
      // time spent first counts in its solve time.
      bool lagrangian = false;
      double spent_first = 0.0;
      // The interior point where the blocks fit densely (docs/method.md section 9.3), then the
      // augmented Lagrangian: the first whose answer is certified optimal stands.
      std::vector<SolverType> firsts;
      if (lagrangian_first && !start) {
        if (sdp::interior_point_problem(model, *loss, lambda_options, weights).empty())
          firsts.push_back(SolverType::kInteriorPoint);
        if (sdp::augmented_lagrangian_problem(model, *loss, lambda_options, weights).empty())
          firsts.push_back(SolverType::kAugmentedLagrangian);
      }
      struct Attempt {
        LambdaTrial trial;
        Matrix X;
        ConstrainedAnswer answer;
        double gamma = 0.0;
      };
      std::optional<Attempt> closest;
      for (std::size_t f = 0; f < firsts.size() && !lagrangian; ++f) {
        const SolverType first_type = firsts[f];
        SolverOptions o = lambda_options;
        o.type = first_type;
        Matrix Y = X;
        Summary s = solve(model, *loss, weights, o, Y, after_step, nullptr, checkpoint);
        RegularizationWeights w = weights;
        w.gamma = s.weights.gamma;
        LambdaTrial tried = trial;
        tried.summary = std::move(s);
        tried.summary.solve_time += spent_first;
        bool kept = tried.summary.status == SolverStatus::kInterrupted;
        ConstrainedAnswer a;
        if (tried.summary.status == SolverStatus::kConverged) {
          // Feasible where its multipliers stalled: the polish with every constraint fitted (as
          // after MM's path) may certify the augmented Lagrangian's point (the interior point's has
          // Z's full rank, which the polish is not for).
          const double infeasibility = model.infeasibility(Y);
          a = constrained_answer(model, w, Y, infeasibility, tried.summary.certificate, options.feasibility_tolerance);
          if (first_type == SolverType::kAugmentedLagrangian) {
            // (polish_constraints judges the last entry of a penalty path, which this run has none of.)
            tried.penalty_path.push_back({w.gamma, tried.summary.status, tried.summary.mm_iterations, infeasibility,
                                          tried.summary.init_time + tried.summary.solve_time});
            polish_constraints(model, *loss, w, lambda_options, Y, tried, a);
            tried.penalty_path.clear();
          }
          kept = a.optimal;
        }
        if (kept) {
          trial = std::move(tried);
          X = std::move(Y);
          lagrangian = true;
        } else {
          const Summary& failed = tried.summary;
          spent_first = failed.init_time + failed.solve_time;
          // Feasible, within kCloseEnough of a certificate and closer than any attempt before:
          // what the run ends with if the methods after it end further away and do not prove the
          // problem unbounded (hinf1 in a build whose rounding leaves the interior point's gap at
          // 1.1e-6: MM's path ends 2.7e-5 off).
          if (a.primal_infeasibility <= options.feasibility_tolerance && certificate_distance(a) <= kCloseEnough &&
              certificate_distance(a) < (closest ? certificate_distance(closest->answer) : INFINITY))
            closest = Attempt{tried, Y, a, w.gamma};
          if (options.verbose)
            std::fprintf(stderr, "sdprl: %s ended %s, not certified; %s instead (docs/method.md section 9)\n",
                         first_type == SolverType::kInteriorPoint ? "the interior-point method" : "the augmented Lagrangian",
                         to_string(failed.status),
                         f + 1 < firsts.size() ? "the augmented Lagrangian" : "MM's penalty path");
        }
      }
      if (!lagrangian) {
        trial.summary = solve(model, *loss, weights, lambda_options, X, after_step, start, checkpoint);
        trial.summary.solve_time += spent_first;
        lagrangian = options.type == SolverType::kAugmentedLagrangian ||
                     options.type == SolverType::kInteriorPoint;  // asked for by name
      }
      // Its own choice of penalty (sdp/spheres.h, sdp/augmented_lagrangian.h).
      if (spheres || lagrangian) weights.gamma = trial.summary.weights.gamma;
      if (model.infeasibility)
        solve_penalty_path(model, options, !gamma_pinned && !spheres && !lagrangian, given_start, weights, X, trial,
                           [&](const RegularizationWeights& w, const SolverOptions& o, Matrix& Y) {
                             return solve(model, *loss, w, o, Y, after_step, nullptr, checkpoint);
                           });
      if (model.infeasibility) {
        answer = constrained_answer(model, weights, X, trial.penalty_path.back().infeasibility,
                                    trial.summary.certificate, options.feasibility_tolerance);
        if (!spheres) polish_constraints(model, *loss, weights, lambda_options, X, trial, answer);
        if (closest && !answer.optimal && trial.summary.status != SolverStatus::kUnbounded &&
            certificate_distance(closest->answer) < certificate_distance(answer)) {
          // An earlier attempt was closer: it stands, with the time of everything tried.
          const double spent = trial.summary.init_time + trial.summary.solve_time;
          trial = std::move(closest->trial);
          trial.summary.solve_time = spent - trial.summary.init_time;
          trial.penalty_path = {{closest->gamma, trial.summary.status, trial.summary.mm_iterations,
                                 closest->answer.primal_infeasibility, spent}};
          X = std::move(closest->X);
          weights.gamma = closest->gamma;
          answer = closest->answer;
          if (options.verbose)
            std::fprintf(stderr, "sdprl: the %s's result is closer to a certificate than MM's path: it stands\n",
                         to_string(trial.summary.solver));
        }
      }
      if (model.infeasibility && options.verbose && trial.summary.usable()) {
        // The solve's last line judges F's certificate, which a penalty model with lambda = 0
        // rarely has (tr Z unbounded); this one judges the constrained problem (section 9).
        const ConstrainedAnswer& a = answer;
        std::fprintf(stderr,
                     "sdprl: as a constrained problem at gamma = %g: objective %.10g, dual bound %.10g, relative gap "
                     "%.1e, infeasibility %.1e primal, %.1e dual: %s\n",
                     weights.gamma, a.objective, a.dual_bound, a.relative_gap, a.primal_infeasibility,
                     a.dual_infeasibility,
                     a.optimal ? "certified optimal" : "not certified (summary.json: constrained)");
      }
      // The run's verdict beside the solver's: a result that a certificate proves, whether MM's own
      // rule stopped it or a cap did (the rank staircase's top stair can run to max_mm_iterations
      // with F within 1e-6 of the optimum, and the end's polish then certifies it: that is an answer).
      const SolverStatus ended = trial.summary.status;
      if ((ended == SolverStatus::kConverged || ended == SolverStatus::kIterationLimit ||
           ended == SolverStatus::kTimeLimit) &&
          (model.infeasibility ? answer.optimal
                               : trial.summary.certificate.optimal && !trial.summary.certificate.surrogate))
        trial.summary.status = SolverStatus::kOptimal;
      // Inside: an application's validation that throws is a plugin failing mid-grid too.
      trial.validation_error = model.evaluator && model.evaluator->has_validation()
                                   ? model.evaluator->validation_error(X) : std::nan("");
    } catch (const Error& e) {
      throw Error(e.where(), e.message() + keep_finished(i, lambda));
    } catch (const std::bad_alloc&) {
      // The solver's state grows with the terms times the rank: about 8 (2 r + 3) bytes per term
      // (the row-split ADMM's two half-terms, their multipliers and P rows; 1.2 GB for 11.5M terms
      // at rank 5, docs/performance.md), and n r doubles a few times over.
      const double terms = static_cast<double>(model.terms->size()), n = static_cast<double>(model.terms->dimension());
      const double r = static_cast<double>(rank);
      const double need = 8.0 * terms * (2.0 * r + 3.0) + 8.0 * 10.0 * n * r;
      std::ostringstream why;
      why.precision(3);
      why << "out of memory in the solver: its state for " << model.terms->size() << " terms, n = "
          << model.terms->dimension() << " and rank " << rank << " needs about " << need / 1e9
          << " GB, more than this process could allocate; lower solver.rank, use fewer data, or raise the "
             "process's memory limit";
      throw Error("solver", why.str() + keep_finished(i, lambda));
    } catch (const std::exception& e) {
      // Only a plugin (the loss, the model's terms or evaluator) throws what is no sdprl::Error here.
      throw Error("lambda = " + mm::fmt("%g", lambda),
                  std::string("a plugin failed during the solve (loss '") + result.loss + "', application '" +
                      result.application + "'): " + e.what() + keep_finished(i, lambda));
    }
    if (!req.quiet && lambdas.size() > 1)
      std::fprintf(stderr, "lambda = %g: validation error %.6g\n", lambda, trial.validation_error);
    // The grid's choice: the lowest finite validation error (the first trial if none is finite).
    const bool chosen = result.trials.empty() ||
                        (std::isfinite(trial.validation_error) &&
                         !(trial.validation_error >= result.trials[best].validation_error));
    const bool stopped = trial.summary.status == SolverStatus::kInterrupted;
    if (chosen) {
      best = result.trials.size();
      result.summary = trial.summary;
      result.X = X;
      result.weights = weights;
      constrained = answer;
    }
    if (trial.summary.usable() && X.allFinite()) last_X = X;
    result.trials.push_back(std::move(trial));
    // Under several processes they agree (a signal reaches each at its own moment).
    const bool signalled = req.interrupt && req.interrupt->load();
    if (processes::distributed() ? processes::any(signalled) : signalled) {
      // A lambda that ended before the solver saw the interrupt is finished: the checkpoint
      // resumes with the next one (an interrupted solve has saved its own state). After the last
      // lambda's final step the interrupt changes nothing: that run is complete.
      const bool more = i + 1 < lambdas.size();
      interrupted = stopped || more;
      if (!stopped && more) write_checkpoint(nullptr);
      break;
    }
  }
  if (interrupted && result.summary.status != SolverStatus::kInterrupted) {
    // The best lambda so far finished, but the grid did not: the run as a whole is interrupted.
    result.summary.status = SolverStatus::kInterrupted;
    result.summary.message = "interrupted before the end of the lambda grid";
  }

  // Every process's peak memory so far, the largest of them (collective: before the writer leaves
  // the others). What the outputs add after it is their text, small next to the run's state.
  const double peak_memory_mib = processes::largest(processes::peak_memory_mib());
  if (!writer) return result;
  if (const std::string note = whole_on_every_process(); !note.empty() && !req.quiet)
    std::fprintf(stderr, "sdprl: note: %s\n", note.c_str());
  // Outputs: all written before any replaces its predecessor (a failure leaves the previous run's
  // set whole), then renamed with the summary last, so that its presence means the run is complete.
  std::vector<io::FileToWrite> outputs;
  std::ostringstream comment;
  if (write_factor) {
    comment << "sdprl factor X (Z = X X^T), " << result.application << ", loss " << result.loss
            << ", lambda " << result.weights.lambda << ", status " << to_string(result.summary.status);
    io::check_writable_values(out_dir / "X.mtx", result.X);
    outputs.push_back({out_dir / "X.mtx", [&](std::ostream& os) { io::write_matrix_market_array(os, result.X, comment.str()); }});
  }
  outputs.push_back({out_dir / "trace.csv", [&](std::ostream& os) { write_trace(os, result); }});
  const std::string json = summary_json(result, req, model, *loss, constrained, peak_memory_mib).dump(2) + "\n";
  outputs.push_back({out_dir / "summary.json", [&](std::ostream& os) { os << json; }});
  io::write_atomically_together(outputs);
  // The outputs hold the result now; only an interrupted run keeps its checkpoint (to --resume).
  if (!interrupted) {
    std::error_code ec;
    std::filesystem::remove(checkpoint_file, ec);
  }
  return result;
}

OutputLock::OutputLock(const std::filesystem::path& directory) : file_(directory / ".sdprl.lock") {
  fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(directory.string(), std::string("cannot create the lock file .sdprl.lock: ") + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {};
    const ssize_t got = ::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    const std::string alone = processes::unjoined_launcher();  // why a second process of one job is here
    throw Error(directory.string(),
                err == EWOULDBLOCK ? "another sdprl run" + (got > 0 ? " (process " + std::string(pid, static_cast<std::size_t>(got)) + ")" : std::string()) +
                                         " is writing into this output directory; wait for it, or give another --out" +
                                         (alone.empty() ? std::string() : " (" + alone + ")")
                                   : std::string("cannot lock .sdprl.lock: ") + std::strerror(err));
  }
  const std::string me = std::to_string(static_cast<long>(::getpid()));
  if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, me.data(), me.size(), 0) < 0) {
    // The process number is only shown to a second run; not having it is no error.
  }
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  // Removed, so that the directory holds only the outputs. (A run that opened the file just
  // before the removal and locks it just after would hold a removed file: a window of one
  // open()-to-flock() interval, against runs started by hand.)
  ::unlink(file_.c_str());
  ::close(fd_);
}

LoadedModel load_model(const RunRequest& req) {
  Setup setup = open_model(req);
  LoadedModel loaded;
  loaded.application = setup.application;
  loaded.model_file = req.model_file;
  const std::shared_ptr<Application> app = setup.host->create_application(setup.application);
  BuildContext context;
  context.seed = read_seed(setup.config.table("solver"));
  loaded.model = app->build(setup.model_table, context);
  std::tie(loaded.lambdas, loaded.gamma) = read_regularizer(setup.config, loaded.model);
  loaded.lambda_where = setup.config.table("regularizer").where("lambda");
  // The loss, the solver (but its seed) and the outputs do not enter the model; they stay
  // unchecked here so that any run file can be exported as it is.
  for (const char* key : {"loss", "solver", "output"}) setup.config.mark_used(key);
  setup.config.check_unknown_keys();
  return loaded;
}

}  // namespace sdprl
