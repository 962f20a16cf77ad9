// The inner ADMM on the surrogate H (algorithm.md section 3; formulas in mm/surrogate.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <Eigen/Eigenvalues>

#include "admm/admm.h"
#include "admm/row_kernel.h"
#include "linalg/pcg.h"
#include "sdprl/error.h"

namespace sdprl {

// update_and_iterate()'s consumer of the rebuilt rows: for row i, B_ii, the inverse block K_i^{-1}
// (as factor_blocks() computes it) and the row's share of the first iteration (as iterate() runs
// it), each through the same function as the separate path, so that the iterates agree bit for bit.
class Admm::RowStep final : public RowConsumer {
 public:
  RowStep(Admm& admm, AdmmState& state) : admm_(admm), state_(state) {
    const Surrogate& s = admm.s_;
    kernel_.offsets = s.linearization().row_offsets();
    kernel_.n = s.rows();
    kernel_.r = s.rank();
    kernel_.G = &s.G();  // read per row: update() sets G before the rebuild
    kernel_.rho = admm.rho_;
    rows_.resize(static_cast<std::size_t>(kernel_.n));
  }

  void consume_row(Index i, const double* a, Index deg, const double* gram_block, double curvature) override {
    const Surrogate& s = admm_.s_;
    const Index r = kernel_.r;
    const double bii = s.b_diagonal_entry(i, curvature);
    double* inverse = admm_.inverse_blocks_.data() + i * r * r;
    detail::invert_row_block(gram_block, bii, admm_.rho_, admm_.rho_k_, r, inverse);
    detail::RowKernel k = kernel_;
    k.b = s.linearization().offsets().data();  // the row's b_h are final now
    // Two deg-vectors per thread, kept across rows and MM steps (rows may come from any thread);
    // aligned as fused_iteration()'s (see RowBuffers in row_kernel.cc).
    thread_local Eigen::VectorXd work;
    if (work.size() < 2 * deg) work.resize(2 * deg);
    rows_[static_cast<std::size_t>(i)] =
        detail::iterate_row(k, i, a, bii, inverse, work.data(), state_.u.data(), state_.D.data());
  }

  detail::RowSums total() const { return detail::sum_row_sums(rows_); }

 private:
  Admm& admm_;
  AdmmState& state_;
  detail::RowKernel kernel_;
  std::vector<detail::RowSums> rows_;
};

Admm::Admm(const Surrogate& surrogate, double rho, const AdmmOptions& options)
    : s_(surrogate), rho_(rho), constraint_(surrogate.model().constraint.get()), options_(options) {}

Admm::~Admm() = default;

namespace {
// Distinct for every prepare() of every Admm, so that a state never takes another P's P*(nu).
std::uint64_t next_generation() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}
// The e- and nu-steps over all split terms: v = P(D) + b, z = v + nu / rho,
// e = soft(z, 2 w / rho) = z - clamp(z, -2 w / rho, 2 w / rho), nu += rho (v - e). Branch-free
// (min/max) so that the loop vectorises; w = 1 unless kWeighted.
template <bool kWeighted>
void soft_step(const double* __restrict pd, const double* __restrict b, const double* __restrict w, double rho,
               Index h, double* __restrict e, double* __restrict nu) {
  const double threshold = 2.0 / rho, inv_rho = 1.0 / rho;
  for (Index k = 0; k < h; ++k) {
    const double v = pd[k] + b[k];
    const double z = v + nu[k] * inv_rho;
    const double t = kWeighted ? threshold * w[k] : threshold;
    const double ek = z - std::min(std::max(z, -t), t);
    e[k] = ek;
    nu[k] += rho * (v - ek);
  }
}
}  // namespace

bool Admm::update_and_iterate(Surrogate& surrogate, const Matrix& Xk, AdmmState& st) {
  primed_ = false;
  // fused_ depends on the model and the options only (set by the last prepare()).
  if (&surrogate != &s_ || !fused_ || !options_.fused_rebuild) {
    surrogate.update(Xk);
    return false;
  }
  reset_if_needed(st);
  st.pack(rho_);
  const Index n = s_.rows(), r = s_.rank();
  st.D.resize(n, r);  // every row is written
  inverse_blocks_.resize(static_cast<std::size_t>(n * r * r));
  RowStep step(*this, st);
  // The surrogate, the blocks and the state change together: after a failure none is usable.
  gram_stale_ = true;
  generation_ = next_generation();
  if (!surrogate.update(Xk, &step)) return false;  // no one-pass rebuild (e.g. distance terms): the caller prepares
  const detail::RowSums sums = step.total();
  st.step = st.D;
  st.primal = sums.quadratic + 2.0 * sums.absolute + s_.c();
  st.dual = s_.c() + sums.nu_b - 0.25 * sums.m_binv_m;
  st.gap = st.primal - st.dual;
  primed_ = true;
  return true;
}

