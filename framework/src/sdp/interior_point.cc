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
// The second try in long double (below) for problems whose Schur complement and block products
// take at most this many flops per iteration (hinf1: about 1e4).
constexpr double kExtendedWork = 1e6;
// Each side steps to tau = 0.9 + kStepGrowth min(last steps) of its distance to the boundary.
constexpr double kStepGrowth = 0.09;
// Every relative measure (primal and dual infeasibility, the gap) below this ends the method; it
// also ends where a step is shorter than kShortestStep or the Schur complement is not positive.
constexpr double kTolerance = 1e-9;
constexpr double kShortestStep = 1e-8;
// ... or after kPatience iterations that did not bring the largest measure below kHalving of the
// best met (a stall: hinf1 in double from its 25th iteration on).
constexpr int kPatience = 10;
constexpr double kHalving = 0.5;
// Eigenvalues of a block of Z below this fraction of its largest are rounding, not rank.
constexpr double kRankCut = 1e-13;

// What one run (in one precision) ends with, in double and the original scale.
struct Outcome {
  Matrix X;                   // Z = X X^T
  Vector mu;                  // the SDP's multipliers: S = A - sum mu_i Q_i
  double lambda_min = 0.0;    // of S, from the blocks' dense eigenvalues
  int iterations = 0;
  std::vector<TraceRow> trace;
  double init_time = 0.0, solve_time = 0.0;
  bool interrupted = false, over_time = false, failed = false, reached = false;
  std::string failure;        // why it stopped short of kTolerance, if it did
};

