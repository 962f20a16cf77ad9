// kNN graphs and graph Laplacians (see sdprl/graph/knn_graph.h), held in a Boost.Graph
// adjacency_list.
#include "sdprl/graph/knn_graph.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <cmath>
#include <cstddef>
#include <string>

#include "sdprl/error.h"

namespace sdprl::graph {
namespace {

// Undirected simple graph; parallel edges are kept out by the callers (knn_pairs deduplicates
// before inserting).
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;

// Rows per distance block: at most 256, and at most ~4M distances (32 MB) per block.
Index block_rows(Index n) {
  constexpr Index kMaxRows = 256;
  constexpr Index kMaxEntries = Index(1) << 22;
  return std::max<Index>(1, std::min<Index>(kMaxRows, kMaxEntries / std::max<Index>(n, 1)));
}

std::string pair_text(Index i, Index j) {
  return "(" + std::to_string(i) + ", " + std::to_string(j) + ")";
}

}  // namespace

std::vector<std::pair<Index, Index>> knn_pairs(const Matrix& points, Index k) {
  const Index n = points.rows();
  if (k < 1 || k > n - 1) {
    throw Error("", "knn_pairs: expected 1 <= k <= n - 1 = " + std::to_string(n - 1) +
                        " (n = " + std::to_string(n) + " points), got k = " + std::to_string(k));
  }
  if (!points.allFinite()) {
    throw Error("", "knn_pairs: every coordinate must be finite, the points contain NaN/Inf");
  }
  const Vector norms = points.rowwise().squaredNorm();
  const Index rows_per_block = block_rows(n);

  // Directed kNN pairs, normalised to (min, max); deduplicated below.
  std::vector<std::pair<Index, Index>> pairs;
  pairs.reserve(static_cast<std::size_t>(n * k));
  Matrix dist;                // rows_per_block x n block of squared distances
  std::vector<Index> order;   // candidate neighbours of one row
  order.reserve(static_cast<std::size_t>(n));
  for (Index begin = 0; begin < n; begin += rows_per_block) {
    const Index m = std::min(rows_per_block, n - begin);
    dist.resize(m, n);
    dist.noalias() = -2.0 * points.middleRows(begin, m) * points.transpose();
    dist.colwise() += norms.segment(begin, m);
    dist.rowwise() += norms.transpose();
    dist = dist.cwiseMax(0.0);
    for (Index r = 0; r < m; ++r) {
      const Index i = begin + r;
      const double* d = dist.data() + r * n;  // row-major: row r is contiguous
      order.clear();
      for (Index j = 0; j < n; ++j) {
        if (j != i) order.push_back(j);
      }
      // The k smallest by (distance, index): a strict total order, so the set is well defined.
      std::nth_element(order.begin(), order.begin() + (k - 1), order.end(),
                       [d](Index a, Index b) { return d[a] < d[b] || (d[a] == d[b] && a < b); });
      for (Index t = 0; t < k; ++t) {
        const Index j = order[static_cast<std::size_t>(t)];
        pairs.emplace_back(std::min(i, j), std::max(i, j));
      }
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());

  Graph g(static_cast<std::size_t>(n));
  for (const auto& [i, j] : pairs) {
    boost::add_edge(static_cast<std::size_t>(i), static_cast<std::size_t>(j), g);
  }

  std::vector<std::pair<Index, Index>> edges;
  edges.reserve(boost::num_edges(g));
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const auto u = static_cast<Index>(boost::source(*it, g));
    const auto v = static_cast<Index>(boost::target(*it, g));
    edges.emplace_back(std::min(u, v), std::max(u, v));
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}

Eigen::SparseMatrix<double> graph_laplacian(Index n,
                                            const std::vector<std::pair<Index, Index>>& edges,
                                            const std::vector<double>* weights) {
  if (n < 0) {
    throw Error("", "graph_laplacian: expected n >= 0 vertices, got " + std::to_string(n));
  }
  if (weights != nullptr && weights->size() != edges.size()) {
    throw Error("", "graph_laplacian: expected one weight per edge (" +
                        std::to_string(edges.size()) + "), got " +
                        std::to_string(weights->size()));
  }
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const auto [i, j] = edges[e];
    if (i < 0 || i >= n || j < 0 || j >= n) {
      throw Error("", "graph_laplacian: edge " + std::to_string(e) + " " + pair_text(i, j) +
                          " has a vertex outside [0, " + std::to_string(n - 1) + "]");
    }
    if (i == j) {
      throw Error("", "graph_laplacian: edge " + std::to_string(e) + " " + pair_text(i, j) +
                          " is a self-loop");
    }
    if (weights != nullptr && !(std::isfinite((*weights)[e]) && (*weights)[e] >= 0.0)) {
      throw Error("", "graph_laplacian: expected a finite weight >= 0 for edge " +
                          std::to_string(e) + " " + pair_text(i, j) + ", got " +
                          std::to_string((*weights)[e]));
    }
  }

  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(2 * edges.size() + static_cast<std::size_t>(n));
  if (weights == nullptr) {
    // Unit weights: D is the vertex degrees of the graph (a repeated edge counts again).
    Graph g(static_cast<std::size_t>(n));
    for (const auto& [i, j] : edges) {
      boost::add_edge(static_cast<std::size_t>(i), static_cast<std::size_t>(j), g);
    }
    for (auto [it, end] = boost::vertices(g); it != end; ++it) {
      const auto deg = static_cast<double>(boost::degree(*it, g));
      if (deg > 0.0) triplets.emplace_back(static_cast<Index>(*it), static_cast<Index>(*it), deg);
    }
    for (auto [it, end] = boost::edges(g); it != end; ++it) {
      const auto u = static_cast<Index>(boost::source(*it, g));
      const auto v = static_cast<Index>(boost::target(*it, g));
      triplets.emplace_back(u, v, -1.0);
      triplets.emplace_back(v, u, -1.0);
    }
  } else {
    for (std::size_t e = 0; e < edges.size(); ++e) {
      const auto [i, j] = edges[e];
      const double w = (*weights)[e];
      triplets.emplace_back(i, i, w);
      triplets.emplace_back(j, j, w);
      triplets.emplace_back(i, j, -w);
      triplets.emplace_back(j, i, -w);
    }
  }
  Eigen::SparseMatrix<double> L(n, n);
  L.setFromTriplets(triplets.begin(), triplets.end());
  L.makeCompressed();
  return L;
}

}  // namespace sdprl::graph
