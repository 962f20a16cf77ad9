// The Xt-step strategies (xt_step/xt_step.h) and the factory that picks one.
#include "xt_step/xt_step.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "admm/row_kernel.h"
#include "linalg/pcg.h"
#include "mm/surrogate.h"
#include "sdprl/error.h"
#include "terms/dense_row_split.h"
#include "xt_step/blocks.h"
#include "xt_step/dense_rows.h"
#include "xt_step/dual_coordinate.h"
#include "xt_step/fused_rows.h"

namespace sdprl::xt_step {

const char* to_string(Kind kind) {
  switch (kind) {
    case Kind::kRowBlocks: return "row-blocks";
    case Kind::kSharedBlock: return "shared-block";
    case Kind::kFusedRows: return "fused-rows";
    case Kind::kDenseRows: return "dense-rows";
    case Kind::kCgBlocks: return "cg-blocks";
    case Kind::kCgSharedBlock: return "cg-shared-block";
    case Kind::kCgRowScaled: return "cg-row-scaled";
    case Kind::kLinearizedBlocks: return "linearized-blocks";
    case Kind::kLinearizedSharedBlock: return "linearized-shared-block";
    case Kind::kDualCoordinate: return "dual-coordinate";
  }
  return "?";
}

std::string XtStep::name() const { return std::string(constrained() ? "constrained " : "") + to_string(kind()); }

void XtStep::apply_gram(const Matrix&, Matrix&) const {
  throw std::logic_error(name() + ": apply_gram() of an inexact Xt-step");
}

void XtStep::proximal_term(const Matrix&, Matrix&) const {
  throw std::logic_error(name() + ": proximal_term() of an Xt-step that is not linearised");
}

bool XtStep::iterate_rows(AdmmState&, double, double) { return false; }

bool XtStep::rebuild_and_iterate(Surrogate& surrogate, const Matrix& Xk, AdmmState&, double) {
  surrogate.update(Xk);
  return false;
}

void XtStep::restore(const std::string& saved, Surrogate&, double, Matrix&) {
  if (!saved.empty())
    throw Error("solver", "the saved Xt-step state (" + std::to_string(saved.size()) +
                              " bytes) is not one of this model's Xt-step (" + name() + ", which keeps none)");
}

double XtStep::balanced(double gram_trace) const {
  // tr(2B) / tr(P*P) over the Xt-step's r n unknowns (each diagonal entry of B acts on r of them).
  const double r = static_cast<double>(s_.rank());
  return gram_trace > 0.0 ? 2.0 * r * s_.b_diagonal().sum() / gram_trace : 0.0;
}

namespace {

// kRowBlocks, kSharedBlock: the blocks are the system, solved exactly row by row.
template <class Inverse, Kind kKind>
class Exact final : public ExactBlocks<Inverse> {
 public:
  using ExactBlocks<Inverse>::ExactBlocks;
  Kind kind() const override { return kKind; }
};

// The warm start of the coupled strategies: the last Xt, the iterate at which their
// preconditioner (CG) or majorant scale (linearised) was built, and its age (XtStep::save).
class Refreshed : public XtStep {
 public:
  using XtStep::XtStep;
  int preconditioner_age() const override { return age_; }
  void set_preconditioner_age(int age) override { age_ = age; }

  std::string save(const Matrix& D) const override {
    CgWarmStart warm;
    warm.D = D;
    warm.X_preconditioner = X_reference_;
    warm.preconditioner_age = age_;
    return encode(warm);
  }

  void restore(const std::string& saved, Surrogate& surrogate, double rho, Matrix& D) override {
    CgWarmStart warm;
    const Index n = s_.rows(), r = s_.rank();
    auto fits_or_empty = [&](const Matrix& M) { return M.size() == 0 || (M.rows() == n && M.cols() == r); };
    if (&surrogate != &s_ || (!saved.empty() && !decode(saved, &warm)) || !fits_or_empty(warm.D) ||
        !fits_or_empty(warm.X_preconditioner))
      throw Error("solver", "the saved Xt-step state does not fit this problem (" + name() + ", " + std::to_string(n) +
                                " x " + std::to_string(r) + "; " + std::to_string(saved.size()) + " bytes saved)");
    D = std::move(warm.D);
    if (warm.X_preconditioner.size() != 0 && warm.preconditioner_age >= 0) {
      // The saved run's preconditioner (or scale), rebuilt at its iterate: the resumed steps then
      // use the very same one as the uninterrupted run would have.
      const Matrix Xk = surrogate.center();
      surrogate.update(warm.X_preconditioner);
      prepare(rho, /*rebuild_preconditioner=*/true);
      age_ = warm.preconditioner_age;
      surrogate.update(Xk);
    }
  }