void Admm::prepare(bool rebuild_preconditioner) {
  generation_ = next_generation();
  primed_ = false;
  gram_stale_ = false;
  const TermLinearization& lin = s_.linearization();
  const Index n = s_.rows(), r = s_.rank();
  // Exact row-by-row solve when P*P is block diagonal by rows and B is diagonal (row-split
  // majoriser, no A-curvature); otherwise the same blocks precondition CG.
  direct_ = lin.rows_decoupled() && s_.b_is_diagonal();
  // The fused row pass (admm/row_kernel.h) needs the rows' a_h; the constraint split keeps the
  // generic path.
  fused_ = direct_ && options_.fused && !constraint_ && lin.row_offsets() != nullptr &&
           lin.term_weights() == nullptr;
  if (fused_) max_degree_ = detail::max_row_degree(lin.row_offsets(), n);
  // Which preconditioner CG gets (AdmmOptions::preconditioner; a shared block is cheap anyway).
  const bool row_scaled =
      !direct_ && (options_.preconditioner == CgPreconditioner::kRowScaled ||
                   (options_.preconditioner == CgPreconditioner::kAuto &&
                    8.0 * static_cast<double>(n) * static_cast<double>(r * r) > kBlockPreconditionerBytes));
  const bool have_blocks = row_scaled_ ? row_inverse_.size() == n
                           : shared_   ? shared_inverse_.rows() == n && shared_vectors_.rows() == r
                                       : inverse_blocks_.size() == static_cast<std::size_t>(n * r * r);
  // The coupled Xt-step reads the blocks below only as CG's preconditioner, so a recent one serves
  // (AdmmOptions::preconditioner_refresh). Not under a constraint: factor_blocks() also sets the
  // split's penalty rho_k from B, which is part of the system, not of the preconditioner.
  if (!direct_ && !constraint_ && !rebuild_preconditioner && have_blocks && preconditioner_age_ >= 0 &&
      preconditioner_age_ + 1 < options_.preconditioner_refresh) {
    ++preconditioner_age_;
    return;
  }
  preconditioner_age_ = direct_ ? -1 : 0;
  if (!direct_) X_preconditioner_ = s_.center();
  // A member: n r^2 doubles (r^2 when shared; none for the row-scaled preconditioner), kept to
  // avoid re-faulting every MM step. Families with row_offsets() compute the blocks with
  // detail::row_gram_blocks or in their one-pass update.
  shared_ = lin.shared_gram_block(gram_);
  row_scaled_ = row_scaled && !shared_;
  const Vector& bd = s_.b_diagonal();
  double gram_trace = 0.0;
  if (shared_) {
    gram_trace = static_cast<double>(n) * gram_.trace();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram_);
    shared_vectors_ = eig.eigenvectors();
    // P*P is PSD: a rounding-negative eigenvalue is 0.
    shared_values_ = eig.eigenvalues().cwiseMax(0.0);
  } else if (row_scaled_) {
    // Only the blocks' traces: the row-scaled preconditioner is there to avoid their n r^2 doubles.
    Matrix().swap(gram_);
    lin.gram_row_traces(row_traces_);
    for (Index i = 0; i < n; ++i) gram_trace += row_traces_[i];
  } else {
    lin.gram_row_blocks(gram_);
    for (Index i = 0; i < n; ++i) gram_trace += gram_.block(i * r, 0, r, r).trace();
  }
  // tr(2B) / tr(P*P) over the Xt-step's r n unknowns (each diagonal entry of B acts on r of them).
  balanced_rho_ = gram_trace > 0.0 ? 2.0 * static_cast<double>(r) * bd.sum() / gram_trace : 0.0;
  factor_blocks();
}

void Admm::set_rho(double rho) {
  rho_ = rho;
  factor_blocks();
}

