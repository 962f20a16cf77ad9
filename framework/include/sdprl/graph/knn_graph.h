// k-nearest-neighbour graphs of data points and their Laplacians (the graph regularisers
// (gamma/2) <X, L X> of the paper's embedding experiments). The graph is held in a Boost.Graph
// adjacency_list.
#pragma once

#include <Eigen/SparseCore>
#include <utility>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl::graph {

// The symmetrised kNN graph of the rows of `points` (n x d): i and j are joined when j is among
// the k nearest neighbours of i or i among those of j (Euclidean distance; ties broken by the
// smaller index; a point is not its own neighbour, but a duplicate point is one at distance 0).
// Returns its edges (i, j) with i < j, each once, sorted. Distances are computed blockwise
// (||a||^2 + ||b||^2 - 2 a.b, clamped at 0), a few hundred rows at a time, so memory stays O(n)
// per block row. Throws Error unless 1 <= k <= n - 1 and every coordinate is finite.
SDPRL_API std::vector<std::pair<Index, Index>> knn_pairs(const Matrix& points, Index k);

// The graph Laplacian L = D - W (n x n, symmetric, PSD) of the undirected graph on n vertices with
// these edges (each listed once, in either orientation; a repeated edge adds its weight again).
// Unit weights when `weights` is null, otherwise one finite weight >= 0 per edge. Throws Error for
// an index outside [0, n), a self-loop, a weight count that differs from the edge count or a
// negative or NaN/Inf weight.
SDPRL_API Eigen::SparseMatrix<double> graph_laplacian(
    Index n, const std::vector<std::pair<Index, Index>>& edges,
    const std::vector<double>* weights = nullptr);

}  // namespace sdprl::graph