 protected:
  // True when the preconditioner (scale) is rebuilt at this prepare(); counts its age.
  bool due(bool forced) {
    if (!forced && age_ >= 0 && age_ + 1 < options_.preconditioner_refresh) {
      ++age_;
      return false;
    }
    age_ = 0;
    X_reference_ = s_.center();
    return true;
  }
  void apply_system(const Matrix& D, Matrix& out, double rho, double shift) const {
    // (2 B + rho P*P + shift I) D.
    Vector pd;
    Matrix adj;
    s_.linearization().apply(D, pd);
    s_.linearization().apply_adjoint(pd, adj);
    s_.apply_B(D, out);
    out *= 2.0;
    out.noalias() += rho * adj;
    if (shift > 0.0) out.noalias() += shift * D;
  }

  int age_ = -1;
  Matrix X_reference_;  // the iterate at which the preconditioner (scale) was built
};

// kCgBlocks, kCgSharedBlock, kCgRowScaled: CG on the whole system, the blocks as its
// preconditioner. Any SPD preconditioner leaves CG's answer (to its tolerance) as it is, so a
// recent one serves (AdmmOptions::preconditioner_refresh).
template <class Inverse, Kind kKind>
class Cg final : public Refreshed {
 public:
  using Refreshed::Refreshed;
  Kind kind() const override { return kKind; }

  void prepare(double rho, bool rebuild_preconditioner) override {
    rho_ = rho;
    if (!due(rebuild_preconditioner || !blocks_.built(s_.rows(), s_.rank()))) return;
    balanced_rho_ = balanced(blocks_.build(s_));
    set_rho(rho);
  }
  void set_rho(double rho) override {
    // A new rho within an MM step (AdmmOptions::adaptive_rho) rebuilds the blocks at this iterate:
    // factoring the kept blocks (built at an older iterate) with this iterate's B would give a
    // preconditioner that a resumed run, which rebuilds them at their saved iterate, cannot make.
    // prepare() sets rho_ first, so its own call builds nothing twice.
    if (rho != rho_ && due(/*forced=*/true)) balanced_rho_ = balanced(blocks_.build(s_));
    rho_ = rho;
    blocks_.factor(s_, rho, shift_);
  }

  void solve(const Matrix& rhs, Matrix& D, double eps, long* cg_iterations) override {
    // Inexact CG warm-started from the previous Xt; its accuracy follows eps_k (docs/method.md
    // section 6: a fixed CG tolerance makes the gap stall at that tolerance).
    const double scale = std::max(1.0, std::abs(s_.center_objective()));
    const double tol = std::max(1e-15, options_.cg_tolerance * std::min(1.0, eps / scale));
    *cg_iterations += linalg::pcg([this](const Matrix& x, Matrix& y) { apply_system(x, y, rho_, shift_); },
                                  [this](const Matrix& x, Matrix& y) { blocks_.apply(x, y); }, rhs, D, tol,
                                  options_.cg_max_iterations);
  }

 private:
  Inverse blocks_;
  double rho_ = 0.0;
};

// kLinearizedBlocks, kLinearizedSharedBlock (docs/method.md section 3.4). M = 2B + rho P*P + rho_k I
// is the coupled system and K = blockdiag(P*P) its row blocks. The step solves with a block-diagonal
// M~ >= M, so that the linearised ADMM converges to the exact ADMM's fixed points (Fazel, Pong,
// Sun, Tseng 2013):
//  - terms nonzero in at most k rows (TermLinearization::rows_per_term(), 2 for entries and
//    distances): M~ = 2B + rho k K + rho_k I. P*P <= k K by Cauchy-Schwarz over each term's rows,
//    so M~ >= M at every iterate, and only the P*P part is enlarged (2B and rho_k are exact).
//  - otherwise M~ = lambda M_1, M_1 = 2B + rho K + rho_k I, lambda the largest eigenvalue of
//    M_1^{-1} M, estimated without rho_k (adding rho_k I to both matrices only brings it closer to
//    1), from below by power iteration, at one iterate every preconditioner_refresh MM steps (and
//    after a refused step or a change of rho), while the blocks are rebuilt at every step: M~ >= M
//    is exact at the estimate's iterate only, and between refreshes it rests on lambda changing
//    slowly with X_k (measured, docs/method.md section 3.4), not on a proof.
template <class Inverse, Kind kKind>
class Linearized final : public Refreshed {
 public:
  using Refreshed::Refreshed;
  Kind kind() const override { return kKind; }
  double majorant_scale() const override { return rows_ > 0 ? static_cast<double>(rows_) : lambda_; }

