// Some terms of a set as a set of their own (terms/term_subset.h).
#include "terms/term_subset.h"

#include "sdprl/terms/composite_terms.h"
#include "sdprl/terms/distance_terms.h"
#include "sdprl/terms/entry_terms.h"
#include "sdprl/terms/sparse_matrix_terms.h"

namespace sdprl::detail {
namespace {

template <class Family>
std::unique_ptr<const ConstraintSet> pair_subset(const Family& set, const std::vector<Index>& which) {
  std::vector<std::int32_t> rows, cols;
  rows.reserve(which.size());
  cols.reserve(which.size());
  Vector targets(static_cast<Index>(which.size()));
  for (std::size_t k = 0; k < which.size(); ++k) {
    const auto h = static_cast<std::size_t>(which[k]);
    rows.push_back(set.rows()[h]);
    cols.push_back(set.cols()[h]);
    targets[static_cast<Index>(k)] = set.targets()[which[k]];
  }
  return std::make_unique<Family>(set.dimension(), std::move(rows), std::move(cols), std::move(targets));
}

// Q'_k = S_k = sym(Q_k), both halves of its upper triangle: <X, Q' X> and sym(Q') are Q_k's.
std::unique_ptr<const ConstraintSet> sparse_subset(const SparseMatrixTerms& set, const std::vector<Index>& which) {
  std::vector<std::vector<SparseMatrixTerms::Entry>> terms(which.size());
  Vector targets(static_cast<Index>(which.size()));
  for (std::size_t k = 0; k < which.size(); ++k) {
    const Index h = which[k];
    for (Index e = set.entry_begin(h); e < set.entry_begin(h + 1); ++e) {
      const auto u = static_cast<std::size_t>(e);
      const std::int32_t i = set.upper_rows()[u], j = set.upper_cols()[u];
      const double v = set.upper_values()[u];
      terms[k].push_back({i, j, v});
      if (i != j) terms[k].push_back({j, i, v});
    }
    targets[static_cast<Index>(k)] = set.targets()[h];
  }
  return std::make_unique<SparseMatrixTerms>(set.dimension(), terms, std::move(targets));
}

}  // namespace

std::unique_ptr<const ConstraintSet> term_subset(const ConstraintSet& set, const std::vector<Index>& which) {
  if (const auto* entry = dynamic_cast<const EntryTerms*>(&set)) return pair_subset(*entry, which);
  if (const auto* distance = dynamic_cast<const DistanceTerms*>(&set)) return pair_subset(*distance, which);
  if (const auto* sparse = dynamic_cast<const SparseMatrixTerms*>(&set)) return sparse_subset(*sparse, which);
  return nullptr;
}

double term_entries(const ConstraintSet& set) {
  if (const auto* sparse = dynamic_cast<const SparseMatrixTerms*>(&set))
    return static_cast<double>(sparse->upper_rows().size());
  if (const auto* composite = dynamic_cast<const CompositeTerms*>(&set)) {
    double sum = 0.0;
    for (const auto& part : composite->parts()) sum += term_entries(*part);
    return sum;
  }
  return static_cast<double>(set.size());
}

}  // namespace sdprl::detail
