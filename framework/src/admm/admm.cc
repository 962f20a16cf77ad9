// The inner ADMM on the surrogate H (docs/method.md section 3; formulas in mm/surrogate.h). The
// Xt-step is a strategy (xt_step/xt_step.h); this file is the rest of the iteration.
#include "admm/admm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "admm/anderson.h"
#include "admm/row_kernel.h"
#include "admm/soft_step.h"
#include "parallel/processes.h"
#include "sdprl/error.h"

namespace sdprl {

Admm::Admm(const Surrogate& surrogate, double rho, const AdmmOptions& options, const xt_step::Paths& paths)
    : s_(surrogate), rho_(rho), constraint_(surrogate.model().constraint.get()), options_(options), paths_(paths) {}

Admm::~Admm() = default;

namespace {
// Distinct for every prepare() of every Admm, so that a state never takes another P's P*(nu).
std::uint64_t next_generation() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}
}  // namespace

void Admm::choose_xt_step() {
  // Once: the strategy depends on the model, the split and the options only (whether B is diagonal
  // is known after the surrogate's first update).
  if (!xt_) xt_ = xt_step::make_xt_step(s_, options_, constraint_ != nullptr, paths_);
}

bool Admm::update_and_iterate(Surrogate& surrogate, const Matrix& Xk, AdmmState& st) {
  primed_ = false;
  // The strategy is set by the first prepare().
  if (&surrogate != &s_ || !xt_ || !xt_->fuses_rebuild()) {
    surrogate.update(Xk);
    return false;
  }
  reset_if_needed(st);
  st.pack(rho_);
  generation_ = next_generation();
  if (!xt_->rebuild_and_iterate(surrogate, Xk, st, rho_)) return false;  // the caller prepares
  primed_ = true;
  return true;
}

void Admm::prepare(bool rebuild_preconditioner) {
  generation_ = next_generation();
  primed_ = false;
  choose_xt_step();
  xt_->prepare(rho_, rebuild_preconditioner);
}

void Admm::set_rho(double rho) {
  rho_ = rho;
  generation_ = next_generation();  // the linearised step's carried P*(...) holds rho
  xt_->set_rho(rho);
}

std::string Admm::save_warm_start(const AdmmState& state) const { return xt_ ? xt_->save(state.D) : std::string(); }

void Admm::restore_warm_start(const std::string& saved, Surrogate& surrogate, AdmmState& state) {
  if (&surrogate != &s_) throw std::invalid_argument("Admm::restore_warm_start: another surrogate");
  choose_xt_step();
  generation_ = next_generation();
  primed_ = false;
  xt_->restore(saved, surrogate, rho_, state.D);
}

void AdmmState::pack(double rho) {
  if (packed_rho == rho) return;
  unpack();  // a state packed at another rho
  // u = nu + rho e (admm/admm_state.h), in nu's storage; e is freed, not kept stale (m = 10^5: 185
  // MB), and no third vector is allocated on the way.
  if (nu.size() != e.size()) throw std::invalid_argument("AdmmState::pack: nu and e differ in size");
  nu += rho * e;
  u.swap(nu);
  packed_rho = rho;
  packed_weights = nullptr;  // unit bounds unless the packer says otherwise (the dense pass)
  Vector().swap(nu);
  Vector().swap(e);
  adjoint_generation = 0;
}

void AdmmState::share_rows() {
  if (partial_rows.empty()) return;
  if (partial_rows.back() != D.rows()) {
    partial_rows.clear();  // (not a state of the pass that marked it)
    return;
  }
  processes::share_items(D.data(), partial_rows, D.cols());
  step = D;  // the pass splits only without a constraint, where the step is D
  partial_rows.clear();
}

void AdmmState::share_packed() {
  if (partial_terms.empty()) return;
  if (partial_terms.back() == u.size()) processes::share_items(u.data(), partial_terms, 1);
  partial_terms.clear();
}

