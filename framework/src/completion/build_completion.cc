// Observations, generator hookup and metrics shared by the matrix-completion and snmf applications.
#include "sdprl/completion/build_completion.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sdprl/error.h"
#include "sdprl/io/matrix_market.h"
#include "sdprl/terms/entry_terms.h"
#include "sdprl/completion/synthetic.h"
#include "rows/row_blocks.h"

namespace sdprl::mc {
namespace {

// Eigen's stableNorm scales before it squares: errors near 1e-160 do not underflow to an RMSE of 0.
// The errors are independent, so the threads share them (up to 2 million a set: the synthetic
// generator's 1e6 validation and test samples, snmf_usps's 1.9 million); the norm, one pass in
// one order, gives the same bits for any thread count.
double rmse(const EntrySet& set, const Matrix& X) {
  if (set.rows.empty()) return std::nan("");
  const Index size = static_cast<Index>(set.rows.size());
  Vector e(size);
#pragma omp parallel for schedule(static) if (size > detail::kParallelWork)
  for (Index k = 0; k < size; ++k) {
    const std::size_t q = static_cast<std::size_t>(k);
    e[k] = X.row(set.rows[q]).dot(X.row(set.cols[q])) - set.values[q];
  }
  return e.stableNorm() / std::sqrt(static_cast<double>(size));
}

// The RMSE of a held-out set as HeldOutEvaluator takes it (none for an empty set).
HeldOutEvaluator::Rmse held_out_rmse(EntrySet set) {
  if (set.rows.empty()) return {};
  return [set = std::move(set)](const Matrix& X) { return rmse(set, X); };
}

io::CoordinateMatrix read_entries(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  if (ext != ".csv" && ext != ".txt") return io::read_matrix_market_coordinate(file);
  try {
    io::CoordinateMatrix m = io::read_csv_triplets(file, 1);
    // A CSV declares no shape: the matrix is n x n with n its largest index (one triangle of a
    // symmetric matrix, "3,1" without "1,3", was refused as 3 x 1; `n` still sets a larger size).
    m.rows = m.cols = std::max(m.rows, m.cols);
    return m;
  } catch (const Error& e) {
    // The extension chose the reader: a MatrixMarket file named .txt would fail as CSV without
    // saying why it was read as CSV at all.
    throw Error(e.where(), e.message() + " (read as CSV \"i,j,value\" because the file name ends in " + ext +
                               "; a MatrixMarket file must end in .mtx)");
  }
}

// Expands a file's entries into an EntrySet (mirroring a symmetric MatrixMarket file) and rejects
// entries outside n x n and duplicates, naming the file and line.
EntrySet to_entries(const io::CoordinateMatrix& mat, const std::filesystem::path& file, std::int64_t n,
                    bool reject_duplicates) {
  EntrySet set;
  struct Seen { std::int64_t i, j; long line; };
  std::vector<Seen> seen;
  for (const io::Triplet& t : mat.entries) {
    if (t.row >= n || t.col >= n)
      throw Error(format_location(file.string(), t.line),
                  "entry (" + std::to_string(t.row + 1) + ", " + std::to_string(t.col + 1) +
                      ") outside the " + std::to_string(n) + " x " + std::to_string(n) + " matrix");
    auto push = [&](std::int64_t i, std::int64_t j) {
      set.rows.push_back(static_cast<std::int32_t>(i));
      set.cols.push_back(static_cast<std::int32_t>(j));
      set.values.push_back(t.value);
      seen.push_back({i, j, t.line});
    };
    push(t.row, t.col);
    if (mat.symmetric && t.row != t.col) push(t.col, t.row);
  }
  if (reject_duplicates) {
    std::sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) {
      return a.i != b.i ? a.i < b.i : (a.j != b.j ? a.j < b.j : a.line < b.line);
    });
    for (std::size_t k = 1; k < seen.size(); ++k)
      if (seen[k].i == seen[k - 1].i && seen[k].j == seen[k - 1].j)
        throw Error(format_location(file.string(), seen[k].line),
                    "duplicate observation of entry (" + std::to_string(seen[k].i + 1) + ", " +
                        std::to_string(seen[k].j + 1) + "), first given on line " +
                        std::to_string(seen[k - 1].line));
  }
  return set;
}

// Every row of the file's matrix must appear in some observation (as a row or a column index):
// otherwise nothing but the regularizer determines that row of X, and a gap usually means a wrong
// index base or a truncated file. Rows beyond the file's matrix, up to a declared n, are allowed.
void check_every_row_observed(const EntrySet& set, std::int64_t rows, const std::filesystem::path& file) {
  std::vector<char> seen(static_cast<std::size_t>(rows), 0);
  for (std::size_t k = 0; k < set.rows.size(); ++k) {
    seen[static_cast<std::size_t>(set.rows[k])] = 1;
    seen[static_cast<std::size_t>(set.cols[k])] = 1;
  }
  std::int64_t first = -1, missing = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (seen[static_cast<std::size_t>(i)]) continue;
    if (first < 0) first = i;
    ++missing;
  }
  if (missing > 0)
    throw Error(file.string(), "row " + std::to_string(first + 1) +
                                   (missing > 1 ? " (and " + std::to_string(missing - 1) + " more)" : std::string()) +
                                   " of the " + std::to_string(rows) + " x " + std::to_string(rows) +
                                   " matrix has no observation: expected every row to be observed at least once");
}

}  // namespace

