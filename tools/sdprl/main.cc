// sdprl: the command-line program.
//   sdprl run MODEL.toml [--set KEY=VALUE ...] [--out DIR] [--plugin-path DIR ...] [--quiet]
//   sdprl run --resume DIR [--plugin-path DIR ...] [--quiet]
//   sdprl plugins [--plugin-path DIR ...]
//   sdprl export-sdpa MODEL.toml -o FILE.dat-s [--set KEY=VALUE ...] [--plugin-path DIR ...]
//   sdprl help [options [--markdown]]
// Errors in the model, its data or the plugins print one message "sdprl: error: WHERE: WHAT" and
// exit with status 2; a run that ends without a usable result exits with status 3; one stopped by
// max_mm_iterations or time_limit before converging exits with status 1 (its outputs written),
// unless relative_tolerance = 0 asked for a fixed number of steps; a run stopped
// by SIGINT or SIGTERM writes its outputs and a checkpoint and exits with 128 + the signal's number
// (130, 143: the shells' convention for "killed by", so that `sdprl run ... && next` stops there).
#include <boost/program_options.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config/options_table.h"
#include "parallel/processes.h"
#include "sdprl/error.h"
#include "sdprl/io/sdpa.h"
#include "sdprl/plugin_host.h"
#include "sdprl/runner.h"

namespace po = boost::program_options;

namespace {

std::atomic<bool> g_interrupt{false};
std::atomic<int> g_signal{0};
extern "C" void on_signal(int signal) {
  g_signal.store(signal);
  g_interrupt.store(true);
}

const char* kUsage =
    "usage: sdprl <command> [options]\n"
    "\n"
    "commands:\n"
    "  run MODEL.toml    solve the model; write summary.json, trace.csv, X.mtx\n"
    "  run --resume DIR  continue the run whose checkpoint is in DIR (its output directory)\n"
    "  plugins           list the plugins found (name, kind, version, file)\n"
    "  export-sdpa MODEL.toml -o FILE.dat-s\n"
    "                    write the model's convex l1 problem in Z = X X^T as an SDPA sparse file\n"
    "                    (takes --set and --plugin-path; needs one lambda, n <= 2000)\n"
    "  help              this text\n"
    "  help options      every [solver] key with its default, its values and its meaning\n"
    "                    (--markdown: as docs/options.md)\n"
    "\n"
    "run options:\n"
    "  --set KEY=VALUE   override a TOML key (dotted, e.g. loss.type=l1, solver.admm.rho=2)\n"
    "  --out DIR         output directory (default: [output] directory, else sdprl-results/<model>)\n"
    "  --force           start a new run in a directory that holds a checkpoint (deleting it)\n"
    "  --plugin-path P   search P (a directory or a .so file) for plugins first; repeatable\n"
    "  --quiet           no iteration table on stderr\n"
    "  --resume DIR      continue from DIR/checkpoint.sdprl with the saved model file and --set\n"
    "                    options (refused if the model file changed); takes --plugin-path, --quiet\n"
    "\n"
    "Plugins are searched in: --plugin-path, [plugins] path in the model, $SDPRL_PLUGIN_PATH,\n"
    "next to the executable (../lib/sdprl/plugins), the install prefix.\n";

// KEY=VALUE strings of --set, split at the first '='.
std::vector<std::pair<std::string, std::string>> overrides_of(const po::variables_map& vm) {
  std::vector<std::pair<std::string, std::string>> out;
  if (vm.count("set")) {
    for (const std::string& kv : vm["set"].as<std::vector<std::string>>()) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw sdprl::Error("--set " + kv, "expected KEY=VALUE, e.g. --set loss.type=l1");
      out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
  }
  return out;
}

// --plugin-path values: each must exist (a directory to search or a plugin file), so that a typo
// is not silently a search of nothing.
std::vector<std::filesystem::path> plugin_paths_of(const po::variables_map& vm) {
  std::vector<std::filesystem::path> paths;
  if (!vm.count("plugin-path")) return paths;
  for (const std::string& p : vm["plugin-path"].as<std::vector<std::string>>()) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      throw sdprl::Error("--plugin-path", "'" + p + "' does not exist (expected a directory of plugins or a plugin file)");
    paths.emplace_back(p);
  }
  return paths;
}