Index find(std::vector<Index>& parent, Index i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// The method in the precision Real: double first, long double (64-bit mantissa) for a second try
// on problems small enough (solve_interior_point()).
template <class Real>
struct Ipm {
  using Mat = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;
  using Vec = Eigen::Matrix<Real, Eigen::Dynamic, 1>;

// One entry of a constraint (or of A) inside a block, in the block's own row numbers; both halves
// of an off-diagonal entry are listed, so that <Q, W> = sum v W(p, q) for any W.
struct Entry {
  Index p = 0, q = 0;
  Real v = 0.0;
};

struct Block {
  std::vector<Index> rows;               // the global row of each of the block's rows
  std::vector<Index> constraints;        // those with an entry here, ascending
  std::vector<std::vector<Entry>> parts;  // their entries here, parallel to `constraints`
  std::vector<std::vector<Index>> columns;  // the distinct columns of each part
  std::vector<char> dense;  // the Schur column of that constraint by G = X Q_j S^-1 (else entrywise)
  Mat C;                 // A's block
  Mat X, S, Sinv, Rd, dX, dS, XRdSinv, Rc;
  Index size() const { return static_cast<Index>(rows.size()); }
};

struct Structure {
  std::vector<Block> blocks;
  Vec scale;  // ||Q_i||_F
  Real flops = 0.0;  // the Schur complement's, per iteration
  Real entries = 0.0;  // sum over blocks of n_b^2
};

// The blocks: connected components of the rows coupled by any Q_i's or A's off-diagonal entries.
static Structure analyse(const SparseMatrixTerms& terms, const Eigen::SparseMatrix<double>* A) {
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
  s.scale = Vec::Ones(m);
  for (Index k = 0; k < m; ++k) {
    Real sum = 0.0;
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
    const Real nb = static_cast<Real>(b.size());
    s.entries += nb * nb;
    Real all = 0.0;  // the entries of every part
    for (const auto& part : b.parts) all += static_cast<Real>(part.size());
    b.columns.resize(b.parts.size());
    b.dense.resize(b.parts.size());
    Real sparse_before = 0.0;  // the entries of the entrywise parts i <= j
    for (std::size_t j = 0; j < b.parts.size(); ++j) {
      auto& c = b.columns[j];
      for (const Entry& e : b.parts[j]) c.push_back(e.q);
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      // G_j pays where it is cheaper than pairing Q_j's entries with every other part's.
      const Real f = static_cast<Real>(b.parts[j].size());
      const Real dense = nb * f + nb * nb * static_cast<Real>(c.size());
      b.dense[j] = dense < f * all;
      if (b.dense[j]) {
        s.flops += dense + all;
      } else {
        sparse_before += f;
        s.flops += f * sparse_before;
      }
    }
  }
  return s;
}

// The analysis (made once, in double) in this precision, its blocks' matrices empty.
// (Layout is Ipm<double>::Structure, named as a parameter: Ipm<double> is incomplete in here.)
template <class Layout>
static Structure convert(const Layout& from) {
  Structure s;
  s.scale = from.scale.template cast<Real>();
  s.flops = static_cast<Real>(from.flops);
  s.entries = static_cast<Real>(from.entries);
  s.blocks.resize(from.blocks.size());
  for (std::size_t k = 0; k < from.blocks.size(); ++k) {
    const auto& f = from.blocks[k];
    Block& b = s.blocks[k];
    b.rows = f.rows;
    b.constraints = f.constraints;
    b.columns = f.columns;
    b.dense = f.dense;
    b.parts.resize(f.parts.size());
    for (std::size_t j = 0; j < f.parts.size(); ++j)
      for (const auto& e : f.parts[j]) b.parts[j].push_back({e.p, e.q, static_cast<Real>(e.v)});
  }
  return s;
}

// <Q_i, W> for every constraint, W given per block (any square matrices: both halves are read).
template <class Get>
static void apply_constraints(const Structure& s, Index m, Get get, Vec& out) {
  out.setZero(m);
  for (const Block& b : s.blocks) {
    const Mat& W = get(b);
    for (std::size_t k = 0; k < b.constraints.size(); ++k) {
      Real sum = 0.0;
      for (const Entry& e : b.parts[k]) sum += e.v * W(e.p, e.q);
      out[b.constraints[k]] += sum;
    }
  }
}

// sum_i y_i Q_i restricted to block b, scaled: Q_i / scale_i.
static void adjoint(const Block& b, const Vec& y, const Vec& scale, Mat& out) {
  out.setZero(b.size(), b.size());
  for (std::size_t k = 0; k < b.constraints.size(); ++k) {
    const Index i = b.constraints[k];
    const Real w = y[i] / scale[i];
    for (const Entry& e : b.parts[k]) out(e.p, e.q) += w * e.v;
  }
}

// The HKM Schur complement M_ij = <Q_i, X Q_j S^-1> over the blocks (its upper triangle; M is
// symmetric). For a dense part j, G_j = (X Q_j)[:, c] S^-1[c, :] over Q_j's columns c, read at
// every part i <= j and at every entrywise part i > j (M_ji = <Q_i, G_j>); for two entrywise parts,
// the sum over both matrices' entries of a_pq b_st X_ps S^-1_tq (as SDPA's F1-F3 formulas choose).
// gpp124-1: its all-ones constraint's G serves the 124 diagonal ones, which paired entrywise with
// it took 45% of the run.
static void schur_complement(const Structure& s, Mat& M) {
  M.setZero();
  for (const Block& blk : s.blocks) {
    const Index nb = blk.size();
    const Mat& R = blk.Sinv;
    const auto count = static_cast<long>(blk.constraints.size());
    // Dense parts: each writes its own column, and row j of the entrywise columns after it.
#pragma omp parallel for schedule(dynamic) if (count > 8)
    for (long j = 0; j < count; ++j) {
      if (!blk.dense[j]) continue;
      const auto& c = blk.columns[j];
      Mat T = Mat::Zero(nb, static_cast<Index>(c.size())), Rc(static_cast<Index>(c.size()), nb);
      for (const Entry& e : blk.parts[j]) {
        const Index at = std::lower_bound(c.begin(), c.end(), e.q) - c.begin();
        T.col(at) += e.v * blk.X.col(e.p);
      }
      for (std::size_t k = 0; k < c.size(); ++k) Rc.row(static_cast<Index>(k)) = R.row(c[k]);
      const Mat G = T * Rc;
      for (long i = 0; i < count; ++i) {
        if (i > j && blk.dense[i]) continue;
        Real sum = 0.0;
        for (const Entry& e : blk.parts[i]) sum += e.v * G(e.p, e.q);
        M(blk.constraints[std::min(i, j)], blk.constraints[std::max(i, j)]) += sum;
      }
    }
    // Entrywise pairs.
#pragma omp parallel for schedule(dynamic) if (count > 8)
    for (long j = 0; j < count; ++j) {
      if (blk.dense[j]) continue;
      const auto& part = blk.parts[j];
      const Index col = blk.constraints[j];
      for (long i = 0; i <= j; ++i) {
        if (blk.dense[i]) continue;
        Real sum = 0.0;
        for (const Entry& a : blk.parts[i])
          for (const Entry& e : part) sum += a.v * e.v * blk.X(a.p, e.p) * R(e.q, a.q);
        M(blk.constraints[i], col) += sum;
      }
    }
  }
}

// The largest alpha with M + alpha D PSD (infinity when D is PSD), M positive definite; 0 when M is
// not (numerically).
static Real step_to_boundary(const Mat& M, const Mat& D) {
  if (M.rows() == 1) return D(0, 0) < 0.0 ? -M(0, 0) / D(0, 0) : std::numeric_limits<Real>::infinity();
  Eigen::LLT<Mat> llt(M);
  if (llt.info() != Eigen::Success) return 0.0;
  Mat W = llt.matrixL().solve(D);
  W = llt.matrixL().solve(W.transpose().eval());
  W = 0.5 * (W + W.transpose()).eval();
  const Real lowest = Eigen::SelfAdjointEigenSolver<Mat>(W, Eigen::EigenvaluesOnly).eigenvalues()[0];
  return lowest < 0.0 ? -1.0 / lowest : std::numeric_limits<Real>::infinity();
}

static Real inner(const Mat& a, const Mat& b) { return a.cwiseProduct(b).sum(); }

// X with Z = X X^T block by block (each block's eigenvalues above kRankCut of its largest kept).
static void factor(const Structure& s, Index n, Matrix& X) {
  std::vector<Eigen::SelfAdjointEigenSolver<Mat>> eig(s.blocks.size());
  Index rank = 1;
  std::vector<Index> kept(s.blocks.size());
  for (std::size_t k = 0; k < s.blocks.size(); ++k) {
    eig[k].compute(s.blocks[k].X);
    const Vec& l = eig[k].eigenvalues();
    const Real cut = kRankCut * std::max(l.maxCoeff(), Real(0));
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
      const Real root = std::sqrt(eig[k].eigenvalues()[col]);
      for (Index r = 0; r < nb; ++r) X(b.rows[r], j) = static_cast<double>(root * eig[k].eigenvectors()(r, col));
    }
  }
}

// Solves from the start; t0 is the solve's start (time_limit counts from it). `first`: the
// table's header is printed (a second try continues the same table).
template <class Layout>
static Outcome run(const Model& model, const Layout& layout, const SolverOptions& options,
                   const IterationCallback& callback, Clock::time_point t0, bool first, double step_growth) {
  Outcome out;
  const auto& terms = dynamic_cast<const SparseMatrixTerms&>(*model.terms);
  const auto* quadratic = dynamic_cast<const SymmetricSparseRegularizer*>(model.quadratic.get());
  const Index n = terms.dimension(), m = terms.size();
  Structure s = convert(layout);
  const Vec& scale = s.scale;
  const Vec b = terms.targets().cast<Real>().cwiseQuotient(scale);

  // A / ||A||_F per block (its entries between blocks are none: the blocks are A's components too).
  Real objective_scale = 1.0;
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
    const Real root = std::sqrt(static_cast<Real>(nb));
    Real x_size = 1.0, s_size = blk.C.norm();
    for (std::size_t k = 0; k < blk.constraints.size(); ++k) {
      const Index i = blk.constraints[k];
      Real norm = 0.0;
      for (const Entry& e : blk.parts[k]) norm += e.v * e.v;
      norm = std::sqrt(norm) / scale[i];
      x_size = std::max(x_size, (1.0 + std::abs(b[i])) / (1.0 + norm));
      s_size = std::max(s_size, norm);
    }
    blk.X = std::max(Real(10), root * x_size) * Mat::Identity(nb, nb);
    blk.S = std::max({Real(10), root, s_size}) * Mat::Identity(nb, nb);
  }
  // Each part's values scaled (Q_i / ||Q_i||_F) once.
  for (Block& blk : s.blocks)
    for (std::size_t k = 0; k < blk.constraints.size(); ++k)
      for (Entry& e : blk.parts[k]) e.v /= scale[blk.constraints[k]];
  const Vec unit = Vec::Ones(m);  // (the parts are scaled now)
  out.init_time = seconds_since(t0);

  const auto t1 = Clock::now();
  if (options.verbose && first)
    std::fprintf(stderr,
                 "-------------------------------------------------------------------------------\n"
                 "  sdprl: an SDP given by constraints, by a primal-dual interior-point method\n"
                 "  (HKM direction, Mehrotra predictor-corrector; docs/method.md section 9.3)\n"
                 "  n = %ld in %ld blocks, constraints = %ld\n"
                 "-------------------------------------------------------------------------------\n"
                 "iter      <A, Z>        t^T y      gap     primal      dual    step p/d      time\n",
                 static_cast<long>(n), static_cast<long>(s.blocks.size()), static_cast<long>(m));
  Vec y = Vec::Zero(m), rp(m), Ax(m), h(m), dy(m), hRd(m), Arc(m);
  Mat M(m, m), work;
  const Real b_norm = b.norm();
  Real c_norm = 0.0;
  for (const Block& blk : s.blocks) c_norm += blk.C.squaredNorm();
  c_norm = std::sqrt(c_norm);
  struct Best {
    std::vector<Mat> X, S;
    Vec y;
    Real measure = std::numeric_limits<Real>::infinity();
  } best;
  Real tau = 0.9, step_p = 0.0, step_d = 0.0;
  int& iteration = out.iterations;
  int since_halved = 0;
  bool &interrupted = out.interrupted, &over_time = out.over_time, &failed = out.failed, &reached = out.reached;
  std::string& failure = out.failure;

  // The HKM direction for the right-hand side whose centring part is Rc (per block, in blk.Rc):
  // M dy = rp - A(Rc) + A(X Rd S^-1), dS = Rd - A^T dy, dX = sym(Rc - X dS S^-1).
  Eigen::LLT<Mat, Eigen::Upper> schur;
  const auto direction = [&]() {
    apply_constraints(s, m, [](const Block& blk) -> const Mat& { return blk.Rc; }, Arc);
    h = rp - Arc + hRd;
    dy = schur.solve(h);
    for (Block& blk : s.blocks) {
      adjoint(blk, dy, unit, work);
      blk.dS = blk.Rd - work;
      work = blk.Rc - blk.X * blk.dS * blk.Sinv;
      blk.dX = 0.5 * (work + work.transpose());
    }
  };
  const auto steps = [&](Real fraction, Real& ap, Real& ad) {
    ap = ad = std::numeric_limits<Real>::infinity();
    for (const Block& blk : s.blocks) {
      ap = std::min(ap, step_to_boundary(blk.X, blk.dX));
      ad = std::min(ad, step_to_boundary(blk.S, blk.dS));
    }
    ap = std::min(Real(1), fraction * ap);
    ad = std::min(Real(1), fraction * ad);
  };

  for (;;) {
    // Residuals and measures at the current point.
    apply_constraints(s, m, [](const Block& blk) -> const Mat& { return blk.X; }, Ax);
    rp = b - Ax;
    Real primal = 0.0, rd_norm = 0.0, complementarity = 0.0;
    for (Block& blk : s.blocks) {
      adjoint(blk, y, unit, work);
      blk.Rd = blk.C - blk.S - work;
      rd_norm += blk.Rd.squaredNorm();
      primal += inner(blk.C, blk.X);
      complementarity += inner(blk.X, blk.S);
    }
    const Real dual = b.dot(y);
    const Real mu = complementarity / static_cast<Real>(total);
    const Real p_inf = rp.norm() / (1.0 + b_norm), d_inf = std::sqrt(rd_norm) / (1.0 + c_norm);
    const Real gap = std::abs(primal - dual) / (1.0 + std::abs(primal) + std::abs(dual));
    const Real measure = std::max({p_inf, d_inf, gap});
    if (measure < kHalving * best.measure) since_halved = 0;
    else ++since_halved;
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
                   static_cast<double>(primal * objective_scale), static_cast<double>(dual * objective_scale),
                   static_cast<double>(gap), static_cast<double>(p_inf), static_cast<double>(d_inf),
                   static_cast<double>(step_p), static_cast<double>(step_d), static_cast<double>(time));
    TraceRow row;
    row.mm_iteration = iteration;
    row.objective = primal * objective_scale;
    row.relative_change = measure;
    row.time = time;
    out.trace.push_back(row);
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
    if (iteration > 0 && std::max(step_p, step_d) < kShortestStep) {
      failure = "a step shorter than " + fmt("%.0e", kShortestStep);
      break;
    }
    if (since_halved >= kPatience) {
      failure = std::to_string(kPatience) + " iterations without halving the largest relative measure";
      break;
    }
    ++iteration;

    // S^-1, X Rd S^-1 and the Schur complement M_ij = <Q_i, X Q_j S^-1> (symmetric, positive definite).
    bool positive = true;
    for (Block& blk : s.blocks) {
      Eigen::LLT<Mat> llt(blk.S);
      if (llt.info() != Eigen::Success) {
        positive = false;
        break;
      }
      blk.Sinv = llt.solve(Mat::Identity(blk.size(), blk.size()));
      blk.XRdSinv = blk.X * blk.Rd * blk.Sinv;
    }
    if (!positive) {
      failure = "S lost its definiteness";
      break;
    }
    apply_constraints(s, m, [](const Block& blk) -> const Mat& { return blk.XRdSinv; }, hRd);
    schur_complement(s, M);
    schur.compute(M);
    if (schur.info() != Eigen::Success) {
      const Real shift = 1e-12 * M.diagonal().cwiseAbs().maxCoeff();
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
    Real ap = 0.0, ad = 0.0;
    steps(1.0, ap, ad);
    Real affine = 0.0;
    for (const Block& blk : s.blocks) affine += inner(blk.X + ap * blk.dX, blk.S + ad * blk.dS);
    affine /= static_cast<Real>(total);
    const Real exponent = std::max(Real(1), 3 * std::min(ap, ad) * std::min(ap, ad));
    const Real sigma = std::min(Real(1), std::pow(std::max(affine, Real(0)) / mu, exponent));
    for (Block& blk : s.blocks) blk.Rc = sigma * mu * blk.Sinv - blk.X - blk.dX * blk.dS * blk.Sinv;
    direction();
    steps(tau, step_p, step_d);
    for (Block& blk : s.blocks) {
      blk.X += step_p * blk.dX;
      blk.S += step_d * blk.dS;
    }
    y += step_d * dy;
    tau = 0.9 + step_growth * std::min(step_p, step_d);
  }

  // The best point met, in the original scale: Z = X, y_i = ||A|| y'_i / ||Q_i||.
  for (std::size_t k = 0; k < s.blocks.size(); ++k) {
    s.blocks[k].X = best.X[k];
    s.blocks[k].S = best.S[k];
  }
  factor(s, n, out.X);
  out.mu = (objective_scale * best.y.cwiseQuotient(scale)).template cast<double>();
  // lambda_min(S), S = A - sum mu_i Q_i = ||A|| (C - sum y'_i Q'_i), block by block.
  Real lambda_min = std::numeric_limits<Real>::infinity();
  for (const Block& blk : s.blocks) {
    adjoint(blk, best.y, unit, work);
    work = objective_scale * (blk.C - work);
    lambda_min = std::min(lambda_min, blk.size() == 1 ? work(0, 0)
                                                      : Eigen::SelfAdjointEigenSolver<Mat>(work, Eigen::EigenvaluesOnly)
                                                            .eigenvalues()[0]);
  }
  out.lambda_min = static_cast<double>(lambda_min);
  out.solve_time = seconds_since(t1);
  return out;
}
};