Model build_completion(const ConfigTable& table, const BuildContext& context, const CompletionDefaults& defaults) {
    const bool synthetic = table.contains("synthetic");
    const bool files = table.contains("observations");
    if (synthetic == files)
      table.fail("", "give exactly one of 'synthetic = { ... }' or 'observations = \"FILE\"'");
    Model model;
    model.application = defaults.application;
    EntrySet observed, validation, test;
    std::int64_t n = 0;
    if (synthetic) {
      const ConfigTable s = table.table("synthetic");
      SyntheticSpec spec;
      spec.m = s.integer("m", spec.m, NumberRule::at_least(2));
      spec.rank = s.integer("rank", spec.rank, NumberRule::closed(1, static_cast<double>(spec.m)));
      spec.s = s.number("s", spec.s, NumberRule::positive());
      spec.outlier_fraction = s.number("outlier_fraction", spec.outlier_fraction, NumberRule::closed(0, 1));
      spec.outlier_magnitude = s.number("outlier_magnitude", spec.outlier_magnitude, NumberRule::non_negative());
      spec.noise_variance = s.number("noise_variance", spec.noise_variance, NumberRule::non_negative());
      spec.symmetric = s.string("sampling", "independent", {"independent", "symmetric"}) == "symmetric";
      spec.seed = static_cast<std::uint64_t>(s.integer("seed", static_cast<std::int64_t>(context.seed), NumberRule::non_negative()));
      spec.eval_samples = s.integer("eval_samples", spec.eval_samples, NumberRule::at_least(1));
      spec.exponential_factor = defaults.exponential_factor;
      spec.positive_outliers = defaults.positive_outliers;
      spec.given_factor = defaults.given_factor;
      if (spec.given_factor) {
        if (s.contains("m") && spec.m != spec.given_factor->rows()) s.fail("m", "m is set by the data: " + std::to_string(spec.given_factor->rows()));
        if (s.contains("rank") && spec.rank != spec.given_factor->cols()) s.fail("rank", "the rank is set by the data: " + std::to_string(spec.given_factor->cols()));
        spec.m = spec.given_factor->rows();
        spec.rank = spec.given_factor->cols();
      }
      if (spec.m > 2000000000) s.fail("m", "must be below 2^31");
      SyntheticInstance inst = generate(spec);
      n = spec.m;
      observed = std::move(inst.observed);
      validation = std::move(inst.validation);
      test = std::move(inst.test);
      model.default_rank = spec.rank;
      model.facts.push_back({"sampling_probability", inst.sampling_probability});
      model.facts.push_back({"outliers", static_cast<double>(inst.outliers)});
    } else {
      const auto obs_file = *table.file("observations");
      io::CoordinateMatrix obs = read_entries(obs_file);
      std::int64_t declared = table.integer("n", 0, NumberRule::non_negative());
      n = std::max(obs.rows, obs.cols);
      if (obs.rows != obs.cols && declared == 0)
        throw Error(obs_file.string(), "PSD matrix completion needs a square matrix, the file declares " +
                                           std::to_string(obs.rows) + " x " + std::to_string(obs.cols));
      if (declared > 0) {
        if (declared < n) table.fail("n", "n = " + std::to_string(declared) + " is smaller than the data's " + std::to_string(n));
        n = declared;
      }
      // Indices are 32-bit (EntrySet); a larger size line is refused before anything is sized by it.
      if (n > 2000000000)
        throw Error(obs_file.string(), "the matrix is " + std::to_string(n) + " x " + std::to_string(n) +
                                           ", expected at most 2000000000 rows");
      observed = to_entries(obs, obs_file, n, true);
      if (observed.rows.empty())
        throw Error(obs_file.string(), "expected at least one observation 'row col value', the file has none");
      check_every_row_observed(observed, std::max(obs.rows, obs.cols), obs_file);
      if (auto f = table.file("validation")) validation = to_entries(read_entries(*f), *f, n, false);
      if (auto f = table.file("test")) test = to_entries(read_entries(*f), *f, n, false);
      model.default_rank = table.integer("rank", 5, NumberRule::at_least(1));
    }
    if (synthetic) model.default_rank = table.integer("rank", model.default_rank, NumberRule::at_least(1));
    model.facts.insert(model.facts.begin(), {{"n", static_cast<double>(n)},
                                             {"observed", static_cast<double>(observed.rows.size())}});
    Vector targets = Eigen::Map<const Vector>(observed.values.data(), static_cast<Index>(observed.values.size()));
    model.terms = std::make_shared<EntryTerms>(n, std::move(observed.rows), std::move(observed.cols), std::move(targets));
    model.evaluator = std::make_shared<HeldOutEvaluator>(held_out_rmse(std::move(validation)),
                                                         held_out_rmse(std::move(test)));
    return model;
}

}  // namespace sdprl::mc