  void prepare(double rho, bool rebuild_scale) override {
    rho_ = rho;
    rows_ = s_.linearization().rows_per_term();
    balanced_rho_ = balanced(blocks_.build(s_));
    factor(rho, due(rebuild_scale));
  }
  void set_rho(double rho) override {
    const bool changed = rho != rho_;
    if (changed) due(/*forced=*/true);  // the scale's iterate and age, as a resumed run rebuilds them
    factor(rho, changed);
    rho_ = rho;
  }
  void solve(const Matrix& rhs, Matrix& D, double, long*) override {
    blocks_.apply(rhs, D);
    if (rows_ == 0) D *= 1.0 / lambda_;
  }
  void proximal_term(const Matrix& D, Matrix& out) const override {
    // k rho K D; or (lambda - 1)(2B + rho_k) D + lambda rho K D. K D in a member, as this runs every
    // ADMM iteration.
    if (rows_ > 0) {
      blocks_.apply_gram(D, out);
      out *= static_cast<double>(rows_) * rho_;
      return;
    }
    blocks_.apply_gram(D, kd_);
    s_.apply_B(D, out);
    out *= 2.0 * (lambda_ - 1.0);
    if (shift_ > 0.0) out.noalias() += (lambda_ - 1.0) * shift_ * D;
    out.noalias() += (lambda_ * rho_) * kd_;
  }

 private:
  // The blocks factored at (rho, shift_): at (k rho, shift_) when the terms' row bound k is known;
  // else lambda estimated again first when `reestimate` (estimate() leaves them factored without
  // the shift, so only a shifted system is factored twice).
  void factor(double rho, bool reestimate) {
    if (rows_ > 0) {
      blocks_.factor(s_, static_cast<double>(rows_) * rho, shift_);
      return;
    }
    if (reestimate) estimate(rho);
    if (!reestimate || shift_ > 0.0) blocks_.factor(s_, rho, shift_);
  }

  // lambda = max(1, largest eigenvalue of M_1^{-1} M at rho_k = 0), by 30 steps of power iteration
  // on M_1^{-1} M from a fixed start (deterministic, so that a resumed run estimates the same).
  void estimate(double rho) {
    const Index n = s_.rows(), r = s_.rank();
    blocks_.factor(s_, rho, 0.0);
    Matrix v(n, r), w, m1v, kd;
    for (Index c = 0; c < r; ++c)
      for (Index i = 0; i < n; ++i) v(i, c) = 1.0 + 0.5 * std::sin(1.0 + 0.7 * static_cast<double>(i) + 2.3 * c);
    double lambda = 1.0;
    for (int t = 0; t < 30; ++t) {
      const double norm = v.norm();
      if (!(norm > 0.0)) break;
      v /= norm;
      apply_system(v, w, rho, 0.0);
      blocks_.apply_gram(v, kd);
      s_.apply_B(v, m1v);
      m1v = 2.0 * m1v + rho * kd;
      const double denominator = v.cwiseProduct(m1v).sum();
      if (!(denominator > 0.0)) break;
      lambda = std::max(lambda, v.cwiseProduct(w).sum() / denominator);
      blocks_.apply(w, v);
    }
    lambda_ = lambda;
  }

