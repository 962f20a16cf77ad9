// ConstraintSet: the m loss terms <X, Q_tau X> - t_tau of a model, and their linearisation at one
// MM iterate (docs/method.md sections 1-3). The solver never sees Q_tau itself: every term family
// (entry, distance, dense, ...) implements these maps with its own fast path.
#pragma once

#include <memory>
#include <string>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl {

class Loss;

// Receives each row of a row-split linearisation as OnePassUpdate::update_with_loss() finishes it,
// while the row's data are still in cache. The ADMM uses it to factor the row's block and run the
// row's share of the next MM step's first iteration in the same pass over the terms (the partner
// rows of X are gathered once per MM step instead of twice).
class SDPRL_API RowConsumer {
 public:
  virtual ~RowConsumer();
  // Row i is final: its b_h (TermLinearization::offsets()), its diagonal entry C_ii of the
  // curvature and its Gram block gram_block (r x r, row-major: sum_h a_h a_h^T) are set, and `a`
  // holds its a_h component by component as RowSplitView::row_vectors() writes them (deg = its
  // number of split terms; `a` may be nullptr when deg == 0). Called exactly once per row, rows in
  // any order and from several threads at once. May throw; update_with_loss() then rethrows.
  virtual void consume_row(Index i, const double* a, Index deg, const double* gram_block, double curvature) = 0;
};

// How the ADMM Xt-step treats a term that couples two rows of Xt (docs/method.md section 3).
//  kRowSplit: replace each off-diagonal term by two half-terms, each touching one row (a looser
//             but valid majoriser that touches F at Xt = 0). With a diagonal B the Xt-step then
//             splits into n independent r x r systems, factored once per MM step.
//  kCoupled:  keep the surrogate H of Prop. 2 exactly; the Xt-step is one coupled linear system
//             solved by preconditioned CG.
//  kAuto:     a solver option only (make_linearization never receives it), the default: the
//             exact surrogate where its dual coordinate step applies (as kCoupled, ended at a
//             bracketed point), kExactFinish for models whose terms are constraints (sdpa),
//             kRowSplit elsewhere, where the exact steps cost 10-500x (docs/method.md section 7.2).
//  kExactFinish: a solver option only: row-split while its steps make progress, then the exact
//             surrogate until the run is proved stationary; the exact surrogate from the start
//             where its dual coordinate step applies.
enum class SplitMode { kRowSplit, kCoupled, kAuto, kExactFinish };

SDPRL_API const char* to_string(SplitMode mode);

// Optional capabilities of a TermLinearization. Each is a small interface of its own; a
// linearisation that has one returns a pointer to it (usually `this`, the class deriving from both)
// from the matching query of TermLinearization, and nullptr when it has not (the default, also
// right for a mode in which the capability does not apply). The inner solver then takes a faster
// path; without any of them it runs on the core maps alone, with the same surrogate.

// Row-split structure: every split term has the form P_h = e_i a_h^T (one row i, a vector a_h in
// R^r), the split terms of row i numbered row_offsets()[i] .. row_offsets()[i+1]-1. The ADMM then
// runs one fused, cache-resident pass per row and iteration instead of separate passes for P, P*
// and the gap (framework/src/admm/row_kernel.h).
class SDPRL_API RowSplitView {
 public:
  virtual ~RowSplitView();
  // The n + 1 offsets.
  virtual const Index* row_offsets() const = 0;
  // Writes a_h of the split terms of row i component by component: out[c * deg + q] is entry c of
  // a_h for h = row_offsets()[i] + q (deg = row_offsets()[i+1] - row_offsets()[i]), so that the
  // kernel's loops over h are contiguous and vectorise.
  virtual void row_vectors(Index i, double* out) const = 0;
};

