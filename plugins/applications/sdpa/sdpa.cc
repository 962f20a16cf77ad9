// Any SDP in SDPA sparse format (.dat-s, sdprl/io/sdpa.h) as a robust low-rank model.
//
// SDPA's dual form  max tr(F_0 Y)  s.t.  tr(F_i Y) = c_i (i = 1..m),  Y PSD  becomes, with
// Y = Z = X X^T, the paper's eq. (1):
//     min_X  sum_i phi(|<X, F_i X> - c_i|) + (gamma/2) <X, A X> + (lambda/2) ||X||_F^2,  A = -F_0,
// i.e. sparse matrix terms Q_i = F_i, t_i = c_i (sdprl/terms/sparse_matrix_terms.h) and the
// objective as the A-term (sdprl/regularizers/symmetric_sparse_regularizer.h).
//  * gamma = 2 by default, so that (gamma/2) <X, A X> = -tr(F_0 Z) exactly. Unless the model file
//    sets gamma, `sdprl run` treats it as a penalty to lower (tenfold, up to four times) while the
//    result is unbounded or violates a constraint by more than solver.feasibility_tolerance
//    relative to max(1, |c_i|) (Model::infeasibility), and runs the automatic Xt-step.
//  * lambda = 0 by default: the model is then SDPA's problem with its constraints moved into the
//    loss, nothing added. With the l1 loss this is an exact penalty: the minimum equals the SDP's
//    optimum when its constraint multipliers (SDPA's x) all satisfy |x_i| <= 2 / gamma, so a
//    smaller gamma (e.g. 0.2) enforces the constraints harder. A robust loss (leaky-MCP, ...)
//    instead lets a few inconsistent constraints go, which is the point of SDP-RL.
//  * rank: the smallest r with r (r + 1) / 2 >= m (capped at n): the SDP then has an optimal Z of
//    rank <= r (Barvinok-Pataki), so the factored problem loses nothing.
//  * The Xt-step defaults to "auto" for this model: the row-split one can stop short of the
//    optimum once the l1 fit makes residuals exactly zero, and here that is a wrong answer, not a
//    slightly worse fit (tests/sdpa_global_test.cc measures both Xt-steps against SDPA).
//
// Blocks: any number of SDP blocks and diagonal (LP) blocks, stacked into one X with one row per
// SDP row and one per LP variable, in the file's block order, all with the same r columns. Block
// b's Y_b is the diagonal block Z_bb = X_b X_b^T of Z = X X^T (X_b: block b's rows), and an LP
// variable y_j is the diagonal entry Z_jj = ||x_j||^2 >= 0. Entries of Z between different blocks
// appear in no term and not in A (every F_i is block-diagonal), so they are free. This is SDPA's
// problem exactly: every principal submatrix of a PSD Z is PSD, so Z's blocks are feasible for
// SDPA; conversely any block-diagonal Y is a PSD Z with the same objective and constraints. Each
// block's rank is at most r, and Barvinok-Pataki bounds the sum of r_b (r_b + 1) / 2 over the
// blocks of some optimal Y by m, so the r below loses nothing for any block either. The MM step
// keeps a block-separated X separated (each F_i maps block b's rows to block b's rows).
//
// [model] keys:
//   file = FILE    the .dat-s file (required; .gz/.bz2 read directly), relative to the model file
// Metrics: sdp_objective = tr(F_0 Z) (SDPA's dual objective at Z), max_violation =
// max_i |tr(F_i Z) - c_i|, violation_l1 = sum_i |tr(F_i Z) - c_i|.
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sdprl/error.h"
#include "sdprl/io/sdpa.h"
#include "sdprl/plugin.h"
#include "sdprl/regularizers/symmetric_sparse_regularizer.h"
#include "sdprl/terms/sparse_matrix_terms.h"

namespace sdprl::sdpa {

// What `sdprl plugins` says of this application.
constexpr char kDescription[] =
    "any SDP in SDPA sparse format (.dat-s): SDP and LP (diagonal) blocks";

namespace {

class SdpaEvaluator final : public Evaluator {
 public:
  SdpaEvaluator(std::shared_ptr<const ConstraintSet> terms, std::shared_ptr<const Regularizer> minus_f0)
      : terms_(std::move(terms)), minus_f0_(std::move(minus_f0)) {}
  std::vector<Metric> evaluate(const Matrix& X) const override {
    Vector v;
    terms_->evaluate(X, v);
    const Vector viol = (v - terms_->targets()).cwiseAbs();
    double objective = 0.0;
    if (minus_f0_) {
      Matrix AX;
      minus_f0_->apply(X, AX);
      objective = -AX.cwiseProduct(X).sum();  // tr(F_0 X X^T) = -<X, A X>
    }
    return {{"sdp_objective", objective}, {"max_violation", viol.maxCoeff()}, {"violation_l1", viol.sum()}};
  }