void Admm::factor_blocks() {
  const Index n = s_.rows(), r = s_.rank();
  if (gram_stale_) {  // set_rho() after update_and_iterate(): the Gram blocks of that rebuild
    s_.linearization().gram_row_blocks(gram_);
    gram_stale_ = false;
  }
  const Matrix& gram = gram_;
  const Vector& bd = s_.b_diagonal();
  if (constraint_) {
    // The constraint split's penalty: the mean diagonal of 2B, so that both parts of the
    // Xt-step's matrix have the same scale (or the user's admm.rho_constraint).
    rho_k_ = options_.rho_constraint > 0.0 ? options_.rho_constraint : std::max(2.0 * bd.mean(), 1e-8);
  }
  if (row_scaled_) {
    // (rho t_i / r + s_i) I: the block's mean eigenvalue. Without the blocks' n r^2 doubles.
    std::vector<double>().swap(inverse_blocks_);
    row_inverse_.resize(n);
    for (Index i = 0; i < n; ++i) {
      const double d = rho_ * row_traces_[i] / static_cast<double>(r) + 2.0 * bd[i] + rho_k_;
      row_inverse_[i] = d > 0.0 ? 1.0 / d : 0.0;
    }
    return;
  }
  if (!shared_) {
    // Explicit inverses K_i^{-1} of the row blocks K_i = rho P*P_ii + (2 b_ii + rho_k) I: the
    // fused pass multiplies by them, and as CG's preconditioner (or the direct Xt-step of the
    // generic path) a product with an r x r matrix is several times cheaper than two triangular
    // solves. A row without curvature gets a zero inverse, so its step is 0.
    detail::invert_row_blocks(gram, bd, rho_, rho_k_, n, r, inverse_blocks_);
    return;
  }
  // Block i = V diag(rho g + s_i) V^T: its inverse is V diag(1 / (rho g + s_i)) V^T. A tiny ridge
  // where rho g_c + s_i vanishes, as for the singular blocks in detail::invert_row_block.
  shared_inverse_.resize(n, r);
  const double scale = rho_ * shared_values_.sum();
  for (Index i = 0; i < n; ++i) {
    const double s = 2.0 * bd[i] + rho_k_;
    if (scale == 0.0 && s == 0.0) {
      shared_inverse_.row(i).setZero();
      continue;
    }
    const double ridge = 1e-12 * (scale + static_cast<double>(r) * s) + 1e-300;
    for (Index c = 0; c < r; ++c) {
      const double d = rho_ * shared_values_[c] + s;
      shared_inverse_(i, c) = 1.0 / (d > ridge ? d : d + ridge);
    }
  }
}

void AdmmState::pack(double rho) {
  if (packed_rho == rho) return;
  unpack();  // a state packed at another rho
  // u = nu + rho e (sdprl/surrogate.h), in nu's storage; e is freed, not kept stale (m = 10^5: 185
  // MB), and no third vector is allocated on the way.
  if (nu.size() != e.size()) throw std::invalid_argument("AdmmState::pack: nu and e differ in size");
  nu += rho * e;
  u.swap(nu);
  packed_rho = rho;
  Vector().swap(nu);
  Vector().swap(e);
  adjoint_generation = 0;
}

