// ConstraintSet: the m loss terms <X, Q_tau X> - t_tau of a model, and their linearisation at one
// MM iterate (algorithm.md sections 1-3). The solver never sees Q_tau itself: every term family
// (entry, distance, dense, ...) implements these maps with its own fast path.
#pragma once

#include <memory>
#include <string>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl {

class Loss;

// Receives each row of a row-split linearisation as TermLinearization::update_with_loss() finishes
// it, while the row's data are still in cache. The ADMM uses it to factor the row's block and run
// the row's share of the next MM step's first iteration in the same pass over the terms (the
// partner rows of X are gathered once per MM step instead of twice; admm/row_kernel.h).
class SDPRL_API RowConsumer {
 public:
  virtual ~RowConsumer();
  // Row i is final: its b_h (TermLinearization::offsets()), its diagonal entry C_ii of the
  // curvature and its Gram block gram_block (r x r, row-major: sum_h a_h a_h^T) are set, and `a`
  // holds its a_h component by component as row_vectors() writes them (deg = its number of split
  // terms; `a` may be nullptr when deg == 0). Called exactly once per row, rows in any order and
  // from several threads at once. May throw; update_with_loss() then rethrows.
  virtual void consume_row(Index i, const double* a, Index deg, const double* gram_block, double curvature) = 0;
};

// How the ADMM Xt-step treats a term that couples two rows of Xt (algorithm.md section 3).
//  kRowSplit: replace each off-diagonal term by two half-terms, each touching one row (a looser
//             but valid majoriser that touches F at Xt = 0). With a diagonal B the Xt-step then
//             splits into n independent r x r systems, factored once per MM step.
//  kCoupled:  keep the surrogate H of Prop. 2 exactly; the Xt-step is one coupled linear system
//             solved by preconditioned CG.
enum class SplitMode { kRowSplit, kCoupled };

SDPRL_API const char* to_string(SplitMode mode);

// The loss terms' part of the surrogate H at an iterate X_k (algorithm.md section 2):
//   sum_h 2 |<Xt, P_h> + b_h|  +  <Xt, C Xt>,     C = sum_tau w_tau |sym(Q_tau)|
// (or sum_h 2 w_h |<Xt, P_h> + b_h| with the weights kept outside P: see term_weights()).
// The index h runs over "split terms": one per term (kCoupled) or per half-term (kRowSplit).
// Their number and order never change between MM steps, so the ADMM variables (nu, e) of one MM
// step warm-start the next.
class SDPRL_API TermLinearization {
 public:
  virtual ~TermLinearization();

  // Recomputes P_h, b_h and C at the iterate X with weights w_tau = phi'(|r_tau|) and residuals
  // r_tau = <X, Q_tau X> - t_tau.
  virtual void update(const Matrix& X, const Vector& weights, const Vector& residuals) = 0;

  // Number of split terms (the length of the ADMM vectors e and nu).
  virtual Index size() const = 0;
  // b_h.
  virtual const Vector& offsets() const = 0;
  // out_h = <D, P_h> for every split term (out is resized).
  virtual void apply(const Matrix& D, Vector& out) const = 0;
  // out = sum_h y_h P_h (n x r, overwritten).
  virtual void apply_adjoint(const Vector& y, Matrix& out) const = 0;
  // out = C D (overwritten).
  virtual void apply_curvature(const Matrix& D, Matrix& out) const = 0;
  // True when C is diagonal; then curvature_diagonal() gives it exactly.
  virtual bool curvature_is_diagonal() const = 0;
  // diag(C) (length n). Exact C when curvature_is_diagonal(), a preconditioner otherwise.
  virtual void curvature_diagonal(Vector& d) const = 0;
  // True when every P_h is nonzero in one row only, so that P*P is block diagonal by rows.
  virtual bool rows_decoupled() const = 0;
  // The r x r diagonal blocks of P*P: block i (rows i*r .. i*r + r - 1 of the (n r) x r result)
  // is sum_h P_h(i,:)^T P_h(i,:). Exact P*P when rows_decoupled(), a preconditioner otherwise.
  virtual void gram_row_blocks(Matrix& blocks) const = 0;
  // The traces of those n blocks (length n), sum_h |P_h(i,:)|^2: all that the row-scaled CG
  // preconditioner of the coupled Xt-step reads (AdmmOptions::preconditioner), which exists to
  // avoid the blocks' n r^2 doubles. Default: from gram_row_blocks(), through those n r^2 doubles;
  // a family for large n overrides it with one pass over its terms.
  virtual void gram_row_traces(Vector& traces) const;