void AdmmState::unpack() {
  share_packed();
  if (!packed()) return;
  if (packed_weights) {
    const Vector& w = packed_weights->term_weights();
    if (w.size() != u.size()) throw std::invalid_argument("AdmmState::unpack: weights and u differ in size");
    nu = u.array().max(-2.0 * w.array()).min(2.0 * w.array()).matrix();
  } else {
    nu = detail::clamp_nu(u.array()).matrix();
  }
  packed_weights = nullptr;
  e = (u - nu) / packed_rho;
  packed_rho = 0.0;
  Vector().swap(u);
  adjoint_generation = 0;
}

void Admm::reset_if_needed(AdmmState& state) const {
  const Index n = s_.rows(), r = s_.rank(), h = s_.split_terms();
  if (state.D.rows() != n || state.D.cols() != r) state.D.setZero(n, r);
  if (state.packed() && state.u.size() != h) {  // a packed state of another problem: dropped
    state.packed_rho = 0.0;
    state.packed_weights = nullptr;
    Vector().swap(state.u);
  }
  if (!state.packed() && state.keep_packed && (fused() || dense()) &&
      (state.e.size() != h || state.nu.size() != h)) {
    // A fresh state for the fused pass: nu = e = 0 is u = 0 (no nu and e to allocate and pack).
    // Only with keep_packed: a caller that sets nu and e by hand after this call expects them used.
    Vector().swap(state.nu);
    Vector().swap(state.e);
    state.u.setZero(h);
    state.packed_rho = rho_;
  }
  if (!state.packed()) {
    if (state.e.size() != h || state.nu.size() != h) state.adjoint_generation = 0;
    if (state.e.size() != h) state.e.setZero(h);
    if (state.nu.size() != h) state.nu.setZero(h);
  }
  if (constraint_ && (state.mu.rows() != n || state.mu.cols() != r)) state.mu.setZero(n, r);
}

void Admm::iterate(AdmmState& st, double eps) {
  step(st, eps);
  st.share_rows();
  if (!st.keep_packed) st.unpack();
}