std::string fmt_g(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// Why a run that hit a cap is not converged, in numbers: the relative changes of its last steps
// against the rule it did not meet (docs/method.md section 7).
std::string not_converged_reason(const sdprl::RunResult& r) {
  const sdprl::SolverOptions& o = r.options;
  const sdprl::Summary& s = r.summary;
  std::ostringstream os;
  // A run whose small steps came from unsolved subproblems (mm_loop.cc: inner_solves_failed) says so.
  if (s.status == sdprl::SolverStatus::kIterationLimit && s.mm_iterations < o.max_mm_iterations && !s.message.empty())
    return s.message + "; the last iterate and its summary are in " + r.output_directory.string();
  os << (s.status == sdprl::SolverStatus::kTimeLimit ? "stopped at the time limit of " + fmt_g(o.time_limit) + " s"
                                                     : "stopped at max_mm_iterations = " + std::to_string(o.max_mm_iterations))
     << " before the relative change fell below relative_tolerance = " << fmt_g(o.relative_tolerance) << " on "
     << o.consecutive << " consecutive steps";
  const std::size_t shown = std::min<std::size_t>(s.trace.size(), static_cast<std::size_t>(std::max(o.consecutive, 1)));
  if (shown > 0) {
    os << "; the last " << (shown == 1 ? "step's relative change was" : std::to_string(shown) + " steps' relative changes were");
    for (std::size_t i = s.trace.size() - shown; i < s.trace.size(); ++i)
      os << (i + shown == s.trace.size() ? " " : ", ") << fmt_g(s.trace[i].relative_change);
  }
  os << "; the last iterate and its summary are in " << r.output_directory.string()
     << " (raise max_mm_iterations or time_limit, or resume from it with init = \"file\")";
  return os.str();
}

int run(const std::vector<std::string>& args) {
  po::options_description desc("run options");
  desc.add_options()("set", po::value<std::vector<std::string>>()->composing(), "")(
      "out", po::value<std::string>(), "")("plugin-path", po::value<std::vector<std::string>>()->composing(), "")(
      "quiet", po::bool_switch(), "")("force", po::bool_switch(), "")("resume", po::value<std::string>(), "")(
      "model", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
  po::notify(vm);
  sdprl::RunRequest req;
  if (vm.count("resume")) {
    // The saved run's model, --set options and output directory; RunRequest checks that none is
    // given here.
    req.resume_directory = vm["resume"].as<std::string>();
    if (vm["force"].as<bool>())
      throw sdprl::Error("--force", "starts a new run over a checkpoint; --resume continues one: give one of them");
    if (vm.count("model"))
      throw sdprl::Error("--resume", "continues the run saved in " + vm["resume"].as<std::string>() +
                                         " with its own model file; give no MODEL.toml (" +
                                         vm["model"].as<std::string>() + ")");
  } else {
    if (!vm.count("model")) throw sdprl::Error("", "sdprl run: missing MODEL.toml\n\n" + std::string(kUsage));
    req.model_file = vm["model"].as<std::string>();
  }
  req.overrides = overrides_of(vm);
  if (vm.count("out")) req.output_directory = vm["out"].as<std::string>();
  req.plugin_paths = plugin_paths_of(vm);
  req.quiet = vm["quiet"].as<bool>();
  req.force = vm["force"].as<bool>();
  req.interrupt = &g_interrupt;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  // A file size limit (ulimit -f) otherwise kills the process with SIGXFSZ in the middle of a
  // write, leaving a temporary file and no message; ignored, the write fails with EFBIG and the
  // run ends with its error, the previous outputs in place (docs/bad-input.md).
  std::signal(SIGXFSZ, SIG_IGN);

  if (!sdprl::processes::writer()) req.quiet = true;
  const sdprl::RunResult r = sdprl::run_model(req);
  if (!sdprl::processes::writer()) {
    // The other processes hold the same result: the exit status below is theirs too, the report is
    // process 0's alone.
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)) return 2;
  }
  // stdout: the result in one line a script can grep, then the metrics one per line.
  std::printf("status = %s\n", sdprl::to_string(r.summary.status));
  std::printf("lambda = %.6g\n", r.weights.lambda);
  std::printf("objective = %.10g\n", r.summary.final_objective);
  std::printf("mm_iterations = %d\nadmm_iterations = %ld\n", r.summary.mm_iterations, r.summary.admm_iterations);
  std::printf("time = %.3f s\n", r.summary.init_time + r.summary.solve_time);
  for (const sdprl::Metric& m : r.summary.metrics) std::printf("%s = %.6g\n", m.name.c_str(), m.value);
  std::printf("output = %s\n", r.output_directory.string().c_str());
  if (r.summary.status == sdprl::SolverStatus::kInterrupted && g_interrupt.load()) {
    const std::filesystem::path checkpoint = r.output_directory / "checkpoint.sdprl";
    const int signal = g_signal.load();
    std::fprintf(stderr, "sdprl: interrupted by %s: summary.json, trace.csv and the last iterate are in %s; %s\n",
                 signal == SIGTERM ? "SIGTERM" : "SIGINT", r.output_directory.string().c_str(),
                 std::filesystem::exists(checkpoint)
                     ? ("continue with: " +
                        std::string(sdprl::processes::distributed() ? "mpirun -np P sdprl run --resume " : "sdprl run --resume ") +
                        r.output_directory.string() + (sdprl::processes::distributed() ? " (any P, 1 included)" : ""))
                           .c_str()
                     : "no checkpoint was taken (the L-BFGS solver takes none), so it cannot be resumed");
    return 128 + (signal > 0 ? signal : SIGINT);
  }
  const sdprl::SolverStatus status = r.summary.status;
  if (status == sdprl::SolverStatus::kIterationLimit || status == sdprl::SolverStatus::kTimeLimit) {
    // A cap is not a result: exit 1, unless the run was asked for a fixed number of steps
    // (relative_tolerance = 0, which no step meets).
    if (r.options.relative_tolerance == 0.0) return 0;
    std::fprintf(stderr, "sdprl: not converged: %s\n", not_converged_reason(r).c_str());
    return 1;
  }
  if (status == sdprl::SolverStatus::kInfeasible) {
    std::fprintf(stderr, "sdprl: not feasible: %s; summary.json (penalty_path), trace.csv and the result are in %s\n",
                 r.summary.message.c_str(), r.output_directory.string().c_str());
    return 1;
  }
  if (r.summary.usable()) return 0;
  if (status == sdprl::SolverStatus::kUnbounded) {
    std::fprintf(stderr, "sdprl: error: solver: %s; summary.json, trace.csv and the iterate that shows it are in %s\n",
                 r.summary.message.c_str(), r.output_directory.string().c_str());
    return 3;
  }
  // A numerical failure: the outputs (summary, trace, last finite iterate) are written; say why.
  std::fprintf(stderr, "sdprl: error: solver: numerical failure: %s; summary.json, trace.csv and the last finite "
               "iterate are in %s\n", r.summary.message.empty() ? "status numerical_error" : r.summary.message.c_str(),
               r.output_directory.string().c_str());
  return 3;
}

