// The checkpoint file of `sdprl run` (see run/checkpoint.h for the layout).
#include "run/checkpoint.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <type_traits>

#include "sdprl/error.h"
#include "sdprl/io/atomic_file.h"

namespace sdprl::run_detail {
namespace {

constexpr char kMagic[] = "SDPRL-CHECKPOINT";  // 16 bytes, without the terminating zero
constexpr std::size_t kMagicSize = sizeof(kMagic) - 1;
// Version 1: the first format. Version 2: the ADMM state may be packed (SolverState::u): a u64
// tag (0: nu and e follow, 1: u follows) before it. Version 3: after mu, the coupled Xt-step's
// last Xt, the iterate of its preconditioner and that preconditioner's age (SolverState). Version
// 4: the surrogate's curvature scale after small_steps, and the summary's refused steps, CG
// iterations and curvature scale after its monotonicity violations. Version 5: the Xt-step's
// warm start as one opaque byte string (SolverState::xt_step_state) in place of version 3's last
// Xt, preconditioner iterate and age. Bump the version with any change of the fields below: an old
// checkpoint is then refused by name instead of misread.
constexpr std::uint32_t kVersion = 5;
constexpr std::uint64_t kByteOrderProbe = 0x0102030405060708ull;

// FNV-1a of data[0, size), continuing from `h` (the offset basis starts a new hash).
std::uint64_t fnv1a(const char* data, std::size_t size, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (std::size_t i = 0; i < size; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

// Writes raw values straight to the stream, hashing them on the way (FNV-1a, as fnv1a()): a
// checkpoint of m = 10^5 holds 23M doubles of ADMM state (46M unpacked), and a byte string of it
// beside the state lifted the run's peak memory by 0.4-0.8 GB.
class Writer {
 public:
  explicit Writer(std::ostream& os) : os_(os) {}
  void raw(const char* data, std::size_t size) {
    hash_ = fnv1a(data, size, hash_);
    os_.write(data, static_cast<std::streamsize>(size));
  }
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    raw(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void u64(std::uint64_t v) { pod(v); }
  void i64(std::int64_t v) { pod(v); }
  void f64(double v) { pod(v); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void vec(const Vector& v) {
    u64(static_cast<std::uint64_t>(v.size()));
    raw(reinterpret_cast<const char*>(v.data()), sizeof(double) * static_cast<std::size_t>(v.size()));
  }
  void mat(const Matrix& m) {
    u64(static_cast<std::uint64_t>(m.rows()));
    u64(static_cast<std::uint64_t>(m.cols()));
    raw(reinterpret_cast<const char*>(m.data()), sizeof(double) * static_cast<std::size_t>(m.size()));
  }
  // The hash of everything written so far (the file's last 8 bytes, not hashed themselves).
  std::uint64_t hash() const { return hash_; }

 private:
  std::ostream& os_;
  std::uint64_t hash_ = fnv1a(nullptr, 0);  // the offset basis
};

// Reads them back, refusing to read past the end (a length field of a damaged file must not
// allocate or read at random).
class Reader {
 public:
  Reader(const std::string& bytes, std::size_t end, std::string where)
      : bytes_(bytes), end_(end), where_(std::move(where)) {}
  template <class T>
  T pod() {
    T v;
    need(sizeof v);
    std::memcpy(&v, bytes_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  std::int64_t i64() { return pod<std::int64_t>(); }
  double f64() { return pod<double>(); }
  int i32() {
    const std::int64_t v = i64();
    if (v < INT32_MIN || v > INT32_MAX) corrupt("an integer out of range");
    return static_cast<int>(v);
  }
  std::string str() {
    const std::uint64_t n = u64();
    need(n);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  Vector vec() {
    const std::uint64_t n = u64();
    if (n > (end_ - pos_) / sizeof(double)) corrupt("a vector longer than the file");
    Vector v(static_cast<Index>(n));
    // An empty vector has data() == nullptr, which memcpy must not get even for 0 bytes (UBSan).
    if (n > 0) std::memcpy(v.data(), bytes_.data() + pos_, n * sizeof(double));
    pos_ += n * sizeof(double);
    return v;
  }
  Matrix mat() {
    const std::uint64_t rows = u64(), cols = u64();
    if (cols != 0 && rows > (end_ - pos_) / sizeof(double) / cols) corrupt("a matrix larger than the file");
    Matrix m(static_cast<Index>(rows), static_cast<Index>(cols));
    if (rows * cols > 0) std::memcpy(m.data(), bytes_.data() + pos_, rows * cols * sizeof(double));
    pos_ += rows * cols * sizeof(double);
    return m;
  }
  std::uint64_t count(const char* what) {
    const std::uint64_t n = u64();
    if (n > end_ - pos_) corrupt(std::string("a count of ") + what + " larger than the file");
    return n;
  }
  bool at_end() const { return pos_ == end_; }
  [[noreturn]] void corrupt(const std::string& what) const {
    throw Error(where_, "corrupted checkpoint: " + what + " at byte " + std::to_string(pos_) +
                            "; it cannot be resumed (start the run again)");
  }

 private:
  void need(std::uint64_t n) const {
    if (n > end_ - pos_) corrupt("the file ends inside a field");
  }
  const std::string& bytes_;
  std::size_t end_;
  std::size_t pos_ = 0;
  std::string where_;

 public:
  void skip(std::size_t n) {
    need(n);
    pos_ += n;
  }
};

void write_summary(Writer& w, const Summary& s) {
  w.i64(static_cast<std::int64_t>(s.status));
  w.str(s.message);
  w.i64(s.n);
  w.i64(s.rank);
  w.i64(s.terms);
  w.i64(s.split_terms);
  w.f64(s.rho);
  w.f64(s.weights.lambda);
  w.f64(s.weights.gamma);
  w.i64(static_cast<std::int64_t>(s.solver));
  w.i64(s.warm_start_iterations);
  w.i64(s.mm_iterations);
  w.i64(s.admm_iterations);
  w.i64(s.monotonicity_violations);
  w.i64(s.rejected_steps);
  w.i64(s.cg_iterations);
  w.f64(s.curvature_scale);
  w.f64(s.initial_objective);
  w.f64(s.final_objective);
  w.f64(s.init_time);
  w.f64(s.solve_time);
  w.u64(s.trace.size());
  for (const TraceRow& t : s.trace) {
    w.i64(t.mm_iteration);
    w.f64(t.objective);
    w.f64(t.relative_change);
    w.i64(t.admm_iterations);
    w.f64(t.gap);
    w.f64(t.tolerance);
    w.f64(t.time);
  }
  w.u64(s.metrics.size());
  for (const Metric& m : s.metrics) {
    w.str(m.name);
    w.f64(m.value);
  }
}

Summary read_summary(Reader& r) {
  Summary s;
  const std::int64_t status = r.i64();
  if (status < 0 || status > static_cast<std::int64_t>(SolverStatus::kInterrupted)) r.corrupt("an unknown status");
  s.status = static_cast<SolverStatus>(status);
  s.message = r.str();
  s.n = r.i64();
  s.rank = r.i64();
  s.terms = r.i64();
  s.split_terms = r.i64();
  s.rho = r.f64();
  s.weights.lambda = r.f64();
  s.weights.gamma = r.f64();
  const std::int64_t solver = r.i64();
  if (solver < 0 || solver > static_cast<std::int64_t>(SolverType::kLbfgs)) r.corrupt("an unknown solver type");
  s.solver = static_cast<SolverType>(solver);
  s.warm_start_iterations = r.i32();
  s.mm_iterations = r.i32();
  s.admm_iterations = r.i64();
  s.monotonicity_violations = r.i32();
  s.rejected_steps = r.i32();
  s.cg_iterations = r.i64();
  s.curvature_scale = r.f64();
  s.initial_objective = r.f64();
  s.final_objective = r.f64();
  s.init_time = r.f64();
  s.solve_time = r.f64();
  const std::uint64_t rows = r.count("trace rows");
  s.trace.resize(rows);
  for (TraceRow& t : s.trace) {
    t.mm_iteration = r.i32();
    t.objective = r.f64();
    t.relative_change = r.f64();
    t.admm_iterations = r.i32();
    t.gap = r.f64();
    t.tolerance = r.f64();
    t.time = r.f64();
  }
  const std::uint64_t metrics = r.count("metrics");
  s.metrics.resize(metrics);
  for (Metric& m : s.metrics) {
    m.name = r.str();
    m.value = r.f64();
  }
  return s;
}

}  // namespace

void write_checkpoint(const std::filesystem::path& file, const Checkpoint& c) {
  io::write_atomically(file, [&](std::ostream& os) {
    Writer w(os);
    w.raw(kMagic, kMagicSize);
    w.pod(kVersion);
    w.u64(kByteOrderProbe);
    w.str(c.model_file);
    w.str(c.model_text);
    w.u64(c.overrides.size());
    for (const auto& [key, value] : c.overrides) {
      w.str(key);
      w.str(value);
    }
    w.u64(c.plugin_paths.size());
    for (const std::string& p : c.plugin_paths) w.str(p);
    w.u64(c.trials.size());
    for (const LambdaTrial& t : c.trials) {
      w.f64(t.lambda);
      w.f64(t.validation_error);
      write_summary(w, t.summary);
    }
    w.u64(c.best);
    w.mat(c.best_X);
    w.u64(c.has_state ? 1 : 0);
    if (c.has_state) {
      const SolverState& s = c.state_ref ? *c.state_ref : c.state;
      w.i64(s.k);
      w.mat(s.X);
      w.f64(s.objective);
      w.f64(s.c0);
      w.f64(s.rho);
      w.i64(s.small_steps);
      w.f64(s.curvature_scale);
      w.u64(s.u.size() != 0 ? 1 : 0);
      if (s.u.size() != 0) {
        w.vec(s.u);
      } else {
        w.vec(s.nu);
        w.vec(s.e);
      }
      w.mat(s.Y);
      w.mat(s.mu);
      w.str(s.xt_step_state);
      write_summary(w, s.summary);
    }
    const std::uint64_t hash = w.hash();
    w.u64(hash);
  });
}

Checkpoint read_checkpoint(const std::filesystem::path& file) {
  const std::string where = file.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw Error(where, "no checkpoint to resume from: the file does not exist (a run writes it every "
                       "solver.checkpoint_interval seconds and when interrupted, and removes it when it ends)");
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail()) throw Error(where, "cannot read the checkpoint");
  const std::size_t header = kMagicSize + sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (bytes.size() < header + sizeof(std::uint64_t) || bytes.compare(0, kMagicSize, kMagic) != 0)
    throw Error(where, "not an sdprl checkpoint (expected the file to start with '" + std::string(kMagic) + "')");
  const std::size_t end = bytes.size() - sizeof(std::uint64_t);
  std::uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + end, sizeof stored);
  if (stored != fnv1a(bytes.data(), end))
    throw Error(where, "corrupted checkpoint: its checksum does not match its contents (truncated or altered); "
                       "it cannot be resumed (start the run again)");
  Reader r(bytes, end, where);
  r.skip(kMagicSize);
  const std::uint32_t version = r.pod<std::uint32_t>();
  if (version != kVersion)
    throw Error(where, "checkpoint format version " + std::to_string(version) + ", this sdprl reads version " +
                           std::to_string(kVersion) + " (written by another sdprl: resume with that one)");
  if (r.u64() != kByteOrderProbe)
    throw Error(where, "the checkpoint was written on a machine with another byte order; resume it there");

  Checkpoint c;
  c.model_file = r.str();
  c.model_text = r.str();
  const std::uint64_t overrides = r.count("overrides");
  for (std::uint64_t i = 0; i < overrides; ++i) {
    std::string key = r.str();
    std::string value = r.str();
    c.overrides.emplace_back(std::move(key), std::move(value));
  }
  const std::uint64_t paths = r.count("plugin paths");
  for (std::uint64_t i = 0; i < paths; ++i) c.plugin_paths.push_back(r.str());
  const std::uint64_t trials = r.count("lambdas");
  c.trials.resize(trials);
  for (LambdaTrial& t : c.trials) {
    t.lambda = r.f64();
    t.validation_error = r.f64();
    t.summary = read_summary(r);
  }
  c.best = r.u64();
  if (!c.trials.empty() && c.best >= c.trials.size()) r.corrupt("the best lambda's index out of range");
  c.best_X = r.mat();
  c.has_state = r.u64() != 0;
  if (c.has_state) {
    SolverState& s = c.state;
    s.k = r.i32();
    s.X = r.mat();
    s.objective = r.f64();
    s.c0 = r.f64();
    s.rho = r.f64();
    s.small_steps = r.i32();
    s.curvature_scale = r.f64();
    if (!(s.curvature_scale > 0.0 && s.curvature_scale <= 1.0)) r.corrupt("the curvature scale is not in (0, 1]");
    const std::uint64_t packed = r.u64();
    if (packed > 1) r.corrupt("the ADMM state's tag is neither 0 (nu, e) nor 1 (packed u)");
    if (packed) {
      s.u = r.vec();
    } else {
      s.nu = r.vec();
      s.e = r.vec();
    }
    s.Y = r.mat();
    s.mu = r.mat();
    s.xt_step_state = r.str();
    s.summary = read_summary(r);
  }
  if (!r.at_end()) r.corrupt("bytes after the last field");
  return c;
}

}  // namespace sdprl::run_detail
