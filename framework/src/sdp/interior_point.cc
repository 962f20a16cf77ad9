// Small SDPs given by constraints, by a primal-dual interior-point method (sdp/interior_point.h;
// docs/method.md section 9.3).
#include "sdp/interior_point.h"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "mm/loop_support.h"
#include "sdp/augmented_lagrangian.h"
#include "sdp/judge.h"
#include "sdp/solve_start.h"
#include "sdprl/error.h"
#include "sdprl/regularizers/symmetric_sparse_regularizer.h"
#include "sdprl/terms/sparse_matrix_terms.h"

namespace sdprl::sdp {
namespace {

using mm::Clock;
using mm::fmt;
using mm::seconds_since;

// What is held densely: the m x m Schur complement, about ten copies of every block, and the
// Schur complement's flops per iteration (about a second's worth here).
constexpr Index kMaxConstraints = 3000;
constexpr double kMaxBlockEntries = 1e6;
constexpr double kMaxSchurFlops = 3e9;
constexpr int kMaxIterations = 100;
// Every relative measure (primal and dual infeasibility, the gap) below this ends the method; it
// also ends where a step is shorter than kShortestStep or the Schur complement is not positive.
constexpr double kTolerance = 1e-9;
constexpr double kShortestStep = 1e-8;
// Eigenvalues of a block of Z below this fraction of its largest are rounding, not rank.
constexpr double kRankCut = 1e-13;

// One entry of a constraint (or of A) inside a block, in the block's own row numbers; both halves
// of an off-diagonal entry are listed, so that <Q, W> = sum v W(p, q) for any W.
struct Entry {
  Index p = 0, q = 0;
  double v = 0.0;
};

struct Block {
  std::vector<Index> rows;               // the global row of each of the block's rows
  std::vector<Index> constraints;        // those with an entry here, ascending
  std::vector<std::vector<Entry>> parts;  // their entries here, parallel to `constraints`
  std::vector<std::vector<Index>> columns;  // the distinct columns of each part
  std::vector<char> dense;  // the Schur column of that constraint by G = X Q_j S^-1 (else entrywise)
  Matrix C;                 // A's block
  Matrix X, S, Sinv, Rd, dX, dS, XRdSinv, Rc;
  Index size() const { return static_cast<Index>(rows.size()); }
};

struct Structure {
  std::vector<Block> blocks;
  Vector scale;  // ||Q_i||_F
  double flops = 0.0;  // the Schur complement's, per iteration
  double entries = 0.0;  // sum over blocks of n_b^2
};

Index find(std::vector<Index>& parent, Index i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// The blocks: connected components of the rows coupled by any Q_i's or A's off-diagonal entries.
Structure analyse(const SparseMatrixTerms& terms, const Eigen::SparseMatrix<double>* A) {
  const Index n = terms.dimension(), m = terms.size();
  const auto& rows = terms.upper_rows();
  const auto& cols = terms.upper_cols();
  const auto& values = terms.upper_values();
  std::vector<Index> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), Index{0});
  const auto unite = [&](Index a, Index b) {
    a = find(parent, a);
    b = find(parent, b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  for (std::size_t e = 0; e < rows.size(); ++e)
    if (rows[e] != cols[e]) unite(rows[e], cols[e]);
  if (A)
    for (Index k = 0; k < A->outerSize(); ++k)
      for (Eigen::SparseMatrix<double>::InnerIterator it(*A, k); it; ++it)
        if (it.row() != it.col()) unite(it.row(), it.col());
  Structure s;
  std::vector<Index> block_of(static_cast<std::size_t>(n), -1), local(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) {
    const Index root = find(parent, i);
    if (block_of[root] < 0) {
      block_of[root] = static_cast<Index>(s.blocks.size());
      s.blocks.emplace_back();
    }
    Block& b = s.blocks[block_of[root]];
    block_of[i] = block_of[root];
    local[i] = b.size();
    b.rows.push_back(i);
  }
  s.scale = Vector::Ones(m);
  for (Index k = 0; k < m; ++k) {
    double sum = 0.0;
    for (Index e = terms.entry_begin(k); e < terms.entry_begin(k + 1); ++e) {
      const auto u = static_cast<std::size_t>(e);
      const Index p = rows[u], q = cols[u];
      Block& b = s.blocks[block_of[p]];
      if (b.constraints.empty() || b.constraints.back() != k) {
        b.constraints.push_back(k);
        b.parts.emplace_back();
      }
      b.parts.back().push_back({local[p], local[q], values[u]});
      if (p != q) b.parts.back().push_back({local[q], local[p], values[u]});
      sum += (p == q ? 1.0 : 2.0) * values[u] * values[u];
    }
    if (sum > 0.0) s.scale[k] = std::sqrt(sum);
  }
  for (Block& b : s.blocks) {
    const double nb = static_cast<double>(b.size());
    s.entries += nb * nb;
    double before = 0.0;  // entries of the parts i <= j
    b.columns.resize(b.parts.size());
    b.dense.resize(b.parts.size());
    for (std::size_t j = 0; j < b.parts.size(); ++j) {
      auto& c = b.columns[j];
      for (const Entry& e : b.parts[j]) c.push_back(e.q);
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      const double f = static_cast<double>(b.parts[j].size());
      before += f;
      const double dense = nb * f + nb * nb * static_cast<double>(c.size()) + before;
      const double sparse = f * before;
      b.dense[j] = dense < sparse;
      s.flops += std::min(dense, sparse);
    }
  }
  return s;
}

// <Q_i, W> for every constraint, W given per block (any square matrices: both halves are read).
template <class Get>
void apply_constraints(const Structure& s, Index m, Get get, Vector& out) {
  out.setZero(m);
  for (const Block& b : s.blocks) {
    const Matrix& W = get(b);
    for (std::size_t k = 0; k < b.constraints.size(); ++k) {
      double sum = 0.0;
      for (const Entry& e : b.parts[k]) sum += e.v * W(e.p, e.q);
      out[b.constraints[k]] += sum;
    }
  }
}

// sum_i y_i Q_i restricted to block b, scaled: Q_i / scale_i.
void adjoint(const Block& b, const Vector& y, const Vector& scale, Matrix& out) {
  out.setZero(b.size(), b.size());
  for (std::size_t k = 0; k < b.constraints.size(); ++k) {
    const Index i = b.constraints[k];
    const double w = y[i] / scale[i];
    for (const Entry& e : b.parts[k]) out(e.p, e.q) += w * e.v;
  }
}

// The HKM Schur complement M_ij = <Q_i, X Q_j S^-1> over the blocks (its upper triangle), by
// G = (X Q_j)[:, c] S^-1[c, :] over Q_j's columns c where that is cheaper, else entry by entry.
void schur_complement(const Structure& s, Matrix& M) {
  M.setZero();
  for (const Block& blk : s.blocks) {
    const Index nb = blk.size();
    const Matrix& R = blk.Sinv;
    const auto count = static_cast<long>(blk.constraints.size());
#pragma omp parallel for schedule(dynamic) if (count > 8)
    for (long j = 0; j < count; ++j) {
      const auto& part = blk.parts[j];
      const Index col = blk.constraints[j];
      if (blk.dense[j]) {
        const auto& c = blk.columns[j];
        Matrix T = Matrix::Zero(nb, static_cast<Index>(c.size())), Rc(static_cast<Index>(c.size()), nb);
        for (const Entry& e : part) {
          const Index at = std::lower_bound(c.begin(), c.end(), e.q) - c.begin();
          T.col(at) += e.v * blk.X.col(e.p);
        }
        for (std::size_t k = 0; k < c.size(); ++k) Rc.row(static_cast<Index>(k)) = R.row(c[k]);
        const Matrix G = T * Rc;
        for (long i = 0; i <= j; ++i) {
          double sum = 0.0;
          for (const Entry& e : blk.parts[i]) sum += e.v * G(e.p, e.q);
          M(blk.constraints[i], col) += sum;
        }
      } else {
        for (long i = 0; i <= j; ++i) {
          double sum = 0.0;
          for (const Entry& a : blk.parts[i])
            for (const Entry& e : part) sum += a.v * e.v * blk.X(a.p, e.p) * R(e.q, a.q);
          M(blk.constraints[i], col) += sum;
        }
      }
    }
  }
}

// The largest alpha with M + alpha D PSD (infinity when D is PSD), M positive definite; 0 when M is
// not (numerically).
double step_to_boundary(const Matrix& M, const Matrix& D) {
  if (M.rows() == 1) return D(0, 0) < 0.0 ? -M(0, 0) / D(0, 0) : std::numeric_limits<double>::infinity();
  Eigen::LLT<Matrix> llt(M);
  if (llt.info() != Eigen::Success) return 0.0;
  Matrix W = llt.matrixL().solve(D);
  W = llt.matrixL().solve(W.transpose().eval());
  W = 0.5 * (W + W.transpose()).eval();
  const double lowest = Eigen::SelfAdjointEigenSolver<Matrix>(W, Eigen::EigenvaluesOnly).eigenvalues()[0];
  return lowest < 0.0 ? -1.0 / lowest : std::numeric_limits<double>::infinity();
}

double inner(const Matrix& a, const Matrix& b) { return a.cwiseProduct(b).sum(); }

// X with Z = X X^T block by block (each block's eigenvalues above kRankCut of its largest kept).
void factor(const Structure& s, Index n, Matrix& X) {
  std::vector<Eigen::SelfAdjointEigenSolver<Matrix>> eig(s.blocks.size());
  Index rank = 1;
  std::vector<Index> kept(s.blocks.size());
  for (std::size_t k = 0; k < s.blocks.size(); ++k) {
    eig[k].compute(s.blocks[k].X);
    const Vector& l = eig[k].eigenvalues();
    const double cut = kRankCut * std::max(l.maxCoeff(), 0.0);
    Index count = 0;
    for (Index j = 0; j < l.size(); ++j) count += l[j] > cut && l[j] > 0.0;
    kept[k] = count;
    rank = std::max(rank, count);
  }
  X.setZero(n, rank);
  for (std::size_t k = 0; k < s.blocks.size(); ++k) {
    const Block& b = s.blocks[k];
    const Index nb = b.size();
    for (Index j = 0; j < kept[k]; ++j) {
      const Index col = nb - 1 - j;  // eigenvalues ascend
      const double root = std::sqrt(eig[k].eigenvalues()[col]);
      for (Index r = 0; r < nb; ++r) X(b.rows[r], j) = root * eig[k].eigenvectors()(r, col);
    }
  }
}

}  // namespace

std::string interior_point_problem(const Model& model, const Loss& loss, const SolverOptions& options,
                                   const RegularizationWeights& weights) {
  if (std::string p = augmented_lagrangian_problem(model, loss, options, weights); !p.empty()) return p;
  const auto* terms = dynamic_cast<const SparseMatrixTerms*>(model.terms.get());
  if (!terms) return "the model's terms are not sparse matrices (sdprl/terms/sparse_matrix_terms.h)";
  const auto* a = dynamic_cast<const SymmetricSparseRegularizer*>(model.quadratic.get());
  if (model.quadratic && !a) return "the model's objective is not a sparse matrix";
  if (terms->size() > kMaxConstraints)
    return std::to_string(terms->size()) + " constraints (an m x m Schur complement, m <= " +
           std::to_string(kMaxConstraints) + ")";
  const Structure s = analyse(*terms, a ? &a->matrix() : nullptr);
  if (s.entries > kMaxBlockEntries)
    return "its blocks hold " + fmt("%.3g", s.entries) + " entries densely (at most " + fmt("%.3g", kMaxBlockEntries) + ")";
  if (s.flops > kMaxSchurFlops)
    return "its Schur complement takes " + fmt("%.3g", s.flops) + " flops per iteration (at most " +
           fmt("%.3g", kMaxSchurFlops) + ")";
  return "";
}

Summary solve_interior_point(const Model& model, const Loss& loss, RegularizationWeights& weights,
                             const SolverOptions& options, Matrix& X, const IterationCallback& callback) {
  const auto t0 = Clock::now();
  if (const std::string problem = interior_point_problem(model, loss, options, weights); !problem.empty())
    throw Error("solver.type", "\"interior-point\" does not apply to this model: " + problem);
  Summary summary = begin_solve(model, options, SolverType::kInteriorPoint);
  const auto& terms = dynamic_cast<const SparseMatrixTerms&>(*model.terms);
  const auto* quadratic = dynamic_cast<const SymmetricSparseRegularizer*>(model.quadratic.get());
  const Index n = terms.dimension(), m = terms.size();
  Structure s = analyse(terms, quadratic ? &quadratic->matrix() : nullptr);
  const Vector& scale = s.scale;
  const Vector b = terms.targets().cwiseQuotient(scale);

  // A / ||A||_F per block (its entries between blocks are none: the blocks are A's components too).
  double objective_scale = 1.0;
  if (quadratic && quadratic->matrix().norm() > 0.0) objective_scale = quadratic->matrix().norm();
  std::vector<Index> block_of(static_cast<std::size_t>(n)), local(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < s.blocks.size(); ++k)
    for (Index r = 0; r < s.blocks[k].size(); ++r) {
      block_of[s.blocks[k].rows[r]] = static_cast<Index>(k);
      local[s.blocks[k].rows[r]] = r;
    }
  for (Block& blk : s.blocks) blk.C.setZero(blk.size(), blk.size());
  if (quadratic)
    for (Index k = 0; k < quadratic->matrix().outerSize(); ++k)
      for (Eigen::SparseMatrix<double>::InnerIterator it(quadratic->matrix(), k); it; ++it)
        s.blocks[block_of[it.row()]].C(local[it.row()], local[it.col()]) += it.value() / objective_scale;

  // The infeasible start X = xi I, S = eta I of SDPT3, per block.
  Index total = 0;
  for (Block& blk : s.blocks) {
    const Index nb = blk.size();
    total += nb;
    const double root = std::sqrt(static_cast<double>(nb));
    double x_size = 1.0, s_size = blk.C.norm();
    for (std::size_t k = 0; k < blk.constraints.size(); ++k) {
      const Index i = blk.constraints[k];
      double norm = 0.0;
      for (const Entry& e : blk.parts[k]) norm += e.v * e.v;
      norm = std::sqrt(norm) / scale[i];
      x_size = std::max(x_size, (1.0 + std::abs(b[i])) / (1.0 + norm));
      s_size = std::max(s_size, norm);
    }
    blk.X = std::max(10.0, root * x_size) * Matrix::Identity(nb, nb);
    blk.S = std::max({10.0, root, s_size}) * Matrix::Identity(nb, nb);
  }
  // Each part's values scaled (Q_i / ||Q_i||_F) once.
  for (Block& blk : s.blocks)
    for (std::size_t k = 0; k < blk.constraints.size(); ++k)
      for (Entry& e : blk.parts[k]) e.v /= scale[blk.constraints[k]];
  const Vector unit = Vector::Ones(m);  // (the parts are scaled now)
  summary.init_time = seconds_since(t0);

  const auto t1 = Clock::now();
  if (options.verbose)
    std::fprintf(stderr,
                 "-------------------------------------------------------------------------------\n"
                 "  sdprl: an SDP given by constraints, by a primal-dual interior-point method\n"
                 "  (HKM direction, Mehrotra predictor-corrector; docs/method.md section 9.3)\n"
                 "  n = %ld in %ld blocks, constraints = %ld\n"
                 "-------------------------------------------------------------------------------\n"
                 "iter      <A, Z>        t^T y      gap     primal      dual    step p/d      time\n",
                 static_cast<long>(n), static_cast<long>(s.blocks.size()), static_cast<long>(m));
  Vector y = Vector::Zero(m), rp(m), Ax(m), h(m), dy(m), hRd(m), Arc(m);
  Matrix M(m, m), work;
  const double b_norm = b.norm();
  double c_norm = 0.0;
  for (const Block& blk : s.blocks) c_norm += blk.C.squaredNorm();
  c_norm = std::sqrt(c_norm);
  struct Best {
    std::vector<Matrix> X, S;
    Vector y;
    double measure = std::numeric_limits<double>::infinity();
  } best;
  double tau = 0.9, step_p = 0.0, step_d = 0.0;
  int iteration = 0;
  bool interrupted = false, over_time = false, failed = false, reached = false;
  std::string failure;

  // The HKM direction for the right-hand side whose centring part is Rc (per block, in blk.Rc):
  // M dy = rp - A(Rc) + A(X Rd S^-1), dS = Rd - A^T dy, dX = sym(Rc - X dS S^-1).
  Eigen::LLT<Matrix, Eigen::Upper> schur;
  const auto direction = [&]() {
    apply_constraints(s, m, [](const Block& blk) -> const Matrix& { return blk.Rc; }, Arc);
    h = rp - Arc + hRd;
    dy = schur.solve(h);
    for (Block& blk : s.blocks) {
      adjoint(blk, dy, unit, work);
      blk.dS = blk.Rd - work;
      work = blk.Rc - blk.X * blk.dS * blk.Sinv;
      blk.dX = 0.5 * (work + work.transpose());
    }
  };
  const auto steps = [&](double fraction, double& ap, double& ad) {
    ap = ad = std::numeric_limits<double>::infinity();
    for (const Block& blk : s.blocks) {
      ap = std::min(ap, step_to_boundary(blk.X, blk.dX));
      ad = std::min(ad, step_to_boundary(blk.S, blk.dS));
    }
    ap = std::min(1.0, fraction * ap);
    ad = std::min(1.0, fraction * ad);
  };

  for (;;) {
    // Residuals and measures at the current point.
    apply_constraints(s, m, [](const Block& blk) -> const Matrix& { return blk.X; }, Ax);
    rp = b - Ax;
    double primal = 0.0, rd_norm = 0.0, complementarity = 0.0;
    for (Block& blk : s.blocks) {
      adjoint(blk, y, unit, work);
      blk.Rd = blk.C - blk.S - work;
      rd_norm += blk.Rd.squaredNorm();
      primal += inner(blk.C, blk.X);
      complementarity += inner(blk.X, blk.S);
    }
    const double dual = b.dot(y);
    const double mu = complementarity / static_cast<double>(total);
    const double p_inf = rp.norm() / (1.0 + b_norm), d_inf = std::sqrt(rd_norm) / (1.0 + c_norm);
    const double gap = std::abs(primal - dual) / (1.0 + std::abs(primal) + std::abs(dual));
    const double measure = std::max({p_inf, d_inf, gap});
    if (measure < best.measure && std::isfinite(measure)) {
      best.X.clear();
      best.S.clear();
      for (const Block& blk : s.blocks) {
        best.X.push_back(blk.X);
        best.S.push_back(blk.S);
      }
      best.y = y;
      best.measure = measure;
    }
    const double time = seconds_since(t1);
    if (options.verbose)
      std::fprintf(stderr, "%4d  %12.6e  %12.6e  %7.1e  %9.2e  %8.2e  %4.2f/%4.2f  %7.3fs\n", iteration,
                   primal * objective_scale, dual * objective_scale, gap, p_inf, d_inf, step_p, step_d, time);
    TraceRow row;
    row.mm_iteration = iteration;
    row.objective = primal * objective_scale;
    row.relative_change = measure;
    row.time = time;
    summary.trace.push_back(row);
    if (callback) {
      Matrix F;
      factor(s, n, F);
      if (!callback(row, F)) interrupted = true;
    }
    if (options.interrupt && options.interrupt->load()) interrupted = true;
    over_time = options.time_limit > 0.0 && seconds_since(t0) >= options.time_limit;
    if (!std::isfinite(measure)) {
      failed = true;
      failure = "the iterate is not finite";
    }
    reached = measure <= kTolerance;
    if (reached || interrupted || over_time || failed || iteration >= kMaxIterations) break;
    if (iteration > 0 && std::max(step_p, step_d) < kShortestStep) break;
    ++iteration;

    // S^-1, X Rd S^-1 and the Schur complement M_ij = <Q_i, X Q_j S^-1> (symmetric, positive definite).
    bool positive = true;
    for (Block& blk : s.blocks) {
      Eigen::LLT<Matrix> llt(blk.S);
      if (llt.info() != Eigen::Success) {
        positive = false;
        break;
      }
      blk.Sinv = llt.solve(Matrix::Identity(blk.size(), blk.size()));
      blk.XRdSinv = blk.X * blk.Rd * blk.Sinv;
    }
    if (!positive) {
      failure = "S lost its definiteness";
      break;
    }
    apply_constraints(s, m, [](const Block& blk) -> const Matrix& { return blk.XRdSinv; }, hRd);
    schur_complement(s, M);
    schur.compute(M);
    if (schur.info() != Eigen::Success) {
      const double shift = 1e-12 * M.diagonal().cwiseAbs().maxCoeff();
      M.diagonal().array() += shift;
      schur.compute(M);
      if (schur.info() != Eigen::Success) {
        failure = "the Schur complement is not positive definite";
        break;
      }
    }

    // Predictor (sigma = 0, Rc = -X), then Mehrotra's corrector at sigma = (mu_aff / mu)^e.
    for (Block& blk : s.blocks) blk.Rc = -blk.X;
    direction();
    double ap = 0.0, ad = 0.0;
    steps(1.0, ap, ad);
    double affine = 0.0;
    for (const Block& blk : s.blocks) affine += inner(blk.X + ap * blk.dX, blk.S + ad * blk.dS);
    affine /= static_cast<double>(total);
    const double exponent = std::max(1.0, 3.0 * std::min(ap, ad) * std::min(ap, ad));
    const double sigma = std::min(1.0, std::pow(std::max(affine, 0.0) / mu, exponent));
    for (Block& blk : s.blocks) blk.Rc = sigma * mu * blk.Sinv - blk.X - blk.dX * blk.dS * blk.Sinv;
    direction();
    steps(tau, step_p, step_d);
    for (Block& blk : s.blocks) {
      blk.X += step_p * blk.dX;
      blk.S += step_d * blk.dS;
    }
    y += step_d * dy;
    tau = 0.9 + 0.09 * std::min(step_p, step_d);
  }

  // The best point met, in the original scale: Z = X, y_i = ||A|| y'_i / ||Q_i||.
  for (std::size_t k = 0; k < s.blocks.size(); ++k) {
    s.blocks[k].X = best.X[k];
    s.blocks[k].S = best.S[k];
  }
  factor(s, n, X);
  const Vector mu = objective_scale * best.y.cwiseQuotient(scale);
  // lambda_min(S), S = A - sum mu_i Q_i = ||A|| (C - sum y'_i Q'_i), block by block.
  double lambda_min = std::numeric_limits<double>::infinity();
  for (const Block& blk : s.blocks) {
    adjoint(blk, best.y, unit, work);
    work = objective_scale * (blk.C - work);
    lambda_min = std::min(lambda_min, blk.size() == 1 ? work(0, 0)
                                                      : Eigen::SelfAdjointEigenSolver<Matrix>(work, Eigen::EigenvaluesOnly)
                                                            .eigenvalues()[0]);
  }
  const double violation = model.infeasibility(X);
  const double gamma_from = weights.gamma > 0.0 ? weights.gamma : 2.0;
  const Judgement judged = judge_multipliers(model, loss, weights, gamma_from, options.feasibility_tolerance, X,
                                             violation, mu, lambda_min);
  weights.gamma = judged.weights.gamma;
  summary.solve_time = seconds_since(t1);
  summary.rank = X.cols();
  summary.weights = weights;
  summary.mm_iterations = iteration;
  summary.admm_iterations = 0;
  summary.initial_objective = summary.trace.front().objective;
  summary.final_objective = objective(model, loss, weights, X);
  summary.certificate = judged.certificate.computed ? judged.certificate
                                                    : mm::certify(model, loss, weights, X, judged.multipliers);
  Certificate& certificate = summary.certificate;
  certificate.optimal = certificate.computed && certificate.relative_gap <= options.stationarity_tolerance;
  const bool certified = judged.answer.optimal;
  summary.status = interrupted                       ? SolverStatus::kInterrupted
                   : failed                          ? SolverStatus::kNumericalError
                   : certified || reached            ? SolverStatus::kConverged
                   : over_time                       ? SolverStatus::kTimeLimit
                   : iteration >= kMaxIterations     ? SolverStatus::kIterationLimit
                                                     : SolverStatus::kConverged;
  if (!failure.empty()) summary.message = failure + " (the best point met is the result)";
  if (model.evaluator) summary.metrics = model.evaluator->evaluate(X);
  return summary;
}

}  // namespace sdprl::sdp
