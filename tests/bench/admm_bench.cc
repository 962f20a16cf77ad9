// Cost of the sparse path (docs/method.md section 4; issue #8): one ADMM iteration and one MM step on
// the paper's synthetic matrix-completion instance (rank 5, s = 2, o = 0.05, sigma = 10) at
// m = 2000, 10000, 100000 with the row-split Xt-step, on 1 and 2 threads, fused row pass
// (admm/row_kernel.h) and generic three-pass path side by side; and a streaming copy that measures
// this machine's memory bandwidth in the same run. One ADMM iteration is O(nnz r + n r^2), so the
// time per observation should stay flat as m grows (nnz ~ s r m ln m).
//
//   build/bin/admm_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   tools/bench/perf_report   (runs this, the full solves and prints the ratios)
//
// Counters: observations (terms), split_terms, admm_iterations (per MM step), ns_per_obs (wall
// time of one benchmark iteration in ns / observations), floor_bytes (the floor for one
// ADMM iteration: observations (r + 3) 8 bytes) and floor_GBps (floor_bytes / time: the bandwidth
// the iteration would need if it moved only those bytes; compare with BM_StreamCopy's bytes_per_second).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <map>
#include <memory>
#include <utility>

#include "sdprl/completion/synthetic.h"
#include "sdprl/loss.h"
#include "sdprl/l1_loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"
#include "admm/admm.h"
#include "mm/certificate.h"
#include "mm/surrogate.h"
#include "sdprl/terms/entry_terms.h"

