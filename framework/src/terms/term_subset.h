// Internal (not installed): some terms of a set as a set of their own, so that an operator on a
// few terms (the polish's and the staircase's fitted terms, mm/polish.h) costs what those terms
// cost rather than a pass over all m.
#pragma once

#include <memory>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"

namespace sdprl::detail {

// The terms `which` (indices into `set`, in that order) with their Q_tau and t_tau, for the
// framework's own families (entry, distance, sparse-matrix); nullptr for any other (a plugin's
// family, a composite), whose callers then work on the whole set.
SDPRL_API std::unique_ptr<const ConstraintSet> term_subset(const ConstraintSet& set, const std::vector<Index>& which);

// The entries of the terms' Q_tau, each stored once (a sparse-matrix term's upper triangle; one
// per entry or distance term), summed over the set and a composite's parts; m for any other
// family. What a pass over the terms costs, in units of an entry term: the polish's work budget
// (mm/polish.cc) counts a product's term visits with it.
SDPRL_API double term_entries(const ConstraintSet& set);

}  // namespace sdprl::detail
