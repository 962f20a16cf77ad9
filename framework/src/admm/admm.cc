// The inner ADMM on the surrogate H (algorithm.md section 3; formulas in sdprl/surrogate.h).
#include <algorithm>
#include <cmath>

#include "linalg/pcg.h"
#include "sdprl/surrogate.h"

namespace sdprl {

Admm::Admm(const Surrogate& surrogate, double rho, const AdmmOptions& options)
    : s_(surrogate), rho_(rho), options_(options) {}

Admm::~Admm() = default;

void Admm::prepare() {
  const TermLinearization& lin = s_.linearization();
  const Index n = s_.rows(), r = s_.rank();
  // Exact row-by-row solve when P*P is block diagonal by rows and B is diagonal (row-split
  // majoriser, no A-curvature); otherwise the same blocks precondition CG.
  direct_ = lin.rows_decoupled() && s_.b_is_diagonal();
  Matrix gram;
  lin.gram_row_blocks(gram);
  blocks_.resize(n);
  zero_row_.assign(n, 0);
  const Vector& bd = s_.b_diagonal();
  Eigen::MatrixXd K(r, r);
  for (Index i = 0; i < n; ++i) {
    // Row block of 2 B + rho P*P.
    K = rho_ * gram.middleRows(i * r, r);
    K.diagonal().array() += 2.0 * bd[i];
    if (K.cwiseAbs().maxCoeff() == 0.0) {
      zero_row_[i] = 1;  // no term touches row i and no regularizer: x_i does not enter F
      continue;
    }
    blocks_[i].compute(K);
    if (blocks_[i].info() != Eigen::Success) {
      // Singular block (lambda = 0 and a rank-deficient Gram): a tiny ridge keeps the step finite.
      K.diagonal().array() += 1e-12 * K.trace() + 1e-300;
      blocks_[i].compute(K);
    }
  }
}

void Admm::reset_if_needed(AdmmState& state) const {
  const Index n = s_.rows(), r = s_.rank(), h = s_.split_terms();
  if (state.D.rows() != n || state.D.cols() != r) state.D.setZero(n, r);
  if (state.e.size() != h) state.e.setZero(h);
  if (state.nu.size() != h) state.nu.setZero(h);
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
}

void Admm::apply_preconditioner(const Matrix& R, Matrix& out) const {
  out.resize(R.rows(), R.cols());
  for (Index i = 0; i < s_.rows(); ++i) {
    if (zero_row_[i]) {
      out.row(i).setZero();
    } else {
      out.row(i) = blocks_[i].solve(R.row(i).transpose()).transpose();
    }
  }
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
  const TermLinearization& lin = s_.linearization();
  const Vector& b = lin.offsets();
  // Xt-step: (2B + rho P*P) D = -G - P*(nu + rho (b - e)).
  y_ = st.nu + rho_ * (b - st.e);
  lin.apply_adjoint(y_, work_);
  rhs_ = -s_.G() - work_;
  solve_xt(rhs_, st.D, eps, &st.cg_iterations);
  // e-step and nu-step, elementwise.
  lin.apply(st.D, st.PD);
  const double threshold = 2.0 / rho_;
  const Index h = b.size();
  for (Index k = 0; k < h; ++k) {
    const double v = st.PD[k] + b[k];
    const double z = v + st.nu[k] / rho_;
    const double e = z > threshold ? z - threshold : (z < -threshold ? z + threshold : 0.0);
    st.e[k] = e;
    st.nu[k] += rho_ * (v - e);
  }
  st.primal = s_.value(st.D, &st.PD);
  st.dual = s_.dual(st.nu);
  st.gap = st.primal - st.dual;
}

int Admm::run(AdmmState& st, double eps) {
  reset_if_needed(st);
  st.cg_iterations = 0;
  int t = 0;
  // At least one iteration: testing the gap first lets a warm nu return Xt = 0 and stall the MM.
  do {
    iterate(st, eps);
    ++t;
  } while (t < options_.max_iterations && !(st.gap <= eps) && std::isfinite(st.gap));
  st.iterations = t;
  return t;
}

}  // namespace sdprl