  Inverse blocks_;
  double rho_ = 0.0;
  double lambda_ = 1.0;
  Index rows_ = 0;  // TermLinearization::rows_per_term() (0: unknown, lambda estimated)
  mutable Matrix kd_;  // proximal_term()'s K D
};

// The constrained variant: the split X_k + D - Y = 0 adds rho_k I to the matrix, rho_k the mean
// diagonal of 2B (so that both parts have the same scale) or AdmmOptions::rho_constraint. rho_k
// follows B, so the factors are rebuilt at every MM step: it is part of the system, not only of
// the preconditioner.
class Constrained final : public XtStep {
 public:
  Constrained(const Surrogate& s, const AdmmOptions& options, std::unique_ptr<XtStep> inner)
      : XtStep(s, options), inner_(std::move(inner)) {}
  Kind kind() const override { return inner_->kind(); }
  bool constrained() const override { return true; }
  void prepare(double rho, bool rebuild) override {
    update_penalty();
    // CG's preconditioner holds rho_k and is rebuilt; a linearised step refactors its blocks at
    // every step anyway, and its scale does not depend on rho_k.
    inner_->prepare(rho, rebuild || !inner_->linearized());
    balanced_rho_ = inner_->balanced_rho();
  }
  void set_rho(double rho) override {
    update_penalty();
    inner_->set_rho(rho);
  }
  void solve(const Matrix& rhs, Matrix& D, double eps, long* cg_iterations) override {
    inner_->solve(rhs, D, eps, cg_iterations);
  }
  void apply_gram(const Matrix& D, Matrix& out) const override { inner_->apply_gram(D, out); }
  // The fused row pass runs the Y- and mu-steps itself (a row-independent constraint). Its rebuild
  // is not fused (fuses_rebuild() stays false here): rho_k = 2 mean B_ii is known only after the
  // whole rebuild, and that pass's first iteration has no Y- and mu-steps.
  bool iterate_rows(AdmmState& state, double rho, double eps) override { return inner_->iterate_rows(state, rho, eps); }
  double majorant_scale() const override { return inner_->majorant_scale(); }
  void proximal_term(const Matrix& D, Matrix& out) const override { inner_->proximal_term(D, out); }
  int preconditioner_age() const override { return inner_->preconditioner_age(); }
  void set_preconditioner_age(int age) override { inner_->set_preconditioner_age(age); }
  std::string save(const Matrix& D) const override { return inner_->save(D); }
  void restore(const std::string& saved, Surrogate& surrogate, double rho, Matrix& D) override {
    inner_->restore(saved, surrogate, rho, D);
  }