namespace {

using sdprl::L1Loss;  // the loss of plugins/losses/l1, so that the benchmark needs no plugin

constexpr sdprl::Index kRank = 5;
using Clock = std::chrono::steady_clock;

// One instance with everything an MM step needs, at the spectral start X0.
struct Instance {
  sdprl::Model model;
  L1Loss loss;
  sdprl::RegularizationWeights weights{1.0, 0.0};
  sdprl::SolverOptions options;
  sdprl::Matrix X0;
  std::unique_ptr<sdprl::Surrogate> surrogate;
  std::unique_ptr<sdprl::Admm> admm;          // fused row pass
  std::unique_ptr<sdprl::Admm> admm_generic;  // xt_step::Paths{false, false}: the generic path
  double eps1 = 0.0;  // eps_1 = c0 / 1^b0 with c0 = F(X0): the first MM step's ADMM tolerance
};

// Generated once per m and kept for the whole run (m = 100000 has about 11.5M observations).
Instance& instance(std::int64_t m) {
  static std::map<std::int64_t, std::unique_ptr<Instance>> cache;
  auto& slot = cache[m];
  if (slot) return *slot;
  slot = std::make_unique<Instance>();
  Instance& in = *slot;

  sdprl::mc::SyntheticSpec spec;
  spec.m = m;
  spec.rank = kRank;
  spec.s = 2.0;
  spec.outlier_fraction = 0.05;
  spec.outlier_magnitude = 10.0;
  spec.seed = 1;
  spec.eval_samples = 1000;
  sdprl::mc::SyntheticInstance data = sdprl::mc::generate(spec);
  sdprl::Vector targets =
      Eigen::Map<const sdprl::Vector>(data.observed.values.data(), static_cast<sdprl::Index>(data.observed.values.size()));
  in.model.application = "matrix-completion";
  in.model.default_rank = kRank;
  in.model.terms = std::make_shared<sdprl::EntryTerms>(m, std::move(data.observed.rows), std::move(data.observed.cols),
                                                        std::move(targets));
  data = sdprl::mc::SyntheticInstance();  // free the generator's copies

  in.options.rank = kRank;
  in.options.verbose = false;
  in.options.init = sdprl::InitKind::kSpectral;
  in.options.admm.split = sdprl::SplitMode::kRowSplit;
  sdprl::initialize(in.model, in.options, kRank, in.X0);

  in.surrogate = std::make_unique<sdprl::Surrogate>(in.model, in.loss, in.weights, in.options.admm.split, kRank);
  in.surrogate->update(in.X0);
  in.admm = std::make_unique<sdprl::Admm>(*in.surrogate, sdprl::automatic_rho(in.loss, in.options.admm),
                                          in.options.admm);
  in.admm->prepare();
  in.admm_generic = std::make_unique<sdprl::Admm>(*in.surrogate, sdprl::automatic_rho(in.loss, in.options.admm),
                                                  in.options.admm, sdprl::xt_step::Paths{false, false});
  in.admm_generic->prepare();
  in.eps1 = std::max(in.options.admm.min_tolerance, std::max(std::abs(in.surrogate->center_objective()), 1e-12));
  return in;
}

// The counters of one run; `seconds` is the wall time of the timed loop (the benchmark's real
// time), so ns_per_obs = real time per iteration / observations.
void set_counters(benchmark::State& state, const Instance& in, double seconds) {
  const double obs = static_cast<double>(in.model.terms->size());
  state.counters["observations"] = obs;
  state.counters["split_terms"] = static_cast<double>(in.surrogate->split_terms());
  const double iterations = static_cast<double>(state.iterations());
  state.counters["ns_per_obs"] = iterations > 0 ? 1e9 * seconds / (iterations * obs) : 0.0;
  const double floor_bytes = obs * static_cast<double>(kRank + 3) * 8.0;
  state.counters["floor_bytes"] = floor_bytes;
  state.counters["floor_GBps"] = seconds > 0 ? floor_bytes * iterations / seconds / 1e9 : 0.0;
  state.counters["threads"] = sdprl::set_threads(static_cast<int>(state.range(1)));
}

// Arguments: m, threads, fused (1) or generic (0). Sets the thread count before the timed loop.
sdprl::Admm& admm_of(benchmark::State& state, Instance& in) {
  sdprl::set_threads(static_cast<int>(state.range(1)));
  return state.range(2) ? *in.admm : *in.admm_generic;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One ADMM iteration (Xt-, e-, nu-step and the duality gap) on the surrogate at X0.
void BM_AdmmIteration(benchmark::State& state) {
  Instance& in = instance(state.range(0));
  sdprl::Admm& admm = admm_of(state, in);
  // The MM-step benchmark rebuilds the surrogate at X0 too, so both see the same H.
  in.surrogate->update(in.X0);
  admm.prepare();
  if (!admm.direct()) {
    state.SkipWithError("the row-split Xt-step is not direct for this instance");
    return;
  }
  sdprl::AdmmState st;
  st.keep_packed = true;  // as the MM solver keeps it (fused row pass: u instead of nu and e)
  admm.reset_if_needed(st);
  // Untimed warm-up: sizes (and first-touches) every buffer of the state and the ADMM scratch,
  // so that the timed iterations measure the steady state, not page faults.
  admm.iterate(st, in.eps1);
  const auto t0 = Clock::now();
  for (auto _ : state) {
    admm.iterate(st, in.eps1);
    benchmark::DoNotOptimize(st.gap);
  }
  const double seconds = seconds_since(t0);
  if (!std::isfinite(st.gap)) state.SkipWithError("non-finite duality gap");
  set_counters(state, in, seconds);
}

// One MM step: H rebuilt at X0, the Xt-step factored, the ADMM run to eps_1 from a cold state
// (fused: the rebuild and the first ADMM iteration in one pass over the rows, as in the solver).
void BM_MmStep(benchmark::State& state) {
  Instance& in = instance(state.range(0));
  sdprl::Admm& admm = admm_of(state, in);
  sdprl::AdmmState st;
  st.keep_packed = true;  // as the MM solver keeps it
  auto step = [&] {
    admm.reset_if_needed(st);
    // A cold state: nu = e = 0, i.e. u = 0 when packed.
    if (st.packed()) {
      st.u.setZero();
    } else {
      st.e.setZero();
      st.nu.setZero();
    }
    // The fused pass as the solver runs it: the rebuild with the first ADMM iteration inside
    // (Admm::update_and_iterate), then the rest of the ADMM.
    if (state.range(2) && admm.update_and_iterate(*in.surrogate, in.X0, st)) return admm.run(st, in.eps1);
    in.surrogate->update(in.X0);
    admm.prepare();
    st.D.setZero();
    return admm.run(st, in.eps1);
  };
  step();  // untimed warm-up, as in BM_AdmmIteration
  long admm_iterations = 0;
  const auto t0 = Clock::now();
  for (auto _ : state) {
    admm_iterations += step();
    benchmark::DoNotOptimize(st.D.data());
  }
  const double seconds = seconds_since(t0);
  if (!std::isfinite(st.gap)) state.SkipWithError("non-finite duality gap");
  set_counters(state, in, seconds);
  state.counters["admm_iterations"] = benchmark::Counter(static_cast<double>(admm_iterations),
                                                         benchmark::Counter::kAvgIterations);
}

// The coupled Xt-step's CG product P*(P(D)) (without the diagonal 2B D), the bulk of an MM step of
// the l1 problem that sdpa_compare measures (80% of its time at n = 300, rank 112): the entry
// terms of the synthetic instance at m = n, rank r, a random X_k and D, one thread. Counter
// GFlops: 8 r flops per term (two dot products for P, two multiply-adds per term for P*).
void BM_CoupledMaps(benchmark::State& state) {
  const sdprl::Index n = state.range(0), r = state.range(1);
  sdprl::mc::SyntheticSpec spec;
  spec.m = n;
  spec.seed = 1;
  sdprl::mc::SyntheticInstance data = sdprl::mc::generate(spec);
  sdprl::Vector targets =
      Eigen::Map<const sdprl::Vector>(data.observed.values.data(), static_cast<sdprl::Index>(data.observed.values.size()));
  sdprl::Model model;
  model.terms = std::make_shared<sdprl::EntryTerms>(n, std::move(data.observed.rows), std::move(data.observed.cols),
                                                     std::move(targets));
  L1Loss loss;
  sdprl::Surrogate surrogate(model, loss, {1.0, 0.0}, sdprl::SplitMode::kCoupled, r);
  std::srand(7);
  const sdprl::Matrix X = sdprl::Matrix::Random(n, r), D = sdprl::Matrix::Random(n, r);
  surrogate.update(X);
  sdprl::set_threads(1);
  const sdprl::TermLinearization& lin = surrogate.linearization();
  sdprl::Vector pd;
  sdprl::Matrix out;
  lin.apply(D, pd);  // warm-up: sizes the outputs
  lin.apply_adjoint(pd, out);
  for (auto _ : state) {
    lin.apply(D, pd);
    lin.apply_adjoint(pd, out);
    benchmark::DoNotOptimize(out.data());
  }
  const double terms = static_cast<double>(model.terms->size());
  state.counters["terms"] = terms;
  state.counters["GFlops"] = benchmark::Counter(8.0 * static_cast<double>(r) * terms * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// One evaluation of the terms' values <Q_h, X X^T> at X0: the objective of every MM step's
// acceptance and the certificate's residuals. Arguments: m, threads.
void BM_EvaluateTerms(benchmark::State& state) {
  Instance& in = instance(state.range(0));
  sdprl::set_threads(static_cast<int>(state.range(1)));
  sdprl::Vector values;
  in.model.terms->evaluate(in.X0, values);  // warm-up: sizes the output
  const auto t0 = Clock::now();
  for (auto _ : state) {
    in.model.terms->evaluate(in.X0, values);
    benchmark::DoNotOptimize(values.data());
  }
  set_counters(state, in, seconds_since(t0));
}

// The end-of-run certificate (mm/certificate.h; issue #26 bounds it at 5% of the solve) at X0 with
// y = sign(r): residuals, weights, lambda_min(S(y)) by Lanczos. Arguments: m, threads.
void BM_Certificate(benchmark::State& state) {
  Instance& in = instance(state.range(0));
  sdprl::set_threads(static_cast<int>(state.range(1)));
  const auto t0 = Clock::now();
  double gap = 0.0;
  for (auto _ : state) {
    gap = sdprl::mm::certify(in.model, in.loss, in.weights, in.X0, sdprl::Vector()).relative_gap;
    benchmark::DoNotOptimize(gap);
  }
  if (!std::isfinite(gap)) state.SkipWithError("no certificate");
  set_counters(state, in, seconds_since(t0));
}

// The machine's streaming bandwidth, measured beside the kernels: a 256 MB copy (read + write).
void BM_StreamCopy(benchmark::State& state) {
  const std::size_t n = std::size_t{1} << 25;  // doubles
  std::vector<double> a(n, 1.0), b(n, 0.0);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), n * sizeof(double));
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * n * sizeof(double)));
}

void kernel_arguments(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "threads", "fused"});
  for (const std::int64_t m : {2000, 10000, 100000})
    for (const std::int64_t threads : {1, 2})
      for (const std::int64_t fused : {1, 0}) b->Args({m, threads, fused});
}

BENCHMARK(BM_StreamCopy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AdmmIteration)->Apply(kernel_arguments)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MmStep)->Apply(kernel_arguments)->Unit(benchmark::kMillisecond)->UseRealTime();
void term_pass_arguments(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "threads"});
  for (const std::int64_t m : {2000, 100000})
    for (const std::int64_t threads : {1, 2}) b->Args({m, threads});
}
BENCHMARK(BM_EvaluateTerms)->Apply(term_pass_arguments)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Certificate)->Apply(term_pass_arguments)->Unit(benchmark::kMillisecond)->UseRealTime();
// n, r: the ranks of sdpa's solutions at lambda = 1 (docs/performance.md, "Against an interior-point solver").
BENCHMARK(BM_CoupledMaps)->ArgNames({"n", "r"})->Args({100, 60})->Args({300, 112})->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
