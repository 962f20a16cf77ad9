// The processes of one run (parallel/processes.h): Boost.MPI over Open MPI when the build found it.
#include "parallel/processes.h"

#include <chrono>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <memory>

#ifdef SDPRL_HAVE_MPI
#include <mpi.h>

#include <boost/mpi/collectives/all_reduce.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#endif

namespace sdprl::processes {
namespace {

struct State {
  int rank = 0, count = 1, local = 1;
  Traffic traffic;
#ifdef SDPRL_HAVE_MPI
  std::unique_ptr<boost::mpi::environment> environment;
  std::unique_ptr<boost::mpi::communicator> world;
#endif
};

State& state() {
  static State s;
  return s;
}

#ifdef SDPRL_HAVE_MPI
// Started by a launcher: Open MPI's mpirun, a PMIx launcher (Slurm's srun), or MPICH's Hydra. A
// process started by hand does not initialise MPI at all (Open MPI's singleton start forks a
// daemon, which costs time and may fail as root or without a network).
bool launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}

class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  ~Timer() {
    state().traffic.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    ++state().traffic.exchanges;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};
#endif

}  // namespace

Group::Group(int& argc, char**& argv) {
#ifdef SDPRL_HAVE_MPI
  State& s = state();
  if (!launched() || s.environment) return;
  // Only the thread that runs main() calls MPI; the OpenMP threads of the row loops never do.
  s.environment = std::make_unique<boost::mpi::environment>(argc, argv, boost::mpi::threading::funneled);
  s.world = std::make_unique<boost::mpi::communicator>();
  s.rank = s.world->rank();
  s.count = s.world->size();
  MPI_Comm local;
  MPI_Comm_split_type(MPI_Comm(*s.world), MPI_COMM_TYPE_SHARED, s.rank, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &s.local);
  MPI_Comm_free(&local);
#else
  (void)argc;
  (void)argv;
#endif
}

Group::~Group() {
#ifdef SDPRL_HAVE_MPI
  State& s = state();
  s.world.reset();
  s.environment.reset();  // MPI_Finalize
#endif
}

int rank() { return state().rank; }
int count() { return state().count; }
int local_count() { return state().local; }

void share_doubles(double* data, const std::vector<std::size_t>& bounds) {
#ifdef SDPRL_HAVE_MPI
  State& s = state();
  if (s.count <= 1) return;
  const Timer timer;
  // MPI counts are ints: blocks of up to 2^31 - 1 doubles (16 GB) each.
  std::vector<int> sizes(static_cast<std::size_t>(s.count)), displs(static_cast<std::size_t>(s.count));
  for (std::size_t p = 0; p < sizes.size(); ++p) {
    if (bounds[p + 1] > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw std::length_error("processes::share_doubles: more than 2^31 doubles to exchange");
    displs[p] = static_cast<int>(bounds[p]);
    sizes[p] = static_cast<int>(bounds[p + 1] - bounds[p]);
  }
  // In place: this process's block is already where it belongs.
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, sizes.data(), displs.data(), MPI_DOUBLE, MPI_Comm(*s.world));
  s.traffic.bytes += sizeof(double) * (bounds.back() - bounds.front() - static_cast<std::size_t>(sizes[static_cast<std::size_t>(s.rank)]));
#else
  (void)data;
  (void)bounds;
#endif
}

bool any(bool flag) {
#ifdef SDPRL_HAVE_MPI
  State& s = state();
  if (s.count <= 1) return flag;
  const Timer timer;
  return boost::mpi::all_reduce(*s.world, flag ? 1 : 0, boost::mpi::maximum<int>()) != 0;
#else
  return flag;
#endif
}

void abort_all(int code) {
#ifdef SDPRL_HAVE_MPI
  State& s = state();
  if (s.count > 1) s.world->abort(code);
#else
  (void)code;
#endif
}

Traffic traffic() { return state().traffic; }

}  // namespace sdprl::processes