// export-sdpa: the model as `run` builds it, its l1 problem written by sdprl::io (sdprl/io/sdpa.h).
int export_sdpa(const std::vector<std::string>& args) {
  po::options_description desc("export-sdpa options");
  desc.add_options()("set", po::value<std::vector<std::string>>()->composing(), "")(
      "output,o", po::value<std::string>(), "")("plugin-path", po::value<std::vector<std::string>>()->composing(), "")(
      "model", po::value<std::string>(), "");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
  } catch (const po::invalid_command_line_syntax& e) {
    // Boost names -o by its long form, which the usage line does not show.
    if (e.kind() == po::invalid_syntax::missing_parameter && e.get_option_name() == "--output")
      throw sdprl::Error("", "sdprl export-sdpa: -o (--output) needs a file name: -o FILE.dat-s");
    throw;
  }
  if (!vm.count("model") || !vm.count("output"))
    throw sdprl::Error("", "sdprl export-sdpa: expected MODEL.toml -o FILE.dat-s\n\n" + std::string(kUsage));
  sdprl::RunRequest req;
  req.model_file = vm["model"].as<std::string>();
  req.overrides = overrides_of(vm);
  req.plugin_paths = plugin_paths_of(vm);
  const sdprl::LoadedModel loaded = sdprl::load_model(req);
  if (loaded.lambdas.size() != 1)
    throw sdprl::Error(loaded.lambda_where, "regularizer.lambda: export-sdpa needs one lambda, not a grid (e.g. "
                                            "--set regularizer.lambda=1)");
  const sdprl::RegularizationWeights weights{loaded.lambdas[0], loaded.gamma};
  const sdprl::io::SdpaProblem p = sdprl::io::l1_problem_as_sdpa(loaded.model, weights);
  const std::string out = vm["output"].as<std::string>();
  std::ostringstream comment;
  comment << std::setprecision(17) << "sdprl export-sdpa " << req.model_file.string() << " (" << loaded.application
          << "): the l1 problem in Z = X X^T, lambda = " << weights.lambda << ", gamma = " << weights.gamma
          << "\nblock 1: Z (n = " << p.blocks[0] << "); block 2: slacks p, q (m = " << p.m
          << " each); optimum = -(l1 objective)";
  sdprl::io::write_sdpa(out, p, comment.str());
  std::printf("n = %ld\nm = %ld\nentries = %zu\noutput = %s\n", static_cast<long>(p.blocks[0]),
              static_cast<long>(p.m), p.entries.size(), out.c_str());
  return 0;
}

