// The checkpoint file of `sdprl run` (see run/checkpoint.h for the layout).
#include "run/checkpoint.h"

#include <cmath>
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
// checkpoint is then refused by name instead of misread. Version 6: the summary's stationarity and
// finishing step after its solve time, and the state's tight flag after its curvature scale.
// Version 7: the summary's rank staircase (rank_raises) after its metrics. Version 8: the summary's
// over-relaxed steps after its finishing step. Version 9: each trace row's curvature scale and rho
// after its time. Version 10: the state's tau trial (reference, not before) after its tight flag, and
// the summary's undone tau trials after its over-relaxed steps. Version 11: NPKL's auto runs hold
// the exact surrogate's multipliers; version 12: CMVU's too, version 13: SNMF's (same fields,
// other meaning). Version 14: the last finished lambda's factor after the best one's.
constexpr std::uint32_t kVersion = 14;
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

  // The vocabulary of checkpoint_fields(), shared with Reader: int and Index as i64.
  void field(const double& v) { f64(v); }
  void field(const std::int64_t& v) { i64(v); }
  void field(const int& v) { i64(v); }
  void field(const std::uint64_t& v) { u64(v); }
  void field(const std::string& v) { str(v); }
  void field(const Vector& v) { vec(v); }
  void field(const Matrix& v) { mat(v); }
  void flag(const bool& v) { u64(v ? 1 : 0); }
  template <class... T>
  void fields(const T&... v) {
    (field(v), ...);
  }
  template <class E>
  void enumeration(const E& v, E /*last*/, const char* /*what*/) {
    i64(static_cast<std::int64_t>(v));
  }
  template <class T, class Each>
  void sequence(const std::vector<T>& items, const char* /*what*/, Each&& each) {
    u64(items.size());
    for (const T& item : items) each(item);
  }
  void check(bool /*ok*/, const char* /*what*/) {}

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

  // The vocabulary of checkpoint_fields(), shared with Writer; reading checks what it can.
  void field(double& v) { v = f64(); }
  void field(std::int64_t& v) { v = i64(); }
  void field(int& v) { v = i32(); }
  void field(std::uint64_t& v) { v = u64(); }
  void field(std::string& v) { v = str(); }
  void field(Vector& v) { v = vec(); }
  void field(Matrix& v) { v = mat(); }
  void flag(bool& v) { v = u64() != 0; }
  template <class... T>
  void fields(T&... v) {
    (field(v), ...);
  }
  template <class E>
  void enumeration(E& v, E last, const char* what) {
    const std::int64_t x = i64();
    if (x < 0 || x > static_cast<std::int64_t>(last)) corrupt(what);
    v = static_cast<E>(x);
  }
  template <class T, class Each>
  void sequence(std::vector<T>& items, const char* what, Each&& each) {
    items.resize(count(what));
    for (T& item : items) each(item);
  }
  void check(bool ok, const char* what) const {
    if (!ok) corrupt(what);
  }
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

// One list of the fields, in file order, for writing (Io = Writer, const objects) and reading
// (Io = Reader): the two directions cannot disagree. Changing it changes the format (kVersion).
template <class Io, class S>
void summary_fields(Io& io, S& s) {
  io.enumeration(s.status, SolverStatus::kOptimal, "an unknown status");
  io.fields(s.message, s.n, s.rank, s.terms, s.split_terms, s.rho, s.weights.lambda, s.weights.gamma);
  io.enumeration(s.solver, SolverType::kInteriorPoint, "an unknown solver type");
  io.fields(s.warm_start_iterations, s.mm_iterations, s.admm_iterations, s.monotonicity_violations, s.rejected_steps,
            s.cg_iterations, s.curvature_scale, s.initial_objective, s.final_objective, s.init_time, s.solve_time,
            s.stationarity, s.finishing_step, s.overrelaxed_steps, s.undone_tau_trials);
  io.check(s.undone_tau_trials >= 0, "the count of undone tau trials is negative");
  io.sequence(s.trace, "trace rows", [&](auto& t) {
    io.fields(t.mm_iteration, t.objective, t.relative_change, t.admm_iterations, t.gap, t.tolerance, t.time,
              t.curvature_scale, t.rho);
  });
  io.sequence(s.metrics, "metrics", [&](auto& m) { io.fields(m.name, m.value); });
  io.sequence(s.rank_raises, "rank raises", [&](auto& r) {
    io.fields(r.mm_iteration, r.from, r.to, r.lambda_min, r.objective_before, r.objective);
  });
}