void Admm::step(AdmmState& st, double eps, bool gap) {
  if (xt_->iterate_rows(st, rho_, eps)) return;  // the fused row pass: the whole iteration
  const TermLinearization& lin = s_.linearization();
  const Vector& b = lin.offsets();
  const double rho_k = xt_->split_penalty();
  st.unpack();
  // Xt-step: (2B + rho P*P) D = -G - P*(nu + rho (b - e)). With an exact Xt-step, P*(nu) and
  // P*(b - e) are carried from the last iteration (see below), computed afresh once per prepare().
  const bool carried = xt_->exact() || xt_->linearized();
  if (xt_->linearized()) {
    // The linearised step (xt_step.h): M~ D = -G - P*(nu + rho (b - e + P D_t)) + (M~ - 2B - rho_k) D_t,
    // i.e. the exact right-hand side plus (M~ - M) D_t. Pu carries P*(nu + rho (b - e + P D_t)):
    // after the nu-step rho (P D + b - e') = nu' - nu, so it is 2 P*(nu') - P*(nu), and one adjoint
    // (of nu', which the dual needs anyway) per iteration serves both.
    if (st.adjoint_generation != generation_ || st.Pnu.rows() != s_.rows()) {
      lin.apply(st.D, st.PD);
      lin.apply_adjoint(st.nu, st.Pnu);
      y_ = b - st.e + st.PD;
      lin.apply_adjoint(y_, st.Pu);
      st.Pu = st.Pnu + rho_ * st.Pu;
      st.adjoint_generation = generation_;
    }
    xt_->proximal_term(st.D, work_);
    rhs_ = work_ - s_.G() - st.Pu;
  } else if (carried) {
    if (st.adjoint_generation != generation_ || st.Pnu.rows() != s_.rows()) {
      lin.apply_adjoint(st.nu, st.Pnu);
      y_ = b - st.e;
      lin.apply_adjoint(y_, st.Pu);
      st.adjoint_generation = generation_;
    }
    rhs_ = -s_.G() - st.Pnu - rho_ * st.Pu;
  } else {
    y_ = st.nu + rho_ * (b - st.e);
    lin.apply_adjoint(y_, work_);
    rhs_ = -s_.G() - work_;
  }
  if (constraint_) {
    // ... - mu - rho_k (X_k - Y): the constraint split X_k + D - Y = 0 (sdprl/constraint.h).
    if (st.Y.rows() != rhs_.rows()) st.Y = s_.center();
    rhs_ -= st.mu + rho_k * (s_.center() - st.Y);
  }
  // The exact steps solve the blocks directly; the coupled step's CG starts from the previous Xt.
  xt_->solve(rhs_, st.D, eps, &st.cg_iterations);
  // e-step and nu-step, elementwise.
  lin.apply(st.D, st.PD);
  // Threshold 2 w_h / rho (w_h = 1 unless the family keeps its weights outside P).
  const Vector* w = term_weights(lin);
  if (w)
    detail::soft_step<true>(st.PD.data(), b.data(), w->data(), rho_, b.size(), st.e.data(), st.nu.data());
  else
    detail::soft_step<false>(st.PD.data(), b.data(), nullptr, rho_, b.size(), st.e.data(), st.nu.data());
  if (xt_->linearized()) {
    work2_.swap(st.Pnu);
    lin.apply_adjoint(st.nu, st.Pnu);
    st.Pu = 2.0 * st.Pnu - work2_;
  } else if (carried) {
    // nu' = nu + rho (P(D) + b - e'), so P*(nu') = P*(nu) + rho P*P D + rho P*(b - e'): one adjoint
    // (of b - e', needed for the next Xt-step anyway) and the Gram blocks instead of a second one.
    y_ = b - st.e;
    lin.apply_adjoint(y_, st.Pu);
    xt_->apply_gram(st.D, work_);
    st.Pnu += rho_ * (work_ + st.Pu);
  }
  if (constraint_) {
    // Y-step: projection; mu-step: stays in the polar cone of K (e.g. mu <= 0 for X >= 0).
    // With Z = X_k + D + mu/rho_k: Y = proj_K(Z) and mu + rho_k (X_k + D - Y) = rho_k (Z - Y).
    // The second form is exact in floating point for a cone (Z - max(0, Z) = min(0, Z) <= 0),
    // where the first can leave mu = +1e-17 and make sigma_K(mu) infinite.
    work2_ = s_.center() + st.D + st.mu / rho_k;
    st.Y = work2_;
    constraint_->project(st.Y);
    st.mu = rho_k * (work2_ - st.Y);
    st.step = st.Y - s_.center();
  } else {
    st.step = st.D;
  }
  if (!gap) {
    st.gap = std::numeric_limits<double>::infinity();
    return;
  }
  if (constraint_) {
    // The primal value at the feasible point Y, so that the gap bounds the true suboptimality.
    st.primal = s_.value(st.step);
    st.dual = carried ? s_.dual_given_adjoint(st.nu, st.Pnu, &st.mu) : s_.dual(st.nu, &st.mu);
  } else {
    st.primal = s_.value(st.D, &st.PD);
    st.dual = carried ? s_.dual_given_adjoint(st.nu, st.Pnu) : s_.dual(st.nu);
  }
  st.gap = st.primal - st.dual;
}