// The one-pass MM rebuild (the solver's surrogate update at each MM step): does what
// ConstraintSet::evaluate, Loss::evaluate on |r| and TermLinearization::update(X, w, r) do
// together, in one pass over the split terms that never forms the m-vectors r and w (their
// term-indexed gather was a third of an MM step at m = 10^5).
class SDPRL_API OnePassUpdate {
 public:
  virtual ~OnePassUpdate();
  // Returns sum_tau phi(|r_tau|) in *phi_sum and sum_tau w_tau |r_tau| in *weighted_abs_sum: the
  // parts of F(X) and of the surrogate's constant c. May call `loss` from several threads at once.
  // `rows` is nullptr unless the linearisation also offers a RowSplitView; then it hands every row
  // to `rows` as soon as the row is final (see RowConsumer).
  virtual void update_with_loss(const Matrix& X, const Loss& loss, double* phi_sum, double* weighted_abs_sum,
                                RowConsumer* rows) = 0;
};

// Loss weights outside P: split term h of H is 2 w_h |<D, P_h> + b_h| with P_h and b_h unweighted,
// instead of 2 |<D, P_h> + b_h| with the weight folded in. The ADMM's e-step then thresholds at
// 2 w_h / rho and its multipliers satisfy |nu_h| <= 2 w_h (docs/method.md section 3.2). The same H, another
// ADMM metric: it lets P*P stay independent of the loss weights, so a family whose Gram blocks are
// all one matrix keeps them so under a concave loss (AllEntriesTerms: one r x r block instead of n
// weighted ones, O(n r^2) per MM step instead of O(n^2 r^2)).
class SDPRL_API ExternalWeights {
 public:
  virtual ~ExternalWeights();
  // w_h: length TermLinearization::size(), all >= 0.
  virtual const Vector& term_weights() const = 0;
};

// Summaries of P*P's row blocks without the n r^2 doubles of TermLinearization::gram_row_blocks().
class SDPRL_API GramSummary {
 public:
  virtual ~GramSummary();
  // The traces of the n blocks (length n), sum_h |P_h(i,:)|^2: all that the row-scaled CG
  // preconditioner of the coupled Xt-step reads (AdmmOptions::preconditioner). A family for large
  // n computes them in one pass over its terms.
  virtual void gram_row_traces(Vector& traces) const = 0;
  // True when every row block is one and the same r x r matrix; then writes it to `block` and the
  // ADMM factors it once (one eigendecomposition) instead of n times.
  virtual bool shared_gram_block(Matrix& block) const = 0;
};

// The loss terms' part of the surrogate H at an iterate X_k (docs/method.md section 2):
//   sum_h 2 |<Xt, P_h> + b_h|  +  <Xt, C Xt>,     C = sum_tau w_tau |sym(Q_tau)|
// (or sum_h 2 w_h |<Xt, P_h> + b_h| with the weights kept outside P: see ExternalWeights).
// The index h runs over "split terms": one per term (kCoupled) or per half-term (kRowSplit).
// Their number and order never change between MM steps, so the ADMM variables (nu, e) of one MM
// step warm-start the next.
//
// A new term family implements the ten core maps below; the capability queries after them are
// optional fast paths (each returns nullptr unless overridden).
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
  // The most rows of X that one P_h is nonzero in: 1 when rows_decoupled(), 2 for terms that
  // couple two rows (entries, distances), 0 when not known (the default, unless rows_decoupled()).
  // By Cauchy-Schwarz over a term's rows, P*P <= k blockdiag(P*P) for k = rows_per_term(), the
  // majorant of the linearised coupled Xt-step (docs/method.md section 3.4).
  virtual Index rows_per_term() const;

  // Capabilities (see above). Queried after update() or update_with_loss(), and again at every
  // MM step, so an answer may depend on the mode and on the first update.
  virtual const RowSplitView* row_split() const;
  virtual OnePassUpdate* one_pass();
  virtual const ExternalWeights* external_weights() const;
  virtual const GramSummary* gram_summary() const;
};

// The capabilities' answers with their generic equivalents where a linearisation has none:
// w_h, or nullptr (weights folded into P).
SDPRL_API const Vector* term_weights(const TermLinearization& lin);
// GramSummary::gram_row_traces, or the traces of gram_row_blocks() (through its n r^2 doubles).
SDPRL_API void gram_row_traces(const TermLinearization& lin, Vector& traces);
// GramSummary::shared_gram_block, or false.
SDPRL_API bool shared_gram_block(const TermLinearization& lin, Matrix& block);

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
