// Entry terms Q = e_i e_j^T: the term data and their values (see sdprl/terms/entry_terms.h for
// the algebra). The linearisation is entry_linearization.h; the adjoint apply_adjoint_sym, with
// its fixed-chunk reduction, entry_adjoint_sym.cc.
#include "sdprl/terms/entry_terms.h"

#include <cmath>
#include <string>
#include <utility>

#include "sdprl/error.h"
#include "terms/entry_linearization.h"

namespace sdprl {

EntryTerms::EntryTerms(Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols,
                       Vector targets)
    : n_(n), rows_(std::move(rows)), cols_(std::move(cols)), targets_(std::move(targets)) {
  if (n <= 0) throw Error("", "entry terms: dimension must be positive, got " + std::to_string(n));
  if (rows_.size() != cols_.size() || static_cast<Index>(rows_.size()) != targets_.size())
    throw Error("", "entry terms: rows, cols and targets differ in length");
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    if (rows_[k] < 0 || rows_[k] >= n || cols_[k] < 0 || cols_[k] >= n)
      throw Error("", "entry term " + std::to_string(k) + ": index (" + std::to_string(rows_[k]) +
                          ", " + std::to_string(cols_[k]) + ") outside [0, " + std::to_string(n) + ")");
    if (!std::isfinite(targets_[static_cast<Index>(k)]))
      throw Error("", "entry term " + std::to_string(k) + ": target is not finite");
  }
}


EntryTerms::~EntryTerms() = default;

void EntryTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < size(); ++k) values[k] = X.row(rows_[k]).dot(X.row(cols_[k]));
}

std::unique_ptr<TermLinearization> EntryTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<detail::EntryLinearization>(*this, mode);
}

}  // namespace sdprl