 private:
  std::shared_ptr<const ConstraintSet> terms_;
  std::shared_ptr<const Regularizer> minus_f0_;
};

class Sdpa final : public Application {
 public:
  std::string name() const override { return "sdpa"; }

  Model build(const ConfigTable& table, const BuildContext&) const override {
    const auto file = table.file("file");
    if (!file) table.fail("file", "missing required key 'file' (an SDPA sparse file, .dat-s)");
    const io::SdpaProblem p = io::read_sdpa(*file);

    // Row offset of each block in X.
    std::vector<Index> offset(p.blocks.size());
    Index n = 0, sdp_rows = 0, lp_rows = 0, sdp_blocks = 0;
    for (std::size_t b = 0; b < p.blocks.size(); ++b) {
      offset[b] = n;
      n += std::abs(p.blocks[b]);
      if (p.blocks[b] > 0) {
        ++sdp_blocks;
        sdp_rows += p.blocks[b];
      } else {
        lp_rows -= p.blocks[b];
      }
    }
    std::vector<std::vector<SparseMatrixTerms::Entry>> F(static_cast<std::size_t>(p.m));
    std::vector<Eigen::Triplet<double>> minus_f0;
    for (const io::SdpaEntry& e : p.entries) {
      const auto i = static_cast<std::int32_t>(offset[e.block] + e.row);
      const auto j = static_cast<std::int32_t>(offset[e.block] + e.col);
      if (e.matrix == 0) {
        minus_f0.emplace_back(i, j, -e.value);
        if (i != j) minus_f0.emplace_back(j, i, -e.value);
      } else {
        // F_i is symmetric and the file lists its upper triangle: Q = F needs both halves.
        F[e.matrix - 1].push_back({i, j, e.value});
        if (i != j) F[e.matrix - 1].push_back({j, i, e.value});
      }
    }
    for (std::size_t k = 0; k < F.size(); ++k)
      if (F[k].empty())
        throw Error(file->string(), "constraint matrix F_" + std::to_string(k + 1) +
                                        " has no nonzero entry, so tr(F Y) = c_" + std::to_string(k + 1) +
                                        " is either always or never satisfied");

    Model model;
    model.application = name();
    Index nonzeros = 0;
    for (const auto& f : F) nonzeros += static_cast<Index>(f.size());
    model.terms = std::make_shared<SparseMatrixTerms>(n, F, p.c);
    if (!minus_f0.empty()) {
      Eigen::SparseMatrix<double> A(n, n);
      A.setFromTriplets(minus_f0.begin(), minus_f0.end());
      model.quadratic = std::make_shared<SymmetricSparseRegularizer>(std::move(A), "minus-F0");
    }
    model.default_gamma = 2.0;
    model.default_lambda = 0.0;
    Index r = 1;
    while (r * (r + 1) / 2 < p.m && r < n) ++r;
    model.default_rank = r;
    model.evaluator = std::make_shared<SdpaEvaluator>(model.terms, model.quadratic);
    // The constraints tr(F_i Z) = c_i are the problem's, not a fit: gamma becomes a penalty that
    // `sdprl run` lowers until the result meets them (docs/method.md section 9).
    model.infeasibility = [terms = model.terms](const Matrix& X) {
      Vector v;
      terms->evaluate(X, v);
      const Vector& c = terms->targets();
      return ((v - c).array().abs() / c.array().abs().max(1.0)).maxCoeff();
    };
    model.facts = {{"n", static_cast<double>(n)},
                   {"m", static_cast<double>(p.m)},
                   {"sdp_blocks", static_cast<double>(sdp_blocks)},
                   {"sdp_rows", static_cast<double>(sdp_rows)},
                   {"lp_rows", static_cast<double>(lp_rows)},
                   {"constraint_nonzeros", static_cast<double>(nonzeros)},
                   {"objective_nonzeros", static_cast<double>(minus_f0.size())}};
    return model;
  }
};

}  // namespace
}  // namespace sdprl::sdpa

SDPRL_APPLICATION_PLUGIN("sdpa", "1.0", sdprl::sdpa::kDescription, sdprl::sdpa::Sdpa)
