// The table of [solver] keys (options_table.h) and what it drives: reading, is_valid, the reference.
#include "config/options_table.h"

#include "config/number_text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>
#include <type_traits>
#include <utility>

#include "sdprl/error.h"
#include "sdprl/io/matrix_market.h"

namespace sdprl {
namespace {

// The member a table row reads and writes, as a generic lambda: called with a const
// SolverOptions it gives a const reference, so one lambda serves reading and writing.
#define SDPRL_MEMBER(path) [](auto& s) -> auto& { return s.path; }

// An integer or number key: one reader of the member (as a double, for the defaults column and
// the tests) and the writer of its kind.
template <class Member>
SolverOption numeric_option(OptionKind kind, std::string key, Member member, NumberRule rule, std::string doc,
                            std::string zero_means) {
  SolverOption o;
  o.key = std::move(key);
  o.kind = kind;
  o.rule = rule;
  o.zero_means = std::move(zero_means);
  o.doc = std::move(doc);
  o.get = [member](const SolverOptions& s) { return static_cast<double>(member(s)); };
  auto write = [member](SolverOptions& s, auto x) {
    using T = std::decay_t<decltype(member(s))>;
    member(s) = static_cast<T>(x);
  };
  if (kind == OptionKind::kInteger)
    o.set_integer = write;
  else
    o.set_number = write;
  return o;
}

template <class Member>
SolverOption integer_option(std::string key, Member member, NumberRule rule, std::string doc,
                            std::string zero_means = {}) {
  return numeric_option(OptionKind::kInteger, std::move(key), member, rule, std::move(doc), std::move(zero_means));
}

template <class Member>
SolverOption number_option(std::string key, Member member, NumberRule rule, std::string doc,
                           std::string zero_means = {}) {
  return numeric_option(OptionKind::kNumber, std::move(key), member, rule, std::move(doc), std::move(zero_means));
}

template <class Member>
SolverOption boolean_option(std::string key, Member member, std::string doc) {
  SolverOption o;
  o.key = std::move(key);
  o.kind = OptionKind::kBoolean;
  o.doc = std::move(doc);
  o.get = [member](const SolverOptions& s) { return member(s) ? 1.0 : 0.0; };
  o.set_integer = [member](SolverOptions& s, std::int64_t x) { member(s) = x != 0; };
  return o;
}

template <class Enum>
OptionChoice choice(std::string name, Enum value, std::string doc) {
  return {std::move(name), static_cast<int>(value), std::move(doc)};
}

template <class Member>
SolverOption choice_option(std::string key, Member member, std::vector<OptionChoice> choices, std::string doc) {
  SolverOption o;
  o.key = std::move(key);
  o.kind = OptionKind::kChoice;
  o.choices = std::move(choices);
  o.doc = std::move(doc);
  o.get = [member](const SolverOptions& s) { return static_cast<double>(static_cast<int>(member(s))); };
  o.set_integer = [member](SolverOptions& s, std::int64_t x) {
    using Enum = std::decay_t<decltype(member(s))>;
    member(s) = static_cast<Enum>(x);
  };
  return o;
}

SolverOption file_option(std::string key, std::string doc) {
  SolverOption o;
  o.key = std::move(key);
  o.kind = OptionKind::kFile;
  o.doc = std::move(doc);
  return o;
}

// Shortest text that reads back as the same double, exponents without padding: "1e-5", "0.001".
std::string format_number(double x) {
  std::string text = detail::format_number(x);
  const std::size_t e = text.find('e');
  if (e != std::string::npos) {
    std::string exponent = text.substr(e + 1);
    const bool negative = exponent[0] == '-';
    if (exponent[0] == '+' || exponent[0] == '-') exponent.erase(0, 1);
    while (exponent.size() > 1 && exponent[0] == '0') exponent.erase(0, 1);
    text = text.substr(0, e + 1) + (negative ? "-" : "") + exponent;
  }
  return text;
}

// " >= 1", " in (0, 1]", or "" for an unbounded rule, as the options reference writes numbers.
std::string bounds(const NumberRule& rule) { return detail::rule_bounds(rule, format_number); }

std::vector<SolverOption> make_table() {
  const NumberRule count = NumberRule::closed(1, 1e9);  // iteration counts: at least one, an int
  const std::string megabytes = format_number(kBlockPreconditionerBytes / 1e6);
  std::vector<SolverOption> t;
  t.push_back(choice_option(
      "type", SDPRL_MEMBER(type),
      {choice("auto", SolverType::kAuto,
              "L-BFGS for a loss differentiable at 0 (phi'(0) = 0); \"spheres\" for an sdpa model whose constraints "
              "each fix one diagonal entry of its own row (max-cut), at the penalty path's default gamma; for another "
              "sdpa model (lambda = 0, gamma not set) \"interior-point\" where its blocks fit densely, then "
              "\"augmented-lagrangian\", then MM's penalty path, each where the one before is not certified; else MM"),
       choice("mm", SolverType::kMm, "majorisation-minimisation with ADMM (SDP-RL)"),
       choice("lbfgs", SolverType::kLbfgs, "L-BFGS on the factored objective (smooth losses only)"),
       choice("spheres", SolverType::kSpheres,
              "the rows of X on the spheres ||x_i||^2 = t_i / a_i of constraints a_i Z_ii = t_i, one per row, by block "
              "coordinate descent, no penalty (docs/method.md section 9.1)"),
       choice("augmented-lagrangian", SolverType::kAugmentedLagrangian,
              "an sdpa model's constrained SDP by an augmented Lagrangian on the factor with L-BFGS inner solves, "
              "no penalty to tune (docs/method.md section 9.2); max_mm_iterations caps its outer steps"),
       choice("interior-point", SolverType::kInteriorPoint,
              "an sdpa model's constrained SDP by a primal-dual interior-point method on Z, block by block (HKM "
              "direction, Mehrotra's predictor-corrector; docs/method.md section 9.3), for blocks and constraints "
              "few enough to hold densely")},
      "the algorithm that minimises F"));
  t.push_back(integer_option("rank", SDPRL_MEMBER(rank), NumberRule::at_least(1),
                             "r, the number of columns of the factor X (Z = X X^T); \"auto\": for a convex model "
                             "(l1 loss, no constraint) from rank 2 (or init_file's) up the rank staircase until "
                             "certified, to max_rank or, without one, the largest r with r (r + 1) / 2 <= m (some "
                             "optimum has a rank within it; docs/method.md section 7.4); otherwise the model's default",
                             "the model's default"));
  t.back().word = "auto";
  t.back().word_value = kAutoRank;
  t.push_back(integer_option(
      "max_rank", SDPRL_MEMBER(max_rank), NumberRule::closed(0, 1e9),
      "the rank staircase, for a convex (l1) loss: a run on the exact surrogate (admm.xt_step = \"exact-finish\", "
      "which auto is with max_rank, or \"coupled\") whose steps settle (F changing by less than "
      "max(relative_tolerance, 1e-5) per step) without a certificate adds the eigenvectors of the certificate's "
      "negative eigenvalues as new columns (all there is room for), moves X so that the terms it fits stay fitted, "
      "drops the columns that carry under 1e-3 of X's largest singular value, and goes on, up to this many columns, "
      "at most one stair per 256 MM steps (summary.json: rank_raises; docs/method.md section 7.4); at most rank: "
      "the rank stays fixed",
      "the rank stays fixed"));
  t.push_back(integer_option("max_mm_iterations", SDPRL_MEMBER(max_mm_iterations), count,
                             "MM iteration cap (L-BFGS: its iteration cap; type \"spheres\": its sweeps)"));
  t.push_back(number_option("relative_tolerance", SDPRL_MEMBER(relative_tolerance), NumberRule::non_negative(),
                            "stop when |F_k - F_{k+1}| / max(|F_k|, 1e-12 |F_0|) is below this ..."));
  t.push_back(number_option(
      "stationarity_tolerance", SDPRL_MEMBER(stationarity_tolerance), NumberRule::non_negative(),
      "xt_step = \"exact-finish\" (auto's choice for sdpa models, with max_rank and for l1 without a constraint where the "
      "dual coordinate step does not apply): on the exact surrogate the run ends only "
      "when the ADMM's dual also proves that "
      "no exact MM step from X lowers the surrogate by more than this times the size of F's parts "
      "(summary.json: stationarity); 0 = small steps alone"));
  t.push_back(boolean_option(
      "measure_stationarity", SDPRL_MEMBER(measure_stationarity),
      "at the end of a row-split run, measure how far its result is from a fixed point of the exact surrogate: "
      "F(X) - min H over the size of F's parts, bracketed from above and below (summary.json: stationarity, "
      "stationarity_lower; docs/method.md section 7.2) by up to 300 iterations on the exact surrogate (the dual "
      "coordinate step where it applies, else the linearised ADMM), and a message when it is proved above "
      "stationarity_tolerance. Not under a constraint or where B is not diagonal (an A-term with gamma > 0). Off "
      "by default: it costs 3-10% of the time (quickstart: 0.098 -> 0.107 s per lambda; m = 2000: 7%) and, as the "
      "exact surrogate is built beside the run's, memory (m = 100000: peak 1.84 GB against 1.24 GB)"));
  t.push_back(number_option(
      "feasibility_tolerance", SDPRL_MEMBER(feasibility_tolerance), NumberRule::non_negative(),
      "models whose terms are constraints (sdpa): the largest relative violation a result may have. Above "
      "it, or when F is unbounded, the run lowers gamma tenfold and solves again from that result, up to "
      "four times, unless [regularizer] sets gamma (summary.json: penalty_path); a result still above it "
      "ends with status infeasible (exit 1). Also the bound on the relative duality gap and dual infeasibility "
      "for summary.json's constrained.optimal, and so for status optimal (docs/method.md section 9)"));
  t.push_back(integer_option("consecutive", SDPRL_MEMBER(consecutive), NumberRule::closed(1, 1e6),
                             "... on this many consecutive MM steps ..."));
  t.push_back(integer_option("min_mm_iterations", SDPRL_MEMBER(min_mm_iterations), NumberRule::closed(0, 1e9),
                             "... and not before this many MM steps"));
  t.push_back(number_option(
      "curvature_scale", SDPRL_MEMBER(curvature_scale), NumberRule::closed(0, 1),
      "tau, the share of the loss terms' curvature bound C kept by each MM step's surrogate "
      "(B = tau C + (lambda I + gamma A_+) / 2). 1 is the paper's majoriser; below 1 a step is accepted "
      "only when F(X_k + Xt) <= H(Xt), and a refused one is taken again with tau doubled (summary.json: "
      "rejected_steps and the final curvature_scale). C is loose when many terms share a row of X, and "
      "there a smaller tau can save MM steps. 0: automatic, from 1; on the exact surrogate (coupled Xt-step, "
      "auto's finish, or terms that do not split by rows) of a model without a constraint split (X >= 0 on the dual coordinate step has none), halved on trial after a step that needed under a "
      "quarter of it (the curvature measured along the step), the halving undone unless the next step gains "
      "as much per ADMM iteration as the last one did; never below 2^(refused steps) / 64; below 1 a step "
      "is also small when F moved by less than relative_tolerance per step over the last `consecutive` "
      "steps (docs/method.md section 2.1)"));
  t.push_back(number_option("time_limit", SDPRL_MEMBER(time_limit), NumberRule::non_negative(),
                            "seconds (a resumed run counts the time before its interruption too)", "none"));
  t.push_back(number_option(
      "checkpoint_interval", SDPRL_MEMBER(checkpoint_interval), NumberRule::non_negative(),
      "seconds between checkpoints (checkpoint.sdprl in the output directory, for `sdprl run --resume`; MM "
      "solver only); an interrupt always writes one",
      "none"));
  t.push_back(choice_option(
      "init", SDPRL_MEMBER(init),
      {choice("spectral", InitKind::kSpectral,
              "the top-r eigenvectors of sum_tau t_tau sym(Q_tau), scaled by a robust fit"),
       choice("gaussian", InitKind::kGaussian, "X_ij ~ N(0, init_scale^2)"),
       choice("file", InitKind::kGiven, "the matrix in init_file"),
       choice("model", InitKind::kModel, "the application's own start (e.g. PCA for sparse-pca)")},
      "the starting point X_0"));
  t.push_back(file_option("init_file",
                          "with init = \"file\": X_0 as a MatrixMarket array (n x r), relative to the model file"));
  t.push_back(number_option("init_scale", SDPRL_MEMBER(init_scale), NumberRule::positive(),
                            "standard deviation of the Gaussian start"));
  t.push_back(boolean_option(
      "overrelax", SDPRL_MEMBER(overrelax),
      "on the exact surrogate without a constraint (admm.xt_step = \"auto\" where it runs it, \"exact-finish\" once it has switched, or "
      "\"coupled\") and on all-entries terms (sparse PCA, its trials projected onto the constraint), lengthen each accepted MM step "
      "X_k -> X_k + Xt to the lowest F among X_k + (1 + s) Xt, s = 1, 2, 4, ..., 64, while F keeps falling "
      "(summary.json: overrelaxed_steps; docs/method.md section 7.5). No effect elsewhere"));
  t.push_back(boolean_option(
      "polish", SDPRL_MEMBER(polish),
      "for a linear loss (l1) without a constraint, a result whose certificate is not optimal but within 0.1 of "
      "it (or has no bound, as on sdpa models) is polished: Newton's method (MINRES on its KKT systems, within a work budget) on the terms it fits "
      "exactly, the guess corrected where the KKT point contradicts it; the point is kept when F and the "
      "certified gap (without a bound: -lambda_min(S)) are lower there (summary.json: polish; docs/method.md section 7.6)"));
  t.push_back(boolean_option("l1_warm_start", SDPRL_MEMBER(l1_warm_start),
                             "first solve the convex l1 problem from the start above, then start the chosen "
                             "loss from its solution"));
  t.push_back(boolean_option("lambda_path", SDPRL_MEMBER(lambda_path),
                             "a lambda grid: each lambda after the first starts from the previous lambda's result "
                             "in place of init (its l1 warm start, if any, then runs from there); with the rank "
                             "staircase, from the previous result's rank"));
  t.push_back(integer_option("seed", SDPRL_MEMBER(seed), NumberRule::non_negative(),
                             "seed of the Gaussian start and of the applications' synthetic data"));
  t.push_back(integer_option("print_every", SDPRL_MEMBER(print_every), count,
                             "print every k-th MM iteration (the first and the last always)"));
  t.push_back(integer_option(
      "threads", SDPRL_MEMBER(threads), NumberRule::closed(0, 4096),
      "threads of the row loops (OpenMP); the result is the same for any count. `sdprl run` bounds how long a "
      "waiting thread spins (GOMP_SPINCOUNT=3000 unless GOMP_SPINCOUNT or OMP_WAIT_POLICY is set), so that a "
      "busy core does not stall its partner",
      "OpenMP's default (OMP_NUM_THREADS, else every core)"));
  t.push_back(integer_option("lbfgs_memory", SDPRL_MEMBER(lbfgs_memory), NumberRule::closed(1, 1000),
                             "L-BFGS: correction pairs kept (L-BFGS also reads max_mm_iterations, "
                             "relative_tolerance and consecutive)"));
  t.push_back(integer_option("admm.max_iterations", SDPRL_MEMBER(admm.max_iterations), count,
                             "ADMM iterations per MM step, at most; an ADMM stopped here above its tolerance still "
                             "gives a step, but a run whose last `consecutive` small steps all came from such ADMMs "
                             "ends with status iteration_limit, not converged (docs/method.md section 7)"));
  t.push_back(number_option("admm.rho", SDPRL_MEMBER(admm.rho), NumberRule::non_negative(),
                            "the ADMM penalty; the automatic one is the larger of rho_scale / phi'(0) and "
                            "tr(2B) / tr(P*P) at the first MM step",
                            "automatic"));
  t.push_back(number_option("admm.rho_scale", SDPRL_MEMBER(admm.rho_scale), NumberRule::positive(),
                            "numerator of the automatic rho"));
  t.push_back(number_option("admm.b0", SDPRL_MEMBER(admm.b0), NumberRule::positive(),
                            "exponent of the ADMM tolerance schedule eps_k = max(min_tolerance, c0 / k^b0)"));
  t.push_back(number_option("admm.c0", SDPRL_MEMBER(admm.c0), NumberRule::non_negative(),
                            "numerator of the tolerance schedule; the automatic one is the size of F's parts "
                            "at the start, sum phi + |gamma/2 <X, A X>| + lambda/2 ||X||^2 (F(X_0) when A is "
                            "PSD)",
                            "automatic"));
  t.push_back(number_option("admm.min_tolerance", SDPRL_MEMBER(admm.min_tolerance), NumberRule::positive(),
                            "eps_min, the floor of the tolerance schedule"));
  t.push_back(choice_option(
      "admm.xt_step", SDPRL_MEMBER(admm.split),
      {choice("auto", SplitMode::kAuto,
              "the exact surrogate where its dual coordinate step applies (entry and distance terms, no "
              "constraint or X >= 0; an A-term's and the distance terms' curvature through diagonal "
              "majorants: matrix completion, NPKL, CMVU, SNMF), its steps solved relative to their gain once small, "
              "ending at a point whose distance from a fixed point is bracketed (summary.json: "
              "stationarity); \"exact-finish\" for models whose terms are constraints (sdpa), with max_rank and "
              "for a linear loss (l1) without a constraint (a convex problem, which the certificate and the "
              "polish then close); \"row-split\" "
              "elsewhere (sparse PCA, general sparse terms under a concave loss), where the exact steps cost 10-500x the row-split ones "
              "(docs/method.md section 7.2)"),
       choice("exact-finish", SplitMode::kExactFinish,
              "row-split until its steps stall (the relative-change rule), then the exact surrogate until "
              "the run is proved stationary (stationarity_tolerance); on the exact surrogate from the start "
              "where its dual coordinate step applies (not with coupled_step = \"auto\" and "
              "anderson_memory = 0, where that is CG)"),
       choice("row-split", SplitMode::kRowSplit,
              "n independent r x r solves only; may stop above a stationary point where terms have zero "
              "residual"),
       choice("coupled", SplitMode::kCoupled,
              "the exact surrogate of every step (solved as coupled_step says), ended by rule 4 once its "
              "steps are also solved relative to their gain (decrease_ratio)")},
      "the Xt-step of the ADMM"));
  t.push_back(number_option("admm.cg_tolerance", SDPRL_MEMBER(admm.cg_tolerance), NumberRule::open(0, 1),
                            "coupled Xt-step: CG stops at ||res|| <= cg_tolerance * min(1, eps_k) * ||rhs||; "
                            "it starts from the previous MM step's Xt"));
  t.push_back(integer_option("admm.cg_max_iterations", SDPRL_MEMBER(admm.cg_max_iterations), count,
                             "coupled Xt-step: CG iteration cap per ADMM iteration"));
  t.push_back(choice_option(
      "admm.preconditioner", SDPRL_MEMBER(admm.preconditioner),
      {choice("auto", CgPreconditioner::kAuto,
              "blocks while they take at most " + megabytes + " MB, else row-scaled (CG waits on blocks that "
              "outgrow the caches)"),
       choice("blocks", CgPreconditioner::kBlocks, "the inverted r x r row blocks of 2B + rho P*P (n r^2 doubles)"),
       choice("row-scaled", CgPreconditioner::kRowScaled,
              "each block replaced by its mean eigenvalue times I (n doubles)")},
      "coupled Xt-step: CG's preconditioner"));
  t.push_back(choice_option(
      "admm.coupled_step", SDPRL_MEMBER(admm.coupled_step),
      {choice("auto", CoupledStep::kAuto,
              "dual-cd where it applies, else linearized where it applies, else cg; also cg without Anderson "
              "acceleration (anderson_memory = 0) in runs not coupled from the start (auto's finish)"),
       choice("cg", CoupledStep::kCg, "each ADMM iteration solves the coupled system by preconditioned CG"),
       choice("linearized", CoupledStep::kLinearized,
              "each ADMM iteration solves the row blocks of a majorant of the coupled system, with the "
              "proximal correction that keeps the exact surrogate's fixed points, whatever the blocks' size "
              "(cg where B is not diagonal)"),
       choice("dual-cd", CoupledStep::kDualCoordinate,
              "no ADMM: exact coordinate ascent on the surrogate's dual, one sweep over the terms per "
              "iteration, no rho (entry terms with B diagonal, no constraint or X >= 0, and distance terms under "
              "xt_step = \"auto\", whose B is diagonal; elsewhere linearized, whatever "
              "the blocks' size, where B is diagonal, else cg)")},
      "how the exact surrogate's Xt-step is solved (docs/method.md sections 3.4 and 3.9)"));
  t.push_back(integer_option(
      "admm.subspace_iterations", SDPRL_MEMBER(admm.subspace_iterations), NumberRule::closed(0, 1000),
      "dual coordinate step: after each sweep but an MM step's first, the multipliers inside their box "
      "move together by this many CG iterations of the dual's Newton step on them, projected onto the box "
      "(docs/method.md section 3.9); 0 = coordinate ascent alone"));
  t.push_back(number_option(
      "admm.decrease_ratio", SDPRL_MEMBER(admm.decrease_ratio), NumberRule::non_negative(),
      "xt_step = \"coupled\" on the dual coordinate step, once rule 4 first holds: each MM step's sweeps "
      "go on until its gap is also at most this times what the step has gained, F(X_k) - H(Xt) (or below "
      "half the stationarity tolerance), so that each step gains at least 1 / (1 + this) of what its "
      "surrogate can, and the run ends when its steps are small again, near a fixed point, not on a loose "
      "solve (docs/method.md section 3.9). 0 = off: the run ends at its first small steps"));
  t.push_back(integer_option(
      "admm.preconditioner_refresh", SDPRL_MEMBER(admm.preconditioner_refresh), count,
      "coupled Xt-step: rebuild CG's block preconditioner (linearized, for terms without a bound on "
      "the rows each touches: re-estimate the majorant's scale) at every this many-th MM step and "
      "reuse it in between (a preconditioner changes CG's work, not its answer); 1 = every step. "
      "Under a constraint (X >= 0) CG's is rebuilt at every step"));
  t.push_back(number_option("admm.rho_constraint", SDPRL_MEMBER(admm.rho_constraint), NumberRule::non_negative(),
                            "penalty of the constraint split Y = X_k + Xt, Y in K (models with X >= 0); the "
                            "automatic one is the mean diagonal of 2B",
                            "automatic"));
  t.push_back(integer_option(
      "admm.anderson_memory", SDPRL_MEMBER(admm.anderson_memory), NumberRule::closed(0, 100),
      "Anderson acceleration of an ADMM run that passes 10 iterations (the tight ones: auto's finish where "
      "the dual coordinate step does not apply, SDPA problems), from this many past iterates, safeguarded (docs/method.md section 3.7); runs that "
      "stop sooner are unchanged. 0 = off"));
  t.push_back(boolean_option(
      "admm.adaptive_rho", SDPRL_MEMBER(admm.adaptive_rho),
      "with the automatic rho (admm.rho = 0), balance it in ADMM runs on the exact surrogate that pass 20 "
      "iterations (auto's finish and coupled runs where the dual coordinate step does not apply, SDPA "
      "problems): every 20th iteration rho becomes rho "
      "sqrt(relative primal residual / relative dual residual) when that is more than 2 times away (at "
      "most 10 times per change), as OSQP does, and the next MM steps keep it (trace.csv: rho, as at the "
      "end of each step's ADMM; docs/method.md section 3.8). Not on the row-split surrogate; under a "
      "constraint (X >= 0) the split's own penalty is not balanced; runs that stop sooner are unchanged"));
  return t;
}

#undef SDPRL_MEMBER

// The table holding `key` ("admm.rho": solver's table "admm") and the key's last part.
std::pair<ConfigTable, std::string> locate(const ConfigTable& solver, const std::string& key) {
  ConfigTable table = solver;
  std::size_t start = 0;
  for (std::size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', start)) {
    table = table.table(key.substr(start, dot - start));
    start = dot + 1;
  }
  return {table, key.substr(start)};
}

// init_file: read with init = "file" (and required then), refused otherwise.
void read_init_file(const ConfigTable& t, const std::string& key, const SolverOptions& o, Matrix* given_start) {
  if (o.init == InitKind::kGiven) {
    const auto file = t.file(key);
    if (!file) t.fail(key, "init = \"file\" needs init_file = \"X.mtx\" (MatrixMarket array)");
    *given_start = io::read_matrix_market_array(*file);
  } else if (t.contains(key)) {
    t.fail(key, "init_file is used only with init = \"file\"");
  }
}

std::string default_name(const SolverOption& option, const SolverOptions& defaults) {
  const int value = static_cast<int>(option.get(defaults));
  for (const OptionChoice& c : option.choices)
    if (c.value == value) return c.name;
  return {};
}

std::string values_text(const SolverOption& option, bool markdown);

void read_option(const ConfigTable& solver, const SolverOption& option, const SolverOptions& defaults,
                 SolverOptions& o, Matrix* given_start) {
  const auto [t, key] = locate(solver, option.key);
  switch (option.kind) {
    case OptionKind::kInteger:
      if (!option.word.empty() && t.is_string(key)) {
        const std::string given = t.string(key, option.word);
        if (given != option.word)
          t.fail(key, "expected " + values_text(option, false) + ", got \"" + given + "\"");
        option.set_integer(o, option.word_value);
        break;
      }
      option.set_integer(o, t.integer(key, static_cast<std::int64_t>(option.get(defaults)), option.rule));
      break;
    case OptionKind::kNumber:
      option.set_number(o, t.number(key, option.get(defaults), option.rule));
      break;
    case OptionKind::kBoolean:
      option.set_integer(o, t.boolean(key, option.get(defaults) != 0.0) ? 1 : 0);
      break;
    case OptionKind::kChoice: {
      std::vector<std::string> names;
      for (const OptionChoice& c : option.choices) names.push_back(c.name);
      const std::string name = t.string(key, default_name(option, defaults), names);
      for (const OptionChoice& c : option.choices)
        if (c.name == name) option.set_integer(o, c.value);
      break;
    }
    case OptionKind::kFile:
      read_init_file(t, key, o, given_start);
      break;
  }
}

// --- The reference ---------------------------------------------------------------------------

// A TOML string as a model file writes it; in Markdown as code.
std::string quoted(const std::string& name, bool markdown) {
  return markdown ? "`\"" + name + "\"`" : "\"" + name + "\"";
}

// The default as a model file would write it ("0.001", "\"auto\""), with what a sentinel means.
std::string default_text(const SolverOption& option, const SolverOptions& defaults, bool markdown) {
  switch (option.kind) {
    case OptionKind::kFile: return "none";
    case OptionKind::kBoolean: return option.get(defaults) != 0.0 ? "true" : "false";
    case OptionKind::kChoice: return quoted(default_name(option, defaults), markdown);
    case OptionKind::kInteger:
    case OptionKind::kNumber: break;
  }
  const double value = option.get(defaults);
  if (value == 0.0 && !option.zero_means.empty()) {
    return option.rule.accepts(0.0) ? "0 (" + option.zero_means + ")" : "absent (" + option.zero_means + ")";
  }
  return format_number(value);
}

std::string values_text(const SolverOption& option, bool markdown) {
  switch (option.kind) {
    case OptionKind::kInteger:
      return "an integer" + bounds(option.rule) + (option.word.empty() ? "" : " or " + quoted(option.word, markdown));
    case OptionKind::kNumber: return "a number" + bounds(option.rule);
    case OptionKind::kBoolean: return "true or false";
    case OptionKind::kFile: return "a file name";
    case OptionKind::kChoice: break;
  }
  std::string out;
  for (std::size_t i = 0; i < option.choices.size(); ++i) {
    if (i > 0) out += i + 1 == option.choices.size() ? " or " : ", ";
    out += quoted(option.choices[i].name, markdown);
  }
  return out;
}

// Text for a Markdown table cell: '|' would end the cell, and outside code spans '*' could open
// emphasis and '<' before a letter an HTML tag ('_' inside words is literal in GitHub's Markdown).
std::string cell(const std::string& text) {
  std::string out;
  bool code = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '`') code = !code;
    const bool tag = c == '<' && i + 1 < text.size() && std::isalpha(static_cast<unsigned char>(text[i + 1]));
    if (c == '|' || (!code && (c == '*' || tag))) out += '\\';
    out += c;
  }
  return out;
}

