// Entry terms Q = e_i e_j^T: the term data and their values (see sdprl/terms/entry_terms.h for
// the algebra). The linearisation is entry_linearization.h; the adjoint apply_adjoint_sym, with
// its fixed-chunk reduction, entry_adjoint_sym.cc.
#include "sdprl/terms/entry_terms.h"

#include <utility>

#include "terms/entry_linearization.h"

namespace sdprl {

EntryTerms::EntryTerms(Index n, std::vector<std::int32_t> rows, std::vector<std::int32_t> cols,
                       Vector targets)
    : PairTerms("entry", n, std::move(rows), std::move(cols), std::move(targets)) {}

EntryTerms::~EntryTerms() = default;

void EntryTerms::evaluate(const Matrix& X, Vector& values) const {
  values.resize(size());
#pragma omp parallel for schedule(static)
  for (Index k = 0; k < size(); ++k) values[k] = X.row(rows()[k]).dot(X.row(cols()[k]));
}

std::unique_ptr<TermLinearization> EntryTerms::make_linearization(SplitMode mode) const {
  return std::make_unique<detail::EntryLinearization>(*this, mode);
}

}  // namespace sdprl