// OSQP's residual balancing (Stellato et al., "OSQP: an operator splitting solver for quadratic
// programs", 2020, section 5.2) for the split P D + b - e = 0 of the surrogate (docs/method.md
// section 3.8): the primal residual P D + b - e relative to max(|P D|, |e - b|), the dual one the
// Lagrangian's gradient in D, 2 B D + G + P*(nu), relative to max(|2 B D|, |G|, |P*(nu)|) (max
// norms), and rho sqrt(primal / dual), taken when it is over kRhoBand times rho or under 1 / kRhoBand.
// OSQP's band is 5; here the balanced rho of the quickstart's finish sat at 3 to 7 times its rho
// of 2, and 5 left it there (finish 4.2 s), 2 moved it (2.1 s).
double Admm::residual_balanced_rho(const AdmmState& st) {
  constexpr double kRhoBand = 2.0, kRhoStep = 10.0;
  const Vector& b = s_.linearization().offsets();
  if (st.PD.size() != b.size() || st.e.size() != b.size() || st.nu.size() != b.size()) return rho_;
  double primal = 0.0, pd = 0.0, eb = 0.0;
  for (Index k = 0; k < b.size(); ++k) {
    primal = std::max(primal, std::abs(st.PD[k] + b[k] - st.e[k]));
    pd = std::max(pd, std::abs(st.PD[k]));
    eb = std::max(eb, std::abs(st.e[k] - b[k]));
  }
  // P*(nu) is carried by the linearised step (step()); CG's iteration computes it here. (The
  // exact row-block steps are row-split, where run() does not balance.)
  const bool carried = xt_->linearized() && st.Pnu.rows() == s_.rows();
  if (!carried) s_.linearization().apply_adjoint(st.nu, work_);  // (work_ is scratch between steps)
  const Matrix& pnu = carried ? st.Pnu : work_;
  s_.apply_B(st.D, work2_);
  const double bd = 2.0 * work2_.lpNorm<Eigen::Infinity>(), g = s_.G().lpNorm<Eigen::Infinity>();
  const double pn = pnu.lpNorm<Eigen::Infinity>();
  // Under a constraint split the Lagrangian's gradient gains mu (its own penalty rho_k is not balanced).
  const bool split = constraint_ && st.mu.rows() == s_.rows();
  work2_ = 2.0 * work2_ + s_.G() + pnu;  // the gradient, in B D's storage (bd is taken)
  if (split) work2_ += st.mu;
  const double dual = work2_.lpNorm<Eigen::Infinity>();
  const double mu_scale = split ? st.mu.lpNorm<Eigen::Infinity>() : 0.0;
  const double primal_scale = std::max(pd, eb), dual_scale = std::max({bd, g, pn, mu_scale});
  if (!(primal > 0.0 && dual > 0.0 && primal_scale > 0.0 && dual_scale > 0.0)) return rho_;
  // At most kRhoStep per change: one iteration's residuals can be far from the run's (SDPLIB's
  // mcp124-1 asked for rho / 1e7 once).
  const double factor = std::sqrt((primal / primal_scale) / (dual / dual_scale));
  if (!std::isfinite(factor) || (factor <= kRhoBand && factor * kRhoBand >= 1.0)) return rho_;
  const double rho = rho_ * std::clamp(factor, 1.0 / kRhoStep, kRhoStep);
  return std::isfinite(rho) && rho > 0.0 ? rho : rho_;
}