// interior_point_problem(), leaving the analysis in `layout` when the method applies.
std::string problem_of(const Model& model, const Loss& loss, const SolverOptions& options,
                       const RegularizationWeights& weights, Ipm<double>::Structure& layout) {
  if (std::string p = augmented_lagrangian_problem(model, loss, options, weights); !p.empty()) return p;
  const auto* terms = dynamic_cast<const SparseMatrixTerms*>(model.terms.get());
  if (!terms) return "the model's terms are not sparse matrices (sdprl/terms/sparse_matrix_terms.h)";
  const auto* a = dynamic_cast<const SymmetricSparseRegularizer*>(model.quadratic.get());
  if (model.quadratic && !a) return "the model's objective is not a sparse matrix";
  if (terms->size() > kMaxConstraints)
    return std::to_string(terms->size()) + " constraints (an m x m Schur complement, m <= " +
           std::to_string(kMaxConstraints) + ")";
  layout = Ipm<double>::analyse(*terms, a ? &a->matrix() : nullptr);
  if (layout.entries > kMaxBlockEntries)
    return "its blocks hold " + fmt("%.3g", layout.entries) + " entries densely (at most " +
           fmt("%.3g", kMaxBlockEntries) + ")";
  if (layout.flops > kMaxSchurFlops)
    return "its Schur complement takes " + fmt("%.3g", layout.flops) + " flops per iteration (at most " +
           fmt("%.3g", kMaxSchurFlops) + ")";
  return "";
}

}  // namespace