// help [options [--markdown]]: this usage, or the table of [solver] keys (config/options_table.h).
int help(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args[0] != "options")
    throw sdprl::Error("", "sdprl help: unknown topic '" + args[0] + "' (topics: options)\n\n" + kUsage);
  bool markdown = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] != "--markdown")
      throw sdprl::Error("", "sdprl help options: unknown argument '" + args[i] + "' (expected --markdown)");
    markdown = true;
  }
  std::fputs(sdprl::solver_options_reference(markdown).c_str(), stdout);
  return 0;
}

int plugins(const std::vector<std::string>& args) {
  po::options_description desc("plugins options");
  desc.add_options()("plugin-path", po::value<std::vector<std::string>>()->composing(), "");
  po::variables_map vm;
  const po::parsed_options parsed = po::command_line_parser(args).options(desc).run();
  // A word that is no option ("sdprl plugins extra") was dropped without a word.
  for (const po::option& o : parsed.options)
    if (o.position_key >= 0)
      throw sdprl::Error("sdprl plugins", "takes no arguments but --plugin-path DIR; got '" + o.value.front() + "'");
  po::store(parsed, vm);
  sdprl::PluginHost host(plugin_paths_of(vm));
  std::vector<sdprl::PluginHost::Skipped> skipped;
  const auto found = host.discover(&skipped);
  std::printf("%-20s %-12s %-8s %-60s %s\n", "name", "kind", "version", "description", "file");
  for (const auto& p : found)
    std::printf("%-20s %-12s %-8s %-60s %s\n", p.name.c_str(), sdprl::to_string(p.kind), p.version.c_str(),
                p.description.c_str(), p.file.string().c_str());
  if (!skipped.empty()) {
    std::printf("\nnot loaded:\n");
    for (const auto& s : skipped) std::printf("  %s: %s\n", s.file.string().c_str(), s.reason.c_str());
  }
  if (found.empty()) {
    std::fprintf(stderr, "sdprl: no plugins found; searched:");
    for (const auto& d : host.search_directories()) std::fprintf(stderr, " %s", d.string().c_str());
    std::fprintf(stderr, "\n");
    return 1;
  }
  return 0;
}

}  // namespace