int Admm::run(AdmmState& st, double eps, RelativeStop relative) {
  st.cg_iterations = 0;
  st.rho_updates = 0;
  int t = 0;
  if (primed_) {
    t = 1;  // update_and_iterate() ran the first iteration
    primed_ = false;
  } else {
    reset_if_needed(st);
  }
  // At least one iteration: testing the gap first lets a warm nu return Xt = 0 and stall the MM.
  // The linearised step runs two: its first iteration is centred at the previous MM step's Xt, a
  // point of the previous surrogate, and one such iteration per MM step is all that a loose eps_k
  // asks for; MM then crawls (docs/method.md section 3.4: l1, n = 40, rank 20, tau = 0.1: not
  // converged in 4000 MM steps with one, 930 steps with two, CG 1443).
  const int min_t = xt_ && xt_->linearized() ? std::max(1, std::min(2, options_.max_iterations)) : 1;
  // Anderson acceleration (AdmmOptions::anderson_memory; docs/method.md section 3.7) watches the
  // iterates from the kAndersonAfter-th on and extrapolates from the third it has seen, so a run
  // that ends within kAndersonAfter + 2 iterations is the plain ADMM bit for bit (every shipped
  // model's MM steps at eps_k). The runs it speeds up are the long, tight ones (the exact
  // finish's proofs: 4x to 10x fewer iterations); each extrapolation costs the recomputation of
  // the carried adjoints. Not on the fused row pass (its state is packed per row), nor under a
  // constraint (mu and Y would belong to z), nor on the dense pass (which keeps no P(D) or P*(b - e)).
  std::optional<Anderson> anderson;
  // Nor on the dual coordinate step, which has no rho and whose sweeps ascend the dual monotonically.
  const bool coordinate = xt_ && xt_->kind() == xt_step::Kind::kDualCoordinate;
  const bool accelerate = options_.anderson_memory > 0 && !constraint_ && !fused() && !dense() && !coordinate;
  // Residual balancing of an automatic rho (AdmmOptions::adaptive_rho; docs/method.md section
  // 3.8) at every kRhoEvery-th iteration: the long runs are where the rho chosen at the first MM
  // step for the row-split surrogate is far from the exact surrogate's (the quickstart's finish at
  // lambda = 1: 5030 ADMM iterations at its rho 2, 915 at rho 8). The unpacked nu and e do not
  // depend on rho, so the state stays valid; Anderson's history (of u = nu + rho e) starts afresh.
  // Only on the exact surrogate (terms that couple rows): on the row-split one most runs take one
  // or two iterations, where rho is in effect the MM step's length, and a rho balanced in one long
  // run slowed every later step (SDPLIB's mcp124-1: 1192 MM steps against 526). Under a
  // constraint split only rho moves (rho_k keeps its rule), and the dual residual gains mu: SNMF's
  // finish took 400 to 900 iterations per MM step instead of the 1000 cap.
  const bool adapt = options_.adaptive_rho && options_.rho == 0.0 && !fused() && !coordinate &&
                     !s_.linearization().rows_decoupled();
  // The relative rule: H(0) = F(X_k) is the surrogate's value at the centre, st.primal = H(Xt), so
  // gap <= ratio (H(0) - H(Xt)) gives H(0) - min H <= (1 + ratio) (H(0) - H(Xt)).
  const double center = s_.center_objective();
  const auto solved = [&] {
    return st.gap <= eps &&
           (relative.ratio <= 0.0 || st.gap <= std::max(relative.floor, relative.ratio * (center - st.primal)));
  };
  while (t < min_t || (t < options_.max_iterations && !solved() && std::isfinite(st.gap))) {
    // An iteration before the min_t-th cannot end the run: its gap (under a constraint one more
    // P and a pass over the terms for the value at Y) is not computed.
    step(st, eps, /*gap=*/t + 1 >= min_t);
    ++t;
    if (adapt && t % kRhoEvery == 0 && !solved() && std::isfinite(st.gap) && t < options_.max_iterations) {
      const double rho = residual_balanced_rho(st);
      if (rho != rho_) {
        set_rho(rho);
        anderson.reset();
        ++st.rho_updates;
      }
    }
    if (accelerate && !anderson && t >= kAndersonAfter) anderson.emplace(options_.anderson_memory, xt_->linearized());
    // Not after the last iteration: the state returned is the one whose gap was just measured.
    if (anderson && !solved() && std::isfinite(st.gap) && t < options_.max_iterations)
      anderson->step(st, rho_, term_weights(s_.linearization()));
  }
  st.share_rows();
  if (!st.keep_packed) st.unpack();
  st.iterations = t;
  st.extrapolations = anderson ? anderson->extrapolations() : 0;
  return t;
}

}  // namespace sdprl