template <class Io, class S>
void state_fields(Io& io, S& s) {
  io.fields(s.k, s.X, s.objective, s.c0, s.rho, s.small_steps, s.curvature_scale);
  io.flag(s.tight);
  io.fields(s.tau_trial.reference, s.tau_trial.not_before);
  // (reference < 0: the trial's first step comes next, unjudged; > 0: its second, judged.)
  io.check(std::isfinite(s.tau_trial.reference) && s.tau_trial.not_before >= 0,
           "the tau trial's reference gain is not finite or its first step is negative");
  io.check(s.curvature_scale > 0.0 && s.curvature_scale <= 1.0, "the curvature scale is not in (0, 1]");
  // The ADMM state: 1 and u packed, or 0 and nu, e (AdmmState::u).
  std::uint64_t packed = s.u.size() != 0 ? 1 : 0;
  io.field(packed);
  io.check(packed <= 1, "the ADMM state's tag is neither 0 (nu, e) nor 1 (packed u)");
  if (packed) {
    io.field(s.u);
  } else {
    io.fields(s.nu, s.e);
  }
  io.fields(s.Y, s.mu, s.xt_step_state);
  summary_fields(io, s.summary);
}

// Everything after the header (magic, version, byte-order probe) and before the checksum.
template <class Io, class C>
void checkpoint_fields(Io& io, C& c) {
  io.fields(c.model_file, c.model_text);
  io.sequence(c.overrides, "overrides", [&](auto& kv) { io.fields(kv.first, kv.second); });
  io.sequence(c.plugin_paths, "plugin paths", [&](auto& path) { io.field(path); });
  io.sequence(c.trials, "lambdas", [&](auto& t) {
    io.fields(t.lambda, t.validation_error);
    summary_fields(io, t.summary);
  });
  io.field(c.best);
  io.check(c.trials.empty() || c.best < c.trials.size(), "the best lambda's index out of range");
  io.field(c.best_X);
  io.field(c.last_X);
  io.flag(c.has_state);
}

}  // namespace

void write_checkpoint(const std::filesystem::path& file, const Checkpoint& c) {
  io::write_atomically(file, [&](std::ostream& os) {
    Writer w(os);
    w.raw(kMagic, kMagicSize);
    w.pod(kVersion);
    w.u64(kByteOrderProbe);
    checkpoint_fields(w, c);
    if (c.has_state) state_fields(w, c.state_ref ? *c.state_ref : c.state);
    const std::uint64_t hash = w.hash();
    w.u64(hash);
  });
}

Checkpoint read_checkpoint(const std::filesystem::path& file) {
  const std::string where = file.string();
  std::error_code ec;
  if (std::filesystem::exists(file, ec) && !std::filesystem::is_regular_file(file, ec))
    throw Error(where, "is not a regular file; expected sdprl's checkpoint there");
  if (!std::filesystem::is_regular_file(file, ec))
    throw Error(where, "no checkpoint to resume from: the file does not exist (a run writes it every "
                       "solver.checkpoint_interval seconds and when interrupted, and removes it when it ends)");
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail()) throw Error(where, "cannot read the checkpoint");
  const std::size_t header = kMagicSize + sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (bytes.compare(0, kMagicSize, kMagic) != 0)
    throw Error(where, "not an sdprl checkpoint (expected the file to start with '" + std::string(kMagic) + "')");
  if (bytes.size() < header + sizeof(std::uint64_t))
    throw Error(where, "corrupted checkpoint: truncated after " + std::to_string(bytes.size()) +
                           " bytes; it cannot be resumed (start the run again)");
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
  checkpoint_fields(r, c);
  if (c.has_state) state_fields(r, c.state);
  if (!r.at_end()) r.corrupt("bytes after the last field");
  return c;
}

}  // namespace sdprl::run_detail