namespace {
// The environment of a run, which the libraries read once at process start, so that `sdprl run`
// re-executes itself once when it has to change it (if the exec fails the run goes on as it is):
//
// * Transparent huge pages for the large arrays (the term and split-term vectors: 1.4 GB at
//   m = 10^5). On a kernel that gives them only on request ("[madvise]"), glibc's malloc asks for
//   them only when GLIBC_TUNABLES says glibc.malloc.hugetlb=1. Measured at m = 10^5 (issue #8):
//   page faults 505k -> 18k, 1.4 s less setup before the first MM step. SDPRL_HUGE_PAGES=0 turns
//   this off; a set glibc.malloc.hugetlb is left as it is.
// * A bounded spin of OpenMP's waiting threads (libgomp's GOMP_SPINCOUNT, default 300000 when
//   OMP_WAIT_POLICY is unset). Every core is used by default (solver.threads = 0), and a thread
//   that spins at a barrier while another process holds its partner's core stalls each ADMM
//   iteration. Quickstart m = 2000, lambda = 1, 2 cores, 5 runs each (medians): idle, 1 thread
//   0.97 s, 2 threads 0.62 s spinning (default), 0.59 s at GOMP_SPINCOUNT=3000, 0.79 s passive;
//   beside a busy loop on one core, 1 thread 0.90 s, 2 threads 1.58 s spinning, 1.04 s at 3000,
//   1.13 s passive. A set GOMP_SPINCOUNT or OMP_WAIT_POLICY is left as it is.
void prepare_environment(char** argv) {
  bool changed = false;
  if (!std::getenv("GOMP_SPINCOUNT") && !std::getenv("OMP_WAIT_POLICY")) {
    changed = setenv("GOMP_SPINCOUNT", "3000", 1) == 0;
  }
  const char* off = std::getenv("SDPRL_HUGE_PAGES");
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string current = tunables ? tunables : "";
  std::ifstream policy("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!(off && std::string(off) == "0") && current.find("glibc.malloc.hugetlb") == std::string::npos &&
      std::getline(policy, line) && line.find("[madvise]") != std::string::npos) {
    const std::string wanted = current.empty() ? "glibc.malloc.hugetlb=1" : current + ":glibc.malloc.hugetlb=1";
    changed = setenv("GLIBC_TUNABLES", wanted.c_str(), 1) == 0 || changed;
  }
  if (changed) execv("/proc/self/exe", argv);
  // Not reached unless the exec failed: run as we are (the variables are set, so no second try).
}
}  // namespace

namespace {
// "sdprl: error: MESSAGE" on stderr and the exit status. Under mpirun an error may be one process's
// alone (a file only some nodes see, memory) while the others wait for it in an exchange, so the
// job ends there with the status (MPI_Abort). Process 0 says it; another process waits a moment
// first, so that when every process fails alike (an error in the model) it is said once.
int fail(int code, const std::string& message) {
  const bool distributed = sdprl::processes::distributed();
  if (distributed && !sdprl::processes::writer()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string who = distributed && !sdprl::processes::writer()
                              ? "sdprl (process " + std::to_string(sdprl::processes::rank()) + "): error: "
                              : std::string("sdprl: error: ");
  const bool newline = !message.empty() && message.back() == '\n';
  std::fprintf(stderr, "%s%s%s", who.c_str(), message.c_str(), newline ? "" : "\n");
  std::fflush(stderr);
  if (distributed) sdprl::processes::abort_all(code);
  return code;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "run") prepare_environment(argv);
  // Under mpirun every process runs this program; process 0 prints and writes (parallel/processes.h).
  const sdprl::processes::Group group(argc, argv);
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "run") return run(args);
    if (command == "plugins") return plugins(args);
    if (command == "export-sdpa") return export_sdpa(args);
    if (command == "help") return help(args);
    if (command == "--help" || command == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "sdprl: error: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return 2;
  } catch (const sdprl::Error& e) {
    return fail(2, e.where().empty() ? e.message() : e.where() + ": " + e.message());
  } catch (const po::error& e) {
    return fail(2, std::string(e.what()) + "\n\n" + kUsage);
  } catch (const std::bad_alloc&) {
    // Not "std::bad_alloc": say what ran out and what to change.
    const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
    std::ostringstream os;
    os.precision(1);
    os << std::fixed << "out of memory: the model's data or the solver's state (which grow with the number of terms "
       << "times the rank) did not fit in the memory this process may use (the machine has " << physical / 1e9
       << " GB); lower solver.rank, use fewer data, or raise the process's memory limit";
    return fail(2, os.str());
  } catch (const std::exception& e) {
    return fail(2, e.what());
  } catch (...) {
    // Only a plugin can throw what is not a std::exception (`throw 42;`): it ended the program in
    // std::terminate, exit 134, with no message of sdprl's.
    return fail(2, "a plugin threw an exception that is not a std::exception (derive it from std::exception, or "
                   "throw sdprl::Error with a place and a reason)");
  }
}