void AdmmState::unpack() {
  if (!packed()) return;
  nu = detail::clamp_nu(u.array()).matrix();
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
    Vector().swap(state.u);
  }
  if (!state.packed() && state.keep_packed && fused_ && (state.e.size() != h || state.nu.size() != h)) {
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

void Admm::apply_system(const Matrix& D, Matrix& out) const {
  // (2 B + rho P*P) D.
  Vector pd;
  Matrix adj;
  s_.linearization().apply(D, pd);
  s_.linearization().apply_adjoint(pd, adj);
  s_.apply_B(D, out);
  out *= 2.0;
  out.noalias() += rho_ * adj;
  if (rho_k_ > 0.0) out.noalias() += rho_k_ * D;
}

void Admm::apply_gram(const Matrix& D, Matrix& out) const {
  const Index n = s_.rows(), r = s_.rank();
  if (shared_) {
    out.noalias() = D * gram_;
    return;
  }
  out.resize(n, r);
  for (Index i = 0; i < n; ++i) out.row(i).noalias() = D.row(i) * gram_.middleRows(i * r, r);
}

void Admm::apply_preconditioner(const Matrix& R, Matrix& out) const {
  if (row_scaled_) {
    out.noalias() = row_inverse_.asDiagonal() * R;
    return;
  }
  if (shared_) {
    // Every row at once: out = ((R V) o inverse) V^T, two n x r x r products.
    Matrix T = R * shared_vectors_;
    T.array() *= shared_inverse_.array();
    out.noalias() = T * shared_vectors_.transpose();
    return;
  }
  detail::apply_row_inverses(inverse_blocks_.data(), R, out);
}

void Admm::solve_xt(const Matrix& rhs, Matrix& D, double eps, long* cg_iterations) {
  if (direct_) {
    apply_preconditioner(rhs, D);  // the blocks are the exact system here
    return;
  }
  // Inexact CG warm-started from the previous Xt; its accuracy follows eps_k (algorithm.md
  // section 6: a fixed CG tolerance makes the gap stall at that tolerance).
  const double scale = std::max(1.0, std::abs(s_.center_objective()));
  const double tol = std::max(1e-15, options_.cg_tolerance * std::min(1.0, eps / scale));
  *cg_iterations += linalg::pcg([this](const Matrix& x, Matrix& y) { apply_system(x, y); },
                                [this](const Matrix& x, Matrix& y) { apply_preconditioner(x, y); },
                                rhs, D, tol, options_.cg_max_iterations);
}

void Admm::iterate(AdmmState& st, double eps) {
  step(st, eps);
  if (!st.keep_packed) st.unpack();
}

void Admm::step(AdmmState& st, double eps) {
  const TermLinearization& lin = s_.linearization();
  const Vector& b = lin.offsets();
  if (fused_) {
    st.pack(rho_);
    // The same iteration as below, one row at a time (admm/row_kernel.h).
    detail::RowKernel k;
    k.lin = &lin;
    k.offsets = lin.row_offsets();
    k.n = s_.rows();
    k.r = s_.rank();
    k.max_degree = max_degree_;
    k.b = b.data();
    k.G = &s_.G();
    k.b_diagonal = &s_.b_diagonal();
    k.inverse_blocks = inverse_blocks_.data();
    k.rho = rho_;
    const detail::RowSums sums = detail::fused_iteration(k, st.u, st.D);
    st.step = st.D;
    st.primal = sums.quadratic + 2.0 * sums.absolute + s_.c();
    st.dual = s_.c() + sums.nu_b - 0.25 * sums.m_binv_m;
    st.gap = st.primal - st.dual;
    return;
  }
  st.unpack();
  // Xt-step: (2B + rho P*P) D = -G - P*(nu + rho (b - e)). With a direct Xt-step, P*(nu) and
  // P*(b - e) are carried from the last iteration (see below), computed afresh once per prepare().
  const bool carried = direct_;
  if (carried) {
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
    rhs_ -= st.mu + rho_k_ * (s_.center() - st.Y);
  }
  solve_xt(rhs_, st.D, eps, &st.cg_iterations);
  // e-step and nu-step, elementwise.
  lin.apply(st.D, st.PD);
  // Threshold 2 w_h / rho (w_h = 1 unless the family keeps its weights outside P).
  const Vector* w = lin.term_weights();
  if (w)
    soft_step<true>(st.PD.data(), b.data(), w->data(), rho_, b.size(), st.e.data(), st.nu.data());
  else
    soft_step<false>(st.PD.data(), b.data(), nullptr, rho_, b.size(), st.e.data(), st.nu.data());
  if (carried) {
    // nu' = nu + rho (P(D) + b - e'), so P*(nu') = P*(nu) + rho P*P D + rho P*(b - e'): one adjoint
    // (of b - e', needed for the next Xt-step anyway) and the Gram blocks instead of a second one.
    y_ = b - st.e;
    lin.apply_adjoint(y_, st.Pu);
    apply_gram(st.D, work_);
    st.Pnu += rho_ * (work_ + st.Pu);
  }
  if (constraint_) {
    // Y-step: projection; mu-step: stays in the polar cone of K (e.g. mu <= 0 for X >= 0).
    // With Z = X_k + D + mu/rho_k: Y = proj_K(Z) and mu + rho_k (X_k + D - Y) = rho_k (Z - Y).
    // The second form is exact in floating point for a cone (Z - max(0, Z) = min(0, Z) <= 0),
    // where the first can leave mu = +1e-17 and make sigma_K(mu) infinite.
    work2_ = s_.center() + st.D + st.mu / rho_k_;
    st.Y = work2_;
    constraint_->project(st.Y);
    st.mu = rho_k_ * (work2_ - st.Y);
    // The primal value at the feasible point Y, so that the gap bounds the true suboptimality.
    st.step = st.Y - s_.center();
    st.primal = s_.value(st.step);
    st.dual = carried ? s_.dual_given_adjoint(st.nu, st.Pnu, &st.mu) : s_.dual(st.nu, &st.mu);
  } else {
    st.step = st.D;
    st.primal = s_.value(st.D, &st.PD);
    st.dual = carried ? s_.dual_given_adjoint(st.nu, st.Pnu) : s_.dual(st.nu);
  }
  st.gap = st.primal - st.dual;
}

int Admm::run(AdmmState& st, double eps) {
  st.cg_iterations = 0;
  int t = 0;
  if (primed_) {
    t = 1;  // update_and_iterate() ran the first iteration
    primed_ = false;
  } else {
    reset_if_needed(st);
  }
  // At least one iteration: testing the gap first lets a warm nu return Xt = 0 and stall the MM.
  while (t == 0 || (t < options_.max_iterations && !(st.gap <= eps) && std::isfinite(st.gap))) {
    step(st, eps);
    ++t;
  }
  if (!st.keep_packed) st.unpack();
  st.iterations = t;
  return t;
}

namespace {
// The warm start's bytes: a tag (1), D, X_preconditioner (rows, cols, then the raw doubles) and
// the age. Raw doubles, so that the state comes back bit for bit.
constexpr std::uint64_t kCgWarmStartTag = 1;

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

std::string encode_warm_start(const CgWarmStart& warm) {
  std::string out;
  put(out, kCgWarmStartTag);
  put_matrix(out, warm.D);
  put_matrix(out, warm.X_preconditioner);
  put(out, static_cast<std::int64_t>(warm.preconditioner_age));
  return out;
}

bool decode_warm_start(const std::string& bytes, CgWarmStart* warm) {
  *warm = CgWarmStart();
  if (bytes.empty()) return true;
  Cursor c{bytes};
  std::uint64_t tag = 0;
  std::int64_t age = 0;
  if (!c.get(&tag) || tag != kCgWarmStartTag || !c.get_matrix(&warm->D) || !c.get_matrix(&warm->X_preconditioner) ||
      !c.get(&age) || age < -1 || age > INT32_MAX || c.pos != bytes.size())
    return false;
  warm->preconditioner_age = static_cast<int>(age);
  return true;
}

std::string Admm::save_warm_start(const AdmmState& state) const {
  if (direct_) return {};
  CgWarmStart warm;
  warm.D = state.D;
  warm.X_preconditioner = X_preconditioner_;
  warm.preconditioner_age = preconditioner_age_;
  return encode_warm_start(warm);
}

void Admm::restore_warm_start(const std::string& saved, Surrogate& surrogate, AdmmState& state) {
  CgWarmStart warm;
  const Index n = s_.rows(), r = s_.rank();
  auto fits_or_empty = [&](const Matrix& M) { return M.size() == 0 || (M.rows() == n && M.cols() == r); };
  if (&surrogate != &s_ || !decode_warm_start(saved, &warm) || !fits_or_empty(warm.D) ||
      !fits_or_empty(warm.X_preconditioner))
    throw Error("solver", "the saved Xt-step state does not fit this problem (" + std::to_string(saved.size()) +
                              " bytes; expected the coupled Xt-step's last Xt and preconditioner iterate, " +
                              std::to_string(n) + " x " + std::to_string(r) + ")");
  state.D = std::move(warm.D);
  if (warm.X_preconditioner.size() != 0 && warm.preconditioner_age >= 0) {
    // The saved run's preconditioner, rebuilt at its iterate: the resumed steps then use the
    // very same one as the uninterrupted run would have.
    const Matrix Xk = surrogate.center();
    surrogate.update(warm.X_preconditioner);
    prepare(/*rebuild_preconditioner=*/true);
    set_preconditioner_age(warm.preconditioner_age);
    surrogate.update(Xk);
  }
}

}  // namespace sdprl
