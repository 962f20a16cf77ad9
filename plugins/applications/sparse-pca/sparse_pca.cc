// Sparse PCA (paper Section "Sparse PCA", eq. (spca:trans); experiment on colon cancer;
// docs/method.md sections 1 and 5):
//
//     min_X  sum_{i,j} phi(|Z_ij|) - (gamma/2) tr(X^T Sigma X) + (lambda/2) ||X||_F^2,
//            Z = X X^T,   subject to  ||X||_F^2 = tr(Z) <= trace_bound
//
// i.e. all n^2 entry terms with target 0 (sdprl::AllEntriesTerms, implicit), A = -Sigma applied
// through the data (Sigma X = S^T (S X) / N with the N x n normalised samples S; Sigma itself,
// n x n, is never formed), lambda = 0 and gamma = 10 (paper).
//
// The trace constraint. d'Aspremont et al.'s relaxation, which the paper starts from, keeps
// tr(Z) = 1; eq. (spca:trans) moves it into the objective as (lambda/2) tr(Z) and sets lambda = 0.
// That problem has no nontrivial minimiser for ANY lambda: along a ray Z -> c Z the objective
// sum phi(c |Z_ij|) + c (lambda/2 tr Z - gamma/2 tr(Z Sigma)) is concave in c (phi concave) and 0
// at c = 0, so it is either >= 0 (minimised by Z = 0) or unbounded below; with the l1 loss it is
// exactly linear in c. The paper's numbers therefore depend on when its runs stopped. sdprl keeps
// the constraint, as the convex set tr(Z) = ||X||_F^2 <= trace_bound (sdprl::FrobeniusBall: the
// solver keeps every iterate in it); the minimiser lies on its boundary whenever any Z does better
// than 0. This is d'Aspremont's max tr(Sigma Z) - rho ||Z||_1 s.t. tr Z = 1 with rho = 2 / gamma
// for the l1 loss. trace_bound = 0 drops the constraint (the paper's literal problem; expect a
// diverging run or X -> 0).
//
// Normalisation. With rho = 0.2 the trade-off is only meaningful when the variances are O(1):
// "standardize" (default) scales every feature to unit variance, so Sigma is the correlation
// matrix; "center" keeps the raw covariance (the colon-cancer values in the LIBSVM copy are
// already scaled to about [-1, 1]).
//
// Metrics: explained_variance = tr(X^T Sigma X) = tr(Z Sigma); trace_z = tr(Z); sparsity = the
// fraction of the n^2 entries of Z with |Z_ij| <= zero_tolerance * max_ij |Z_ij| (computed in row
// blocks, never storing Z); facts: pca_variance = the top eigenvalue of Sigma (the explained
// variance of plain PCA under tr Z = 1) and total_variance = tr(Sigma).
//
// [model] keys:
//   data = FILE          dense labelled text "label v1 ... vd" (.gz/.bz2 read directly); default
//                        "data/colon-cancer.dense.txt.gz" next to the model file; labels unused
//   normalize = "standardize" | "center"   (default "standardize")
//   trace_bound = X      tr(Z) <= X (default 1; 0: no constraint, the paper's literal form)
//   zero_tolerance = X   sparsity threshold relative to max |Z_ij| (default 1e-3)
//   features = INT       use only the first K features (0: all; default 0), for quick runs
//   rank = INT           default rank of the factor (50)
//   pca_power = P        weights of the PCA start's columns, l_j^P (default 0.5)
// Starting points: solver.init = "model" is PCA, X = V_r diag(l_r^P) scaled to ||X||_F^2 =
// trace_bound (the top-r eigenpairs (V_r, l_r) of Sigma; directions beyond rank(Sigma) <= N - 1
// stay 0, and the loss and A-term keep a zero column at 0); "gaussian" is the random start
// (projected onto the ball by the solver). X = 0 is stationary, as for every model.
// The start does not change the number of MM iterations at a given ADMM tolerance schedule
// (measured, l1, 1000 genes, rank 50, c0 fixed at 20 / 200: PCA with P = 0 83 / 120, P = 0.5
// 83 / 119, random 84 / 118); see docs/paper-results.md, sparse PCA.
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "sdprl/constraint.h"
#include "sdprl/error.h"
#include "sdprl/io/libsvm.h"
#include "sdprl/plugin.h"
#include "sdprl/regularizers/low_rank_regularizer.h"
#include "sdprl/terms/all_entries_terms.h"

namespace sdprl::sparse_pca {

// What `sdprl plugins` says of this application.
constexpr char kDescription[] =
    "sparse PCA (all n^2 entry terms |Z_ij| implicit, A = -Sigma through the data, tr Z <= 1)";

namespace {

constexpr double kPaperGamma = 10.0, kPaperLambda = 0.0;
constexpr std::int64_t kDefaultRank = 50;

class SparsePcaEvaluator final : public Evaluator {
 public:
  SparsePcaEvaluator(std::shared_ptr<const LowRankRegularizer> minus_sigma, double zero_tolerance)
      : minus_sigma_(std::move(minus_sigma)), zero_tolerance_(zero_tolerance) {}
  std::vector<Metric> evaluate(const Matrix& X) const override {
    Matrix AX;
    minus_sigma_->apply(X, AX);
    const double variance = -X.cwiseProduct(AX).sum();  // tr(X^T Sigma X)
    // max |Z_ij| = max_i Z_ii for a PSD Z.
    const double zmax = X.rowwise().squaredNorm().maxCoeff();
    const double threshold = zero_tolerance_ * zmax;
    const Index n = X.rows(), block = 256;
    double zeros = 0.0;
    Eigen::MatrixXd Zb;
    for (Index i0 = 0; i0 < n; i0 += block) {
      const Index rows = std::min(block, n - i0);
      Zb.noalias() = X.middleRows(i0, rows) * X.transpose();
      zeros += static_cast<double>((Zb.array().abs() <= threshold).count());
    }
    return {{"explained_variance", variance},
            {"trace_z", X.squaredNorm()},
            {"sparsity", zeros / (static_cast<double>(n) * static_cast<double>(n))}};
  }