// The description with the choices' and a non-default sentinel's meaning.
std::vector<std::string> meaning_lines(const SolverOption& option, const SolverOptions& defaults, bool markdown) {
  std::vector<std::string> lines{markdown ? cell(option.doc) : option.doc};
  const bool numeric = option.kind == OptionKind::kInteger || option.kind == OptionKind::kNumber;
  if (numeric && !option.zero_means.empty() && option.get(defaults) != 0.0) {
    lines[0] += "; 0 = " + (markdown ? cell(option.zero_means) : option.zero_means);
  }
  for (const OptionChoice& c : option.choices)
    lines.push_back(quoted(c.name, markdown) + ": " + (markdown ? cell(c.doc) : c.doc));
  return lines;
}

// `text` in lines of at most `width` characters after `indent` spaces, broken at spaces.
void wrap(std::ostream& os, const std::string& text, std::size_t indent, std::size_t width) {
  std::istringstream words(text);
  std::string word;
  std::string line;
  while (words >> word) {
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      os << std::string(indent, ' ') << line << '\n';
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty()) os << std::string(indent, ' ') << line << '\n';
}

std::string table_of(const SolverOption& option) {
  const std::size_t dot = option.key.rfind('.');
  return dot == std::string::npos ? "solver" : "solver." + option.key.substr(0, dot);
}

