// Internal: the three factorings of the Xt-step's row blocks that the strategies (xt_step.h) solve
// with or precondition CG with. Block i of 2B + rho P*P + rho_k I, restricted to row i of D, is
//   K_i = rho (P*P)_ii + s_i I,   s_i = 2 B_ii + rho_k.
#pragma once

#include <vector>

#include "mm/surrogate.h"
#include "sdprl/types.h"
#include "xt_step/xt_step.h"

namespace sdprl::xt_step {

// The n inverted blocks K_i^{-1} (r x r, row-major) from TermLinearization::gram_row_blocks.
// Where the linearisation offers its blocks' rank-one parts (terms/row_factors.h), a row of d < r / 2
// parts keeps K_i^{-1} = (I - W_i^T W_i) / s_i implicitly (W_i: d x r, Woodbury's identity): O(d^2 r)
// to factor and O(d r) to apply instead of O(r^3) and O(r^2); the other rows are dense blocks as
// before. (inverse() and gram() are the dense form, which the
// fused row pass uses: its entry terms offer no parts.)
class SDPRL_API RowBlockInverse {
 public:
  // use_parts = false: always the dense form, for a caller that reads gram() and inverse() (the
  // fused row pass).
  explicit RowBlockInverse(bool use_parts = true) : use_parts_(use_parts) {}
  // Gram blocks of the surrogate's terms; returns tr(P*P) (the sum of the blocks' traces).
  double build(const Surrogate& s);
  void factor(const Surrogate& s, double rho, double rho_k);
  bool built(Index n, Index r) const {
    return parts_ ? factored_ && n_ == n && r_ == r : inverse_.size() == static_cast<std::size_t>(n * r * r);
  }
  // out.row(i) = K_i^{-1} R.row(i).
  void apply(const Matrix& R, Matrix& out) const;
  // out = P*P D (exact P*P when the rows are decoupled).
  void apply_gram(const Matrix& D, Matrix& out) const;

  Matrix& gram() { return gram_; }
  std::vector<double>& inverse() { return inverse_; }
  const double* inverse_data() const { return inverse_.data(); }

 private:
  Matrix gram_;                  // (n r) x r (without parts)
  std::vector<double> inverse_;  // n r^2 (without parts); with parts the dense rows' blocks only
  // With parts (terms::RowFactors): their copy F_ at build(), row after row from offsets_; per row
  // its dense block's index in inverse_ (-1: implicit) and 1 / s_i; W_i's rows in W_ beside F_'s.
  bool use_parts_ = true, parts_ = false;
  std::vector<Index> offsets_, dense_slot_;
  Matrix F_;
  Vector inverse_shift_;
  Matrix W_;
  Index n_ = 0, r_ = 0;
  bool factored_ = false;
};

// One block for every row (TermLinearization::shared_gram_block): G_s = V diag(g) V^T, so that
// K_i = V diag(rho g + s_i) V^T and K_i^{-1} = V diag(1 / (rho g + s_i)) V^T.
class SharedBlockInverse {
 public:
  double build(const Surrogate& s);
  void factor(const Surrogate& s, double rho, double rho_k);
  bool built(Index n, Index r) const { return inverse_.rows() == n && vectors_.rows() == r; }
  void apply(const Matrix& R, Matrix& out) const;
  // The same for the rows i0 .. i0 + R.rows() - 1 alone (R holds those rows of the right-hand side).
  void apply_rows(Index i0, const Matrix& R, Matrix& out) const;
  void apply_gram(const Matrix& D, Matrix& out) const;

 private:
  Matrix gram_;     // G_s (r x r)
  Matrix vectors_;  // V (r x r)
  Vector values_;   // g
  Matrix inverse_;  // n x r: 1 / (rho g_c + s_i), 0 on a zero row
};

// Each block replaced by its mean eigenvalue, (rho t_i / r + s_i) I with t_i = tr (P*P)_ii
// (TermLinearization::gram_row_traces): n doubles instead of n r^2. A preconditioner only.
class RowScaledInverse {
 public:
  double build(const Surrogate& s);
  void factor(const Surrogate& s, double rho, double rho_k);
  bool built(Index n, Index) const { return inverse_.size() == n; }
  void apply(const Matrix& R, Matrix& out) const;

 private:
  Vector traces_, inverse_;  // t_i; 1 / the diagonal (0 on a zero row)
};

// A strategy whose row blocks are the system (row-split, diagonal B): solved exactly by Inverse,
// factored at every prepare() and change of rho. Its subclasses say which kind they are and may
// run the whole iteration (XtStep::iterate_rows).
template <class Inverse>
class ExactBlocks : public XtStep {
 public:
  using XtStep::XtStep;
  void prepare(double rho, bool) override {
    balanced_rho_ = balanced(blocks_.build(s_));
    set_rho(rho);
  }
  void set_rho(double rho) override { blocks_.factor(s_, rho, shift_); }
  void solve(const Matrix& rhs, Matrix& D, double, long*) override { blocks_.apply(rhs, D); }
  void apply_gram(const Matrix& D, Matrix& out) const override { blocks_.apply_gram(D, out); }

 protected:
  Inverse blocks_;
};

}  // namespace sdprl::xt_step
