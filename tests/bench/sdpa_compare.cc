// sdpa_compare: sdprl against Debian's interior-point solver `sdpa` (issue #8 part 3) on the convex
// l1 problem of the paper's synthetic matrix-completion instance (rank 5, s = 2, outlier fraction
// 0.05, magnitude 10; models/quickstart.toml with model.synthetic.m = n, loss l1, one lambda).
// For each n it (1) writes the problem with `sdprl export-sdpa` (block 1 = Z, LP block of slacks),
// (2) runs sdpa on it (one thread, epsilonStar 1e-9; wall time of the process) and computes the
// numerical rank of sdpa's Z (eigenvalues > 1e-6 * max), (3) runs `sdprl run` on the same model
// (l1, the default Xt-step (here the exact surrogate) and curvature scale, tight tolerances, spectral init, rank =
// max(5, sdpa's rank) unless --rank; `--set solver.curvature_scale=1` gives the paper's
// majoriser). The automatic tau reaches 1e-4 of sdpa's optimum in 219 and 162 MM steps at n = 100
// and 200, where the hand-set tau = 0.1 and rho = 3 of earlier versions (the best of the sweeps in
// docs/performance.md) took 233 and 238; rho plays no part in the coupled run's dual coordinate
// step.
// and reads its solve time (summary.json time.solve) next to the process's wall time, and
// (4) prints one Markdown table: both times, their ratio (sdpa wall / sdprl solve), both
// objectives (sdpa's optimum is -objValDual; sdprl's is F(X) = sum |<X,Q X> - t| + lambda/2 ||X||^2,
// the same function: the export puts lambda/2 tr Z in F_0) and their relative difference.
//   tools/bench/sdpa_compare [--quick] [N ...] [--lambda L] [--rank R|auto] [--set KEY=VALUE ...]
//   build/bin/sdpa_compare --sdprl build/bin/sdprl --model models/quickstart.toml --n 100 [...]
// When the export refuses an instance (its probe-cost guard, m^2 n > 2e10: n >= 200 here) the
// problem is written by this program's own writer for entry terms (--own-writer forces it); when
// sdpa exceeds --sdpa-timeout seconds the row says so and sdprl still runs.
#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../sdpa_solver.h"
#include "sdprl/completion/synthetic.h"

namespace fs = std::filesystem;
using sdprl::testing_support::shell_quote;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The number after "key": ... in a JSON text, searched from `from` (enough for summary.json).
double json_number(const std::string& text, const std::string& key, std::size_t from = 0) {
  const auto k = text.find("\"" + key + "\"", from);
  if (k == std::string::npos) return std::nan("");
  const auto colon = text.find(':', k);
  return std::strtod(text.c_str() + colon + 1, nullptr);
}

// The same l1 problem as `sdprl export-sdpa` writes for the default synthetic instance (seed 1,
// independent sampling; terms in the plugin's order: Q = sym(e_i e_j^T), t = observed value),
// written directly: the export's generic probe refuses n >= 200 (m^2 n > 2e10) although entry
// terms need no probing. Checked against the export at n = 100 (--check-writer).
void write_completion_sdpa(long n, double lambda, const fs::path& file) {
  sdprl::mc::SyntheticSpec spec;
  spec.m = n;
  const sdprl::mc::SyntheticInstance inst = sdprl::mc::generate(spec);
  const auto& o = inst.observed;
  const long m = static_cast<long>(o.rows.size());
  std::FILE* f = std::fopen(file.c_str(), "w");
  std::fprintf(f, "\"sdpa_compare: l1 matrix completion n = %ld, lambda = %.17g\n%ld = mDIM\n2 = nBLOCK\n%ld %ld = bLOCKsTRUCT\n", n,
               lambda, m, n, -2 * m);
  for (long k = 0; k < m; ++k) std::fprintf(f, "%.17g%c", o.values[k], k + 1 < m ? ' ' : '\n');
  for (long i = 1; i <= n; ++i) std::fprintf(f, "0 1 %ld %ld %.17g\n", i, i, -0.5 * lambda);
  for (long h = 1; h <= 2 * m; ++h) std::fprintf(f, "0 2 %ld %ld -1\n", h, h);
  for (long k = 0; k < m; ++k) {
    const long i = std::min(o.rows[k], o.cols[k]) + 1, j = std::max(o.rows[k], o.cols[k]) + 1;
    std::fprintf(f, "%ld 1 %ld %ld %.17g\n%ld 2 %ld %ld -1\n%ld 2 %ld %ld 1\n", k + 1, i, j, i == j ? 1.0 : 0.5, k + 1, k + 1,
                 k + 1, k + 1, m + k + 1, m + k + 1);
  }
  std::fclose(f);
}