std::string leaf_of(const SolverOption& option) {
  const std::size_t dot = option.key.rfind('.');
  return dot == std::string::npos ? option.key : option.key.substr(dot + 1);
}

// The options reference: an introduction, then one entry per key of the table.
template <class Entry>
std::string reference(const char* introduction, Entry&& entry) {
  const SolverOptions defaults;
  std::ostringstream os;
  os << introduction;
  for (const SolverOption& option : solver_option_table()) entry(os, option, defaults);
  return os.str();
}

std::string markdown_reference() {
  std::string current;  // the table of the last row written
  return reference(
      "# Solver options\n\n"
      "<!-- Generated by `sdprl help options --markdown` from framework/src/config/options_table.cc;\n"
      "     edit that table, not this file. -->\n\n"
      "The keys of the `[solver]` table of a model file and of its sub-table `[solver.admm]`, with\n"
      "their defaults and the values each accepts. A key can also be set on the command line:\n"
      "`sdprl run model.toml --set solver.rank=5 --set solver.admm.rho=2`. A value outside its\n"
      "range and a key that is not listed here are refused with the line they are on.\n",
      [&](std::ostream& os, const SolverOption& option, const SolverOptions& defaults) {
        const std::string table = table_of(option);
        if (table != current) {
          current = table;
          os << "\n## `[" << table << "]`\n\n"
             << "| key | default | values | meaning |\n"
             << "|---|---|---|---|\n";
        }
        const std::vector<std::string> lines = meaning_lines(option, defaults, true);
        std::string meaning = lines[0];
        for (std::size_t i = 1; i < lines.size(); ++i) meaning += (i == 1 ? ". " : "; ") + lines[i];
        os << "| `" << leaf_of(option) << "` | " << default_text(option, defaults, true) << " | "
           << values_text(option, true) << " | " << meaning << " |\n";
      });
}

