// The fused row pass of the ADMM (xt_step/fused_rows.h).
#include "xt_step/fused_rows.h"

#include "admm/row_kernel.h"
#include "mm/surrogate.h"
#include "parallel/processes.h"
#include "terms/split_rebuild.h"

namespace sdprl::xt_step {
namespace {
// b_h for a pass over this process's rows: a rebuild split over processes leaves the others' rows
// to be rebuilt on first use (terms/split_rebuild.h), which this pass must not trigger.
const double* local_offsets(const TermLinearization& lin) {
  if (const auto* split = dynamic_cast<const detail::SplitRebuild*>(&lin)) return split->local_offsets();
  return lin.offsets().data();
}
}  // namespace

// rebuild_and_iterate()'s consumer of the rebuilt rows: for row i, B_ii, the inverse block K_i^{-1}
// (as RowBlockInverse::factor computes it) and the row's share of the first iteration (as
// iterate_rows() runs it), each through the same function as the separate path, so that the
// iterates agree bit for bit.
class FusedRows::RowStep final : public RowConsumer {
 public:
  RowStep(const Surrogate& s, double rho, double rho_k, std::vector<double>& inverse, AdmmState& state)
      : s_(s), rho_(rho), rho_k_(rho_k), inverse_(inverse), state_(state) {
    kernel_.offsets = s.linearization().row_split()->row_offsets();
    kernel_.n = s.rows();
    kernel_.r = s.rank();
    kernel_.G = &s.G();  // read per row: update() sets G before the rebuild
    kernel_.rho = rho;
    rows_.resize(static_cast<std::size_t>(kernel_.n));
    shares_ = detail::row_shares(kernel_.offsets, kernel_.n);
  }

  void consume_row(Index i, const double* a, Index deg, const double* gram_block, double curvature) override {
    // Under several processes each factors and iterates its own rows (iterate_rows() below).
    if (!shares_.owns(i, processes::rank())) return;
    const Index r = kernel_.r;
    const double bii = s_.b_diagonal_entry(i, curvature);
    double* inverse = inverse_.data() + i * r * r;
    detail::invert_row_block(gram_block, bii, rho_, rho_k_, r, inverse);
    detail::RowKernel k = kernel_;
    k.b = local_offsets(s_.linearization());  // the row's b_h are final now
    // Two deg-vectors per thread, kept across rows and MM steps (rows may come from any thread);
    // aligned as fused_iteration()'s (see RowBuffers in row_kernel.cc).
    thread_local Eigen::VectorXd work;
    if (work.size() < 2 * deg) work.resize(2 * deg);
    rows_[static_cast<std::size_t>(i)] =
        detail::iterate_row(k, i, a, bii, inverse, work.data(), state_.u.data(), state_.D.data());
  }

  detail::RowSums total() const { return detail::sum_row_sums(rows_, shares_); }
  const detail::RowShares& shares() const { return shares_; }

 private:
  const Surrogate& s_;
  double rho_, rho_k_;
  std::vector<double>& inverse_;
  AdmmState& state_;
  detail::RowKernel kernel_;
  std::vector<detail::RowSums> rows_;
  detail::RowShares shares_;
};

FusedRows::~FusedRows() = default;

void FusedRows::prepare(double rho, bool) {
  gram_stale_ = false;
  max_degree_ = detail::max_row_degree(s_.linearization().row_split()->row_offsets(), s_.rows());
  // Families with a RowSplitView compute the blocks with detail::row_gram_blocks or in their
  // one-pass update.
  balanced_rho_ = balanced(blocks_.build(s_));
  set_rho(rho);
}

void FusedRows::set_rho(double rho) {
  if (gram_stale_) {  // set_rho() after rebuild_and_iterate(): the Gram blocks of that rebuild
    s_.linearization().gram_row_blocks(blocks_.gram());
    gram_stale_ = false;
  }
  blocks_.factor(s_, rho, shift_);
}

void FusedRows::solve(const Matrix& rhs, Matrix& D, double, long*) { blocks_.apply(rhs, D); }

void FusedRows::apply_gram(const Matrix& D, Matrix& out) const { blocks_.apply_gram(D, out); }

namespace {
// With the constraint split the rows wrote st.step (Y - X_k), and the dual gains <mu, X_k> -
// sigma_K(mu) (sdprl/constraint.h).
void set_gap(const Surrogate& s, const detail::RowSums& sums, AdmmState& st, const ConvexConstraint* constraint) {
  if (!constraint) st.step = st.D;
  st.primal = sums.quadratic + 2.0 * sums.absolute + s.c();
  st.dual = s.c() + sums.nu_b - 0.25 * sums.m_binv_m;
  if (constraint) st.dual += sums.mu_x - constraint->support(st.mu);
  st.gap = st.primal - st.dual;
}
}  // namespace

bool FusedRows::iterate_rows(AdmmState& st, double rho, double) {
  const TermLinearization& lin = s_.linearization();
  st.pack(rho);
  // The ADMM iteration (admm/admm.cc: Admm::iterate), one row at a time (admm/row_kernel.h).
  detail::RowKernel k;
  k.rows = lin.row_split();
  k.offsets = k.rows->row_offsets();
  k.n = s_.rows();
  k.r = s_.rank();
  k.max_degree = max_degree_;
  k.b = local_offsets(lin);
  k.G = &s_.G();
  k.b_diagonal = &s_.b_diagonal();
  k.inverse_blocks = blocks_.inverse_data();
  k.rho = rho;
  // The constraint split when the Constrained wrapper holds this strategy (it sets the split's
  // penalty rho_k > 0 as shift_); Y starts at X_k, as in Admm::step.
  const ConvexConstraint* constraint = shift_ > 0.0 ? s_.model().constraint.get() : nullptr;
  if (constraint) {
    const Index n = s_.rows(), r = s_.rank();
    if (st.Y.rows() != n || st.Y.cols() != r) st.Y = s_.center();
    if (st.mu.rows() != n || st.mu.cols() != r) st.mu.setZero(n, r);
    st.step.resize(n, r);
    k.constraint = constraint;
    k.rho_k = shift_;
    k.center = s_.center().data();
    k.mu = st.mu.data();
    k.Y = st.Y.data();
    k.step = st.step.data();
  }
  set_gap(s_, detail::fused_iteration(k, st.u, st.D), st, constraint);
  if (!constraint) mark_partial(detail::row_shares(k.offsets, k.n), st);
  return true;
}

// Under several processes, after a pass that iterated this process's rows alone (fused_iteration()
// splits the rows only without a constraint).
void FusedRows::mark_partial(const detail::RowShares& shares, AdmmState& st) {
  if (!processes::distributed()) return;
  st.partial_rows = shares.rows;
  st.partial_terms = shares.terms;
}

bool FusedRows::rebuild_and_iterate(Surrogate& surrogate, const Matrix& Xk, AdmmState& st, double rho) {
  const Index n = s_.rows(), r = s_.rank();
  st.D.resize(n, r);  // every row is written
  blocks_.inverse().resize(static_cast<std::size_t>(n * r * r));
  RowStep step(s_, rho, shift_, blocks_.inverse(), st);
  // The surrogate, the blocks and the state change together: after a failure none is usable.
  gram_stale_ = true;
  if (!surrogate.update(Xk, &step)) return false;  // no one-pass rebuild (e.g. distance terms): the caller prepares
  set_gap(s_, step.total(), st, nullptr);
  mark_partial(step.shares(), st);
  return true;
}

}  // namespace sdprl::xt_step