std::string interior_point_problem(const Model& model, const Loss& loss, const SolverOptions& options,
                                   const RegularizationWeights& weights) {
  Ipm<double>::Structure layout;
  return problem_of(model, loss, options, weights, layout);
}

Summary solve_interior_point(const Model& model, const Loss& loss, RegularizationWeights& weights,
                             const SolverOptions& options, Matrix& X, const IterationCallback& callback) {
  const auto t0 = Clock::now();
  Ipm<double>::Structure layout;
  if (const std::string problem = problem_of(model, loss, options, weights, layout); !problem.empty())
    throw Error("solver.type", "\"interior-point\" does not apply to this model: " + problem);
  Summary summary = begin_solve(model, options, SolverType::kInteriorPoint);
  const double gamma_from = weights.gamma > 0.0 ? weights.gamma : 2.0;
  const auto judge = [&](const Outcome& o) {
    return judge_multipliers(model, loss, weights, gamma_from, options.feasibility_tolerance, o.X,
                             model.infeasibility(o.X), o.mu, o.lambda_min);
  };
  Outcome out = Ipm<double>::run(model, layout, options, callback, t0, true, kStepGrowth);
  Judgement judged = judge(out);
  int iterations = out.iterations;
  double solve_time = out.solve_time;
  std::vector<TraceRow> trace = out.trace;
  // Where double's rounding is what stops it (hinf1: its primal infeasibility stalls near 1e-8,
  // worth 1e-5 of the objective at multipliers of 2.7e4), the same method in long double's 64-bit
  // mantissa, on problems small enough that its unvectorised arithmetic costs little (hinf1: gap
  // 6.6e-9 and a violation of 1e-9 in 0.03 s); the closer to a certificate stands.
  double cubes = layout.flops;
  for (const auto& blk : layout.blocks) cubes += 20.0 * std::pow(static_cast<double>(blk.size()), 3.0);
  // Then, still uncertified, at the fixed step fraction 0.9: iterates kept further from the cone's
  // boundary keep the Schur complement better conditioned at the end, at a few more iterations.
  for (const double growth : {kStepGrowth, 0.0}) {
    if (judged.answer.optimal || out.interrupted || out.over_time || cubes > kExtendedWork) break;
    if (options.verbose)
      std::fprintf(stderr, "sdprl: not certified (%s); again in long double, step fraction 0.9%s\n",
                   judged.answer.relative_gap == judged.answer.relative_gap
                       ? ("relative gap " + fmt("%.1e", judged.answer.relative_gap)).c_str()
                       : "no dual bound",
                   growth > 0.0 ? " + 0.09 min(steps)" : "");
    Outcome again = Ipm<long double>::run(model, layout, options, callback, t0, false, growth);
    Judgement next = judge(again);
    for (TraceRow row : again.trace) {
      row.mm_iteration += iterations + 1;
      trace.push_back(row);
    }
    iterations += again.iterations;
    solve_time += again.solve_time;
    if (next.distance < judged.distance) {
      out = std::move(again);
      judged = std::move(next);
    }
  }
  X = out.X;
  weights.gamma = judged.weights.gamma;
  summary.trace = std::move(trace);
  summary.init_time = out.init_time;
  summary.solve_time = solve_time;
  summary.rank = X.cols();
  summary.weights = weights;
  summary.mm_iterations = iterations;
  summary.admm_iterations = 0;
  summary.initial_objective = summary.trace.front().objective;
  summary.final_objective = objective(model, loss, weights, X);
  summary.certificate = judged.certificate.computed ? judged.certificate
                                                    : mm::certify(model, loss, weights, X, judged.multipliers);
  Certificate& certificate = summary.certificate;
  certificate.optimal = certificate.computed && certificate.relative_gap <= options.stationarity_tolerance;
  const bool certified = judged.answer.optimal;
  summary.status = out.interrupted                  ? SolverStatus::kInterrupted
                   : out.failed                     ? SolverStatus::kNumericalError
                   : certified || out.reached       ? SolverStatus::kConverged
                   : out.over_time                  ? SolverStatus::kTimeLimit
                   : out.iterations >= kMaxIterations ? SolverStatus::kIterationLimit
                                                    : SolverStatus::kConverged;
  if (!out.failure.empty()) summary.message = out.failure + " (the best point met is the result)";
  if (model.evaluator) summary.metrics = model.evaluator->evaluate(X);
  return summary;
}

}  // namespace sdprl::sdp