std::string text_reference() {
  return reference(
      "The keys of [solver] in a model file (those of [solver.admm] are written admm.KEY here), with\n"
      "their defaults and the values each accepts. Set one in the file or on the command line:\n"
      "  sdprl run model.toml --set solver.rank=5 --set solver.admm.rho=2\n"
      "(`sdprl help options --markdown` prints this as docs/options.md.)\n\n",
      [](std::ostream& os, const SolverOption& option, const SolverOptions& defaults) {
        os << option.key << " = " << default_text(option, defaults, false) << "    (" << values_text(option, false)
           << ")\n";
        for (const std::string& line : meaning_lines(option, defaults, false)) wrap(os, line, 4, 100);
      });
}

}  // namespace

std::string SolverOption::violation(double value) const {
  if (kind != OptionKind::kInteger && kind != OptionKind::kNumber) return {};
  if (rule.accepts(value) || (!zero_means.empty() && value == 0.0)) return {};
  if (!word.empty() && value == static_cast<double>(word_value)) return {};
  std::string message = "must be" + bounds(rule);
  const std::string word_means = word.empty() ? "" : std::to_string(word_value) + " for \"" + word + "\"";
  if (!zero_means.empty()) {
    message += rule.accepts(0.0) ? " (0 = " + zero_means + (word.empty() ? ")" : ", " + word_means + ")")
                                 : " (or 0 for " + zero_means + (word.empty() ? ")" : ", " + word_means + ")");
  } else if (!word.empty()) {
    message += " (or " + word_means + ")";
  }
  return message;
}

