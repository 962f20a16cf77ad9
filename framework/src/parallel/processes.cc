// The processes of one run (parallel/processes.h): Boost.MPI over Open MPI when the build found it.
#include "parallel/processes.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
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
// Started by a launcher as one of several processes: Open MPI's mpirun (OMPI_COMM_WORLD_SIZE, and
// OMPI_COMMAND naming this program, so that an sdprl started from inside another MPI program,
// which inherits that program's variables, stays a single process), a PMIx launcher such as
// Slurm's srun (PMIX_RANK), or MPICH's Hydra (PMI_SIZE). SDPRL_MPI=0 turns MPI off. A process started
// by hand does not initialise MPI at all (Open MPI's singleton start forks a daemon, which costs
// time and may fail as root or without a network), nor does a group of one.
bool launched(const char* program) {
  const char* choice = std::getenv("SDPRL_MPI");
  if (choice && std::string(choice) == "0") return false;
  if (const char* size = std::getenv("OMPI_COMM_WORLD_SIZE")) {
    // SDPRL_MPI=1: joins although mpirun started another program that started this one (a
    // wrapper such as /usr/bin/time or valgrind).
    if (choice && std::string(choice) == "1") return std::atoi(size) > 1;
    const char* command = std::getenv("OMPI_COMMAND");
    const std::string me = program ? std::filesystem::path(program).filename().string() : "";
    return std::atoi(size) > 1 && (!command || std::filesystem::path(command).filename().string() == me);
  }
  if (const char* size = std::getenv("PMI_SIZE")) return std::atoi(size) > 1;
  return std::getenv("PMIX_RANK") != nullptr;
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
  if (s.environment || !launched(argc > 0 ? argv[0] : nullptr)) return;
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

std::string unjoined_launcher() {
#ifdef SDPRL_HAVE_MPI
  if (distributed()) return "";
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* command = std::getenv("OMPI_COMMAND");
  if (!size || std::atoi(size) <= 1 || !command) return "";
  if (const char* choice = std::getenv("SDPRL_MPI"); choice && std::string(choice) == "0") return "";
  return "this process runs alone although mpirun started " + std::string(size) + " processes: mpirun started '" +
         std::filesystem::path(command).filename().string() +
         "', not sdprl, and a program started by another one runs alone unless SDPRL_MPI=1 is set: "
         "mpirun -x SDPRL_MPI=1 ...";
#else
  return "";
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

double largest(double value) {
#ifdef SDPRL_HAVE_MPI
  State& s = state();
  if (s.count <= 1) return value;
  const Timer timer;
  return boost::mpi::all_reduce(*s.world, value, boost::mpi::maximum<double>());
#else
  return value;
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

double peak_memory_mib() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return std::nan("");
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
}

}  // namespace sdprl::processes