struct Row {
  long n = 0, terms = 0;
  std::string sdpa_note;
  double sdpa_time = std::nan(""), sdpa_obj = std::nan(""), sdpa_gap = std::nan("");
  long sdpa_rank = -1;
  double sdprl_solve = std::nan(""), sdprl_wall = std::nan(""), sdprl_obj = std::nan("");
  long sdprl_rank = 0, sdprl_numerical_rank = -1, mm = 0;
  double certified_gap = std::nan("");  // summary.json certificate.relative_gap
  double reach_time = std::nan("");  // sdprl's solve time when F first came within 1e-4 of sdpa's optimum
  long reach_mm = -1;
  std::string status;
};

}  // namespace

int main(int argc, char** argv) {
  std::string sdprl = "build/bin/sdprl", model = "models/quickstart.toml", workdir = "sdpa-compare-work";
  std::vector<long> ns;
  double lambda = 1.0, timeout = 3600.0;
  long rank = 0;
  bool own_writer = false;
  std::vector<std::string> sets;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sdpa_compare: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--sdprl") sdprl = next();
    else if (a == "--model") model = next();
    else if (a == "--work") workdir = next();
    else if (a == "--n") ns.push_back(std::stol(next()));
    else if (a == "--lambda") lambda = std::stod(next());
    else if (a == "--rank") {
      const std::string r = next();
      rank = r == "auto" ? -1 : std::stol(r);  // -1: solver.rank = "auto" (from rank 2, the staircase)
    }
    else if (a == "--sdpa-timeout") timeout = std::stod(next());
    else if (a == "--set") sets.push_back(next());
    else if (a == "--own-writer") own_writer = true;
    else {
      std::fprintf(stderr, "sdpa_compare: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (ns.empty()) ns = {100, 200, 300};
  const std::string sdpa = sdprl::testing_support::find_sdpa();
  fs::create_directories(workdir);
  char lam[32];
  std::snprintf(lam, sizeof lam, "%.17g", lambda);
  std::vector<Row> rows;
  for (long n : ns) {
    Row row;
    row.n = n;
    const fs::path dir = fs::path(workdir) / ("n" + std::to_string(n));
    fs::create_directories(dir);
    std::string common = " --set model.synthetic.m=" + std::to_string(n) + " --set loss.type=l1 --set regularizer.lambda=" + lam;
    // 1. export
    const fs::path data = dir / "problem.dat-s";
    const std::string exp = shell_quote(sdprl) + " export-sdpa " + shell_quote(model) + " -o " + shell_quote(data.string()) +
                            common + " > " + shell_quote((dir / "export.log").string()) + " 2>&1";
    if (sdpa.empty()) {
      row.sdpa_note = "sdpa not on PATH";
    } else {
      if (own_writer || std::system(exp.c_str()) != 0) {
        write_completion_sdpa(n, lambda, data);
        row.sdpa_note = "own writer; ";
      }
      // 2. sdpa (wall time of the process, under `timeout`)
      const std::string wrapper = (dir / "sdpa").string();
      std::ofstream(wrapper) << "#!/bin/sh\nexec timeout " << timeout << " " << sdpa << " \"$@\"\n";
      fs::permissions(wrapper, fs::perms::owner_all);
      const double t0 = now();
      const sdprl::testing_support::SdpaResult r = sdprl::testing_support::run_sdpa(wrapper, data, dir);
      row.sdpa_time = now() - t0;
      if (!r.error.empty()) {
        row.sdpa_note = "sdpa failed or timed out after " + std::to_string(static_cast<long>(row.sdpa_time)) + " s";
      } else {
        row.sdpa_obj = -r.dual;
        row.sdpa_gap = r.relative_gap;
        row.terms = r.x.size();
        row.sdpa_note += r.phase;
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(r.Y[0].dense, Eigen::EigenvaluesOnly);
        const Eigen::VectorXd ev = eig.eigenvalues();
        const double mx = ev.maxCoeff();
        row.sdpa_rank = (ev.array() > 1e-6 * mx).count();
      }
    }
    // 3. sdprl
    row.sdprl_rank = rank > 0 ? rank : std::max<long>(5, row.sdpa_rank);
    std::string run = shell_quote(sdprl) + " run " + shell_quote(model) + common +
                      " --set solver.rank=" + (rank < 0 ? std::string("auto") : std::to_string(row.sdprl_rank)) +
                      " --set solver.init=spectral"
                      " --set solver.relative_tolerance=1e-10 --set solver.consecutive=5"
                      " --set solver.max_mm_iterations=20000 --set solver.admm.min_tolerance=1e-12";
    for (const auto& s : sets) run += " --set " + shell_quote(s);  // later --set wins
    run += " --out " + shell_quote((dir / "sdprl").string()) + " --quiet > " + shell_quote((dir / "sdprl.log").string()) + " 2>&1";
    std::fprintf(stderr, "sdpa_compare: n = %ld: sdpa %s (%.1f s); running sdprl rank %ld\n", n, row.sdpa_note.c_str(),
                 row.sdpa_time, row.sdprl_rank);
    const double t1 = now();
    const int rc = std::system(run.c_str());
    row.sdprl_wall = now() - t1;
    const std::string sum = slurp(dir / "sdprl" / "summary.json");
    if (rc != 0 && sum.empty()) {
      row.status = "sdprl failed (see " + (dir / "sdprl.log").string() + ")";
    } else {
      row.sdprl_obj = json_number(sum, "final", sum.find("\"objective\""));
      row.sdprl_solve = json_number(sum, "solve", sum.find("\"time\""));
      row.mm = static_cast<long>(json_number(sum, "mm_iterations"));
      row.sdprl_rank = static_cast<long>(json_number(sum, "rank"));  // the end's (the staircase may climb)
      // Z's rank by the rule applied to sdpa's Z (eigenvalues above 1e-6 of the largest).
      const double numerical = json_number(sum, "numerical_rank");
      if (std::isfinite(numerical)) row.sdprl_numerical_rank = static_cast<long>(numerical);
      row.certified_gap = json_number(sum, "relative_gap", sum.find("\"certificate\""));
      if (row.terms == 0) row.terms = static_cast<long>(json_number(sum, "terms"));
      const auto st = sum.find("\"status\"");
      if (st != std::string::npos) {
        const auto q1 = sum.find('"', sum.find(':', st));
        row.status = sum.substr(q1 + 1, sum.find('"', q1 + 1) - q1 - 1);
      }
    }
    // The first MM step within 1e-4 (relative) of sdpa's optimum, from trace.csv
    // (lambda,mm_iteration,objective,...,time).
    if (std::isfinite(row.sdpa_obj)) {
      std::ifstream trace(dir / "sdprl" / "trace.csv");
      std::string line;
      std::getline(trace, line);
      while (std::getline(trace, line)) {
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
        if (f.size() < 8) continue;  // lambda,mm_iteration,objective,...,tolerance,time,...
        if ((std::stod(f[2]) - row.sdpa_obj) / std::abs(row.sdpa_obj) <= 1e-4) {
          row.reach_mm = std::stol(f[1]);
          row.reach_time = std::stod(f[7]);
          break;
        }
      }
    }
    rows.push_back(row);
  }
  std::printf("| n | terms m | sdpa time (s) | sdprl solve (s) | sdprl wall (s) | ratio sdpa/sdprl solve | sdpa objective | "
              "sdprl objective | rel. diff (sdprl-sdpa)/sdpa | certified rel. gap | rank(Z sdpa) | sdprl rank (of Z) | sdprl MM steps, status | sdpa phase | sdprl time to 1e-4 of sdpa (s, MM steps) | ratio sdpa/that |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    std::printf("| %ld | %ld | %.2f | %.2f | %.2f | %.3g | %.10g | %.10g | %+.2e | %.1e | %ld | %ld (%ld) | %ld, %s | %s | %.2f (%ld) | %.3g |\n", r.n, r.terms,
                r.sdpa_time, r.sdprl_solve, r.sdprl_wall, r.sdpa_time / r.sdprl_solve, r.sdpa_obj, r.sdprl_obj,
                (r.sdprl_obj - r.sdpa_obj) / std::abs(r.sdpa_obj), r.certified_gap, r.sdpa_rank, r.sdprl_rank, r.sdprl_numerical_rank, r.mm, r.status.c_str(),
                r.sdpa_note.c_str(), r.reach_time, r.reach_mm, r.sdpa_time / r.reach_time);
  }
  std::printf("lambda = %g; sdpa: 1 thread, epsilonStar 1e-9, wall time; sdprl: l1, the default Xt-step and curvature scale, "
              "spectral init%s\n",
              lambda, sets.empty() ? "" : ", extra --set options given");
  return 0;
}