const std::vector<SolverOption>& solver_option_table() {
  static const std::vector<SolverOption> table = make_table();
  return table;
}

SolverOptions read_solver_options(const ConfigTable& solver, Matrix* given_start) {
  const SolverOptions defaults;
  SolverOptions o;
  for (const SolverOption& option : solver_option_table()) read_option(solver, option, defaults, o, given_start);
  return o;
}

std::uint64_t read_seed(const ConfigTable& solver) {
  const SolverOptions defaults;
  SolverOptions o;
  for (const SolverOption& option : solver_option_table())
    if (option.key == "seed") read_option(solver, option, defaults, o, nullptr);
  return o.seed;
}

std::string solver_options_reference(bool markdown) { return markdown ? markdown_reference() : text_reference(); }

// Ceres-style validation (sdprl/solver.h): the first member that breaks its key's rule.
bool SolverOptions::is_valid(std::string* error) const {
  for (const SolverOption& option : solver_option_table()) {
    if (!option.get) continue;
    const double value = option.get(*this);
    const std::string why = option.violation(value);
    if (why.empty()) continue;
    if (error) {
      const std::string shown = option.kind == OptionKind::kInteger
                                    ? std::to_string(static_cast<long long>(value))
                                    : format_number(value);
      *error = option.full_key() + " = " + shown + ": " + why;
    }
    return false;
  }
  return true;
}

}  // namespace sdprl