 private:
  std::shared_ptr<const LowRankRegularizer> minus_sigma_;
  double zero_tolerance_;
};

class SparsePca final : public Application {
 public:
  std::string name() const override { return "sparse-pca"; }

  Model build(const ConfigTable& table, const BuildContext&) const override {
    const std::string normalize = table.string("normalize", "standardize", {"standardize", "center"});
    const double trace_bound = table.number("trace_bound", 1.0, NumberRule::non_negative());
    const double zero_tolerance = table.number("zero_tolerance", 1e-3, NumberRule::closed(0.0, 1.0));
    const std::int64_t rank = table.integer("rank", kDefaultRank, NumberRule::at_least(1));
    const std::int64_t features = table.integer("features", 0, NumberRule::non_negative());
    const double pca_power = table.number("pca_power", 0.5, NumberRule::non_negative());
    const std::filesystem::path data_file = table.file("data", "data/colon-cancer.dense.txt.gz");

    const io::LabeledData data = io::read_dense_labeled(data_file);
    const Index N = data.samples.rows();
    if (features > data.samples.cols())
      table.fail("features", "features = " + std::to_string(features) + " exceeds the " +
                                 std::to_string(data.samples.cols()) + " features of " + data_file.string());
    const Index n = features > 0 ? static_cast<Index>(features) : data.samples.cols();
    if (N < 2) throw Error(data_file.string(), "sparse PCA needs at least 2 samples, the file has " + std::to_string(N));
    if (!data.samples.allFinite()) throw Error(data_file.string(), "the samples contain NaN/Inf values");
    Eigen::MatrixXd S = data.samples.leftCols(n);
    S.rowwise() -= S.colwise().mean();
    Index constant = 0;
    if (normalize == "standardize") {
      for (Index f = 0; f < n; ++f) {
        const double sd = std::sqrt(S.col(f).squaredNorm() / static_cast<double>(N));
        if (sd > 0.0) S.col(f) /= sd;
        else ++constant;  // a constant feature has no variance to explain: it stays 0
      }
    }
    S /= std::sqrt(static_cast<double>(N));  // Sigma = S^T S (population covariance, 1/N)

    // Eigenpairs of Sigma from the thin SVD of S (N x n, N << n): Sigma = V diag(s^2) V^T.
    Eigen::BDCSVD<Eigen::MatrixXd> svd(S, Eigen::ComputeThinV);
    const Eigen::VectorXd eigenvalues = svd.singularValues().array().square();
    const Eigen::MatrixXd directions = svd.matrixV();  // n x min(N, n)
    const double total_variance = S.squaredNorm();

    // A = -Sigma = -U U^T with U = S^T (n x N): negative semidefinite, so it adds no curvature to
    // B (A_+ = 0) and is applied in O(n N r).
    auto sigma = std::make_shared<LowRankRegularizer>(S.transpose(), -1.0, "negative-covariance");
    Model model;
    model.application = name();
    model.default_gamma = kPaperGamma;
    model.default_lambda = kPaperLambda;
    model.default_rank = rank;
    model.facts = {{"n", static_cast<double>(n)},
                   {"samples", static_cast<double>(N)},
                   {"constant_features", static_cast<double>(constant)},
                   {"total_variance", total_variance},
                   {"pca_variance", eigenvalues.size() ? eigenvalues[0] : 0.0},
                   {"trace_bound", trace_bound}};
    model.terms = std::make_shared<AllEntriesTerms>(n);
    model.quadratic = sigma;
    if (trace_bound > 0.0) model.constraint = std::make_shared<FrobeniusBall>(std::sqrt(trace_bound));
    model.evaluator = std::make_shared<SparsePcaEvaluator>(sigma, zero_tolerance);
    const double start_trace = trace_bound > 0.0 ? trace_bound : 1.0;
    model.start = [directions, eigenvalues, start_trace, pca_power](Index r, Matrix& X) {
      X.setZero(directions.rows(), r);
      // Only directions with variance: the centred data have rank <= N - 1, and l_j^0 = 1 would
      // otherwise put a null direction of Sigma into the start.
      Index k = 0;
      while (k < std::min<Index>(r, eigenvalues.size()) && eigenvalues[k] > 1e-12 * eigenvalues[0]) ++k;
      for (Index j = 0; j < k; ++j) X.col(j) = std::pow(eigenvalues[j], pca_power) * directions.col(j);
      const double norm2 = X.squaredNorm();
      if (norm2 > 0.0) X *= std::sqrt(start_trace / norm2);
    };
    return model;
  }
};

}  // namespace
}  // namespace sdprl::sparse_pca

SDPRL_APPLICATION_PLUGIN("sparse-pca", "1.0", sdprl::sparse_pca::kDescription, sdprl::sparse_pca::SparsePca)
