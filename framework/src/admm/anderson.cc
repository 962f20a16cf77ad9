// Anderson acceleration of one ADMM run (admm/anderson.h; docs/method.md section 3.7).
#include "admm/anderson.h"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>

#include "admm/admm_state.h"

namespace sdprl {

Anderson::Anderson(int memory, bool with_d)
    : memory_(std::max(1, memory)), with_d_(with_d), dg_(memory_), sums_(memory_), gram_(memory_, memory_) {}

void Anderson::gather(const AdmmState& st, double rho, Vector& z) const {
  const Index h = st.nu.size(), d = with_d_ ? st.D.size() : 0;
  z.resize(h + d);
  z.head(h) = st.nu + rho * st.e;
  if (d > 0) z.tail(d) = Eigen::Map<const Vector>(st.D.data(), d);
}

void Anderson::scatter(const Vector& z, double rho, const Vector* weights, AdmmState& st) const {
  const Index h = st.nu.size(), d = with_d_ ? st.D.size() : 0;
  for (Index i = 0; i < h; ++i) {
    const double bound = 2.0 * (weights ? (*weights)[i] : 1.0);
    const double nu = std::clamp(z[i], -bound, bound);
    st.nu[i] = nu;
    st.e[i] = (z[i] - nu) / rho;
  }
  if (d > 0) Eigen::Map<Vector>(st.D.data(), d) = z.tail(d);
  st.adjoint_generation = 0;  // the carried adjoints P*(nu), P*(...) no longer match
}

void Anderson::forget() {
  count_ = next_ = 0;
  g_prev_.resize(0);
}

bool Anderson::step(AdmmState& st, double rho, const Vector* weights) {
  gather(st, rho, t_);
  if (z_.size() != t_.size()) {  // the first call: z_0 is unknown, T(z_0) starts the sequence
    z_ = t_;
    return false;
  }
  g_ = t_ - z_;
  const double norm = g_.norm();
  if (extrapolated_ && !(norm <= last_norm_)) {
    // The extrapolated z_k's residual exceeds that of the point it was extrapolated from: take
    // the plain T(z_{k-1}) instead and start the memory afresh.
    extrapolated_ = false;
    forget();
    z_ = plain_;
    scatter(z_, rho, weights, st);
    return false;
  }
  // The passes over z's length are this function's cost (about a fifth of a linearised exact
  // ADMM iteration on the quickstart): the Gram row and the right-hand side are accumulated in one
  // blocked pass, which reads each dg_i once while dg_j and g_k stay in L1, and the extrapolation
  // writes z_ once per block instead of once per difference.
  constexpr Index kBlock = 1024;
  const Index size = g_.size();
  rhs_.setZero(memory_);
  if (g_prev_.size() == size) {
    // dg_j = g_k - g_{k-1}, sums_j = (z_k - z_{k-1}) + dg_j = T(z_k) - T(z_{k-1}) into the ring,
    // and row j of the Gram.
    const int j = next_;
    dg_[j] = g_ - g_prev_;
    sums_[j] = z_ - z_prev_ + dg_[j];
    next_ = (next_ + 1) % memory_;
    count_ = std::min(count_ + 1, memory_);
    for (int i = 0; i < count_; ++i) gram_(i, j) = 0.0;
    for (Index start = 0; start < size; start += kBlock) {
      const Index len = std::min(kBlock, size - start);
      const auto dgj = dg_[j].segment(start, len);
      const auto g = g_.segment(start, len);
      for (int i = 0; i < count_; ++i) {
        const auto dgi = dg_[i].segment(start, len);
        gram_(i, j) += dgi.dot(dgj);
        rhs_[i] += dgi.dot(g);
      }
    }
    for (int i = 0; i < count_; ++i) gram_(j, i) = gram_(i, j);
  }
  z_prev_.swap(z_);
  g_prev_.swap(g_);  // g_ is formed afresh by the next call
  last_norm_ = norm;
  extrapolated_ = false;
  if (count_ == 0) {
    z_ = t_;
    return false;
  }
  // gamma = argmin ||g_k - dG gamma||, by the normal equations with a small ridge (the differences
  // become nearly dependent as the run converges).
  system_ = gram_.topLeftCorner(count_, count_);
  system_.diagonal().array() += 1e-10 * system_.trace() + 1e-300;
  const Vector gamma = system_.ldlt().solve(rhs_.head(count_));
  if (!gamma.allFinite()) {
    z_ = t_;
    return false;
  }
  plain_.swap(t_);  // t_ is gathered afresh by the next call
  z_.resize(size);
  for (Index start = 0; start < size; start += kBlock) {
    const Index len = std::min(kBlock, size - start);
    auto z = z_.segment(start, len);
    z = plain_.segment(start, len);
    for (int i = 0; i < count_; ++i) z.noalias() -= gamma[i] * sums_[i].segment(start, len);
  }
  scatter(z_, rho, weights, st);
  extrapolated_ = true;
  ++extrapolations_;
  return true;
}

}  // namespace sdprl
