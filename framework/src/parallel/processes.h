// Internal (not installed): the processes of one run. Under an MPI launcher (`mpirun -np P sdprl
// run ...`) every process runs the same program on the same model; the row-split ADMM's row pass
// (admm/row_kernel.h) is split into P contiguous blocks of row chunks, one per process, and what a
// process computed for its block is shared with the others (docs/method.md section 11). Everything
// else is computed by every process alike, so that all hold the same iterate after each exchange.
//
// Sums stay those of one process bit for bit: each process fills its own chunks' partial sums,
// the partials are gathered, and every process adds them in chunk order, as the row pass does for
// any thread count. So a run gives the same iterates, counts and outputs for any P.
//
// Without MPI support (the build did not find Boost.MPI) or without a launcher, there is one
// process and every call below is a no-op.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl::processes {

// Joins the launcher's process group for the lifetime of this object (MPI_Init ... MPI_Finalize),
// when the process was started by one (Open MPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK or
// Hydra's PMI_SIZE in the environment); otherwise nothing. One per program, in main(), before any
// other call here.
class SDPRL_API Group {
 public:
  Group(int& argc, char**& argv);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
};

// When this process was started under mpirun (several processes) but did not join their group,
// because mpirun started another program that started it (OMPI_COMMAND names that one): what to
// tell the user. Empty otherwise.
SDPRL_API std::string unjoined_launcher();

// This process's number, 0 .. count() - 1, and the number of processes (1 without a group).
SDPRL_API int rank();
SDPRL_API int count();
// Processes of the group on this machine (for the default thread count).
SDPRL_API int local_count();
inline bool distributed() { return count() > 1; }
// Whether this process writes the run's outputs and prints its log (process 0).
inline bool writer() { return rank() == 0; }

// The P + 1 bounds of `items` split into count() contiguous blocks of nearly equal weight:
// process p owns items [bounds[p], bounds[p + 1]). `cumulative(i)` is the weight of items
// [0, i), non-decreasing, cumulative(0) = 0. The same on every process.
template <class Cumulative>
std::vector<Index> split(Index items, Cumulative cumulative) {
  const int P = count();
  std::vector<Index> bounds(static_cast<std::size_t>(P) + 1, items);
  bounds[0] = 0;
  const double total = static_cast<double>(cumulative(items));
  for (int p = 1; p < P; ++p) {
    // The first item whose start lies at or beyond p / P of the weight.
    const double goal = total * p / P;
    Index lo = bounds[static_cast<std::size_t>(p) - 1], hi = items;
    while (lo < hi) {
      const Index mid = lo + (hi - lo) / 2;
      if (static_cast<double>(cumulative(mid)) < goal) lo = mid + 1; else hi = mid;
    }
    bounds[static_cast<std::size_t>(p)] = lo;
  }
  return bounds;
}

// Every process has filled doubles [bounds[rank()], bounds[rank() + 1]) of `data` (bounds:
// count() + 1 offsets); afterwards every process holds all of them. Collective: every process
// calls it with the same bounds.
SDPRL_API void share_doubles(double* data, const std::vector<std::size_t>& bounds);

// The same for blocks of items of `width` doubles each (item bounds as split() gives).
inline void share_items(double* data, const std::vector<Index>& bounds, Index width) {
  if (!distributed()) return;
  std::vector<std::size_t> doubles(bounds.size());
  for (std::size_t p = 0; p < bounds.size(); ++p) doubles[p] = static_cast<std::size_t>(bounds[p] * width);
  share_doubles(data, doubles);
}

// True on every process when `flag` is true on any (collective).
SDPRL_API bool any(bool flag);

// The largest of `value` over the processes (collective).
SDPRL_API double largest(double value);

// Ends every process of the group with `code` (an error on one process must not leave the others
// waiting in an exchange). Returns only without a group.
SDPRL_API void abort_all(int code);

// This process's peak resident memory so far, in MiB (the kernel's high-water mark, getrusage's
// ru_maxrss: what `/usr/bin/time -f %M` prints for it).
SDPRL_API double peak_memory_mib();

// What this process has exchanged so far (tools/bench/mpi_report).
struct Traffic {
  std::uint64_t bytes = 0;     // received from other processes
  std::uint64_t exchanges = 0; // collective calls
  double seconds = 0.0;        // spent in them (waiting for the slowest process included)
};
SDPRL_API Traffic traffic();

}  // namespace sdprl::processes