  // Optional fast path of the row-split Xt-step (framework/src/admm/row_kernel.h). A linearisation
  // whose every split term has the form P_h = e_i a_h^T (one row i, a vector a_h in R^r), with the
  // split terms of row i numbered row_offsets()[i] .. row_offsets()[i+1]-1, returns those n + 1
  // offsets here and writes a_h on request; the ADMM then runs one fused, cache-resident pass per
  // row and iteration instead of separate passes for P, P* and the gap. nullptr: not available.
  virtual const Index* row_offsets() const;
  // Writes a_h of the split terms of row i component by component: out[c * deg + q] is entry c of
  // a_h for h = row_offsets()[i] + q (deg = row_offsets()[i+1] - row_offsets()[i]), so that the
  // kernel's loops over h are contiguous and vectorise. Called only when row_offsets() != nullptr.
  virtual void row_vectors(Index i, double* out) const;

  // Optional weights outside P. nullptr (the default): split term h of H is 2 |<D, P_h> + b_h|, the
  // loss weight folded into P_h and b_h. Otherwise (length size(), all >= 0) it is
  // 2 w_h |<D, P_h> + b_h| with P_h and b_h unweighted; the ADMM's e-step then thresholds at
  // 2 w_h / rho and its multipliers satisfy |nu_h| <= 2 w_h (sdprl/surrogate.h). The same H, another
  // ADMM metric: it lets P*P stay independent of the loss weights, so a family whose Gram blocks are
  // all one matrix keeps them so under a concave loss (AllEntriesTerms: one r x r block instead of
  // n weighted ones, O(n r^2) per MM step instead of O(n^2 r^2)).
  virtual const Vector* term_weights() const;
  // True when every row block of gram_row_blocks() is one and the same r x r matrix; then writes it
  // to `block` and the ADMM factors it once (one eigendecomposition) instead of n times. Default:
  // false.
  virtual bool shared_gram_block(Matrix& block) const;

  // Optional fast path of the MM rebuild (Surrogate::update). Does what ConstraintSet::evaluate,
  // Loss::evaluate on |r| and update(X, w, r) do together, in one pass over the split terms that
  // never forms the m-vectors r and w (their term-indexed gather was a third of an MM step at
  // m = 10^5), and returns sum_tau phi(|r_tau|) in *phi_sum and sum_tau w_tau |r_tau| in
  // *weighted_abs_sum: the parts of F(X) and of the surrogate's constant c. May call `loss` from
  // several threads at once. When `rows` is not nullptr (only with row_offsets() != nullptr), hands
  // every row to it as soon as the row is final (see RowConsumer). Returns false when not available
  // (the default); then the surrogate takes the three separate steps and `rows` is not called.
  virtual bool update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum, double* weighted_abs_sum,
                                RowConsumer* rows);
};

class SDPRL_API ConstraintSet {
 public:
  virtual ~ConstraintSet();

  // The term family, e.g. "entry", "distance", "dense".
  virtual std::string family() const = 0;
  // n: the number of rows of X.
  virtual Index dimension() const = 0;
  // m: the number of terms.
  virtual Index size() const = 0;
  // t_tau.
  virtual const Vector& targets() const = 0;
  // values_tau = <X, Q_tau X> (resized).
  virtual void evaluate(const Matrix& X, Vector& values) const = 0;
  // out = sum_tau y_tau sym(Q_tau) V for an n x k matrix V (overwritten). This is the adjoint of
  // Z -> (<Z, Q_tau>)_tau on symmetric Z: it gives the gradient of the loss terms and the
  // operator of the spectral start.
  virtual void apply_adjoint_sym(const Vector& y, const Matrix& V, Matrix& out) const = 0;
  // A linearisation object for this set; the solver calls update() once per MM step.
  virtual std::unique_ptr<TermLinearization> make_linearization(SplitMode mode) const = 0;
};

}  // namespace sdprl