 private:
  void update_penalty() {
    const double rho_k = options_.rho_constraint > 0.0 ? options_.rho_constraint
                                                       : std::max(2.0 * s_.b_diagonal().mean(), 1e-8);
    shift_ = rho_k;
    inner_->set_split_penalty(rho_k);
  }
  std::unique_ptr<XtStep> inner_;
};

}  // namespace

std::unique_ptr<XtStep> make_xt_step(const Surrogate& s, const AdmmOptions& options, bool constrained,
                                     const Paths& paths) {
  const TermLinearization& lin = s.linearization();
  const Index n = s.rows(), r = s.rank();
  // Exact row-by-row solve when P*P is block diagonal by rows and B is diagonal (row-split
  // majoriser, no A-curvature); otherwise the same blocks precondition CG.
  const bool exact = lin.rows_decoupled() && s.b_is_diagonal();
  Matrix block;
  const bool shared = shared_gram_block(lin, block);
  std::unique_ptr<XtStep> step;
  if (exact) {
    // The fused row pass needs the rows' a_h and unit term weights; a constraint split joins it
    // when its projection acts row by row (X >= 0), else keeps the generic path (a Frobenius ball).
    const ConvexConstraint* constraint = s.model().constraint.get();
    const bool rows_split = !constrained || (constraint != nullptr && constraint->rows_independent());
    // All n^2 entry terms take the dense pass, under any constraint (it projects after the pass).
    const bool dense = shared && dynamic_cast<const DenseRowSplit*>(&lin) != nullptr && lin.external_weights() != nullptr;
    if (paths.fused && rows_split && !shared && lin.row_split() != nullptr && lin.external_weights() == nullptr)
      step = std::make_unique<FusedRows>(s, options, paths.fused_rebuild);
    else if (paths.fused && dense)
      step = std::make_unique<DenseRows>(s, options);
    else if (shared)
      step = std::make_unique<Exact<SharedBlockInverse, Kind::kSharedBlock>>(s, options);
    else
      step = std::make_unique<Exact<RowBlockInverse, Kind::kRowBlocks>>(s, options);
  } else if ((options.coupled_step == CoupledStep::kDualCoordinate || options.coupled_step == CoupledStep::kAuto) &&
             (!constrained || s.model().constraint->rows_independent()) && s.b_is_diagonal() &&
             detail::coupled_pairs(lin) != nullptr) {
    // Pair terms on the exact surrogate: coordinate ascent on its dual, where it applies, before
    // any ADMM (docs/method.md section 3.9: the quickstart's l1 finish 0.9 s against 3.2 s), also
    // under X >= 0 (a constraint of one set per row).
    step = std::make_unique<DualCoordinate>(s, options, *detail::coupled_pairs(lin));
  } else {
    // CG's preconditioner (AdmmOptions::preconditioner; a shared block is cheap anyway).
    const bool blocks_fit = 8.0 * static_cast<double>(n) * static_cast<double>(r * r) <= kBlockPreconditionerBytes;
    const bool row_scaled = options.preconditioner == CgPreconditioner::kRowScaled ||
                            (options.preconditioner == CgPreconditioner::kAuto && !blocks_fit);
    // The linearised step needs the blocks of a diagonal B (M_1 must be block diagonal) and
    // is measured faster than CG where it applies (docs/performance.md).
    // The dual coordinate step asked for where it does not apply falls back to the linearised step,
    // the other one without CG, whatever the blocks' size (measure_stationarity relies on it).
    const CoupledStep asked = options.coupled_step;
    const bool linearized =
        s.b_is_diagonal() && (asked == CoupledStep::kLinearized || asked == CoupledStep::kDualCoordinate ||
                              (asked == CoupledStep::kAuto && (shared || blocks_fit)));
    if (linearized && shared)
      step = std::make_unique<Linearized<SharedBlockInverse, Kind::kLinearizedSharedBlock>>(s, options);
    else if (linearized)
      step = std::make_unique<Linearized<RowBlockInverse, Kind::kLinearizedBlocks>>(s, options);
    else if (shared)
      step = std::make_unique<Cg<SharedBlockInverse, Kind::kCgSharedBlock>>(s, options);
    else if (row_scaled)
      step = std::make_unique<Cg<RowScaledInverse, Kind::kCgRowScaled>>(s, options);
    else
      step = std::make_unique<Cg<RowBlockInverse, Kind::kCgBlocks>>(s, options);
  }
  // (The coordinate step takes a row-wise constraint's multiplier itself, in closed form: no split.)
  if (constrained && step->kind() != Kind::kDualCoordinate)
    step = std::make_unique<Constrained>(s, options, std::move(step));
  return step;
}

namespace {
// The CG warm start's bytes: a tag, D and X_preconditioner (rows, cols, then the raw doubles, so
// that they come back bit for bit) and the age.
constexpr std::uint64_t kCgWarmStartTag = 0x31676d7261772d67ull;  // "g-warm1g"

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_matrix(std::string& out, const Matrix& m) {
  put(out, static_cast<std::uint64_t>(m.rows()));
  put(out, static_cast<std::uint64_t>(m.cols()));
  out.append(reinterpret_cast<const char*>(m.data()), sizeof(double) * static_cast<std::size_t>(m.size()));
}
struct Cursor {
  const std::string& bytes;
  std::size_t pos = 0;
  template <class T>
  bool get(T* v) {
    if (bytes.size() - pos < sizeof(T)) return false;
    std::memcpy(v, bytes.data() + pos, sizeof(T));
    pos += sizeof(T);
    return true;
  }
  bool get_matrix(Matrix* m) {
    std::uint64_t rows = 0, cols = 0;
    if (!get(&rows) || !get(&cols)) return false;
    const std::size_t left = (bytes.size() - pos) / sizeof(double);
    if (cols != 0 && rows > left / cols) return false;
    m->resize(static_cast<Index>(rows), static_cast<Index>(cols));
    if (m->size() > 0) std::memcpy(m->data(), bytes.data() + pos, sizeof(double) * static_cast<std::size_t>(m->size()));
    pos += sizeof(double) * static_cast<std::size_t>(m->size());
    return true;
  }
};
}  // namespace

std::string encode(const CgWarmStart& warm) {
  std::string out;
  put(out, kCgWarmStartTag);
  put_matrix(out, warm.D);
  put_matrix(out, warm.X_preconditioner);
  put(out, static_cast<std::int64_t>(warm.preconditioner_age));
  return out;
}

bool decode(const std::string& bytes, CgWarmStart* warm) {
  *warm = CgWarmStart();
  Cursor c{bytes};
  std::uint64_t tag = 0;
  std::int64_t age = 0;
  if (!c.get(&tag) || tag != kCgWarmStartTag || !c.get_matrix(&warm->D) || !c.get_matrix(&warm->X_preconditioner) ||
      !c.get(&age) || age < -1 || age > INT32_MAX || c.pos != bytes.size())
    return false;
  warm->preconditioner_age = static_cast<int>(age);
  return true;
}

}  // namespace sdprl::xt_step
