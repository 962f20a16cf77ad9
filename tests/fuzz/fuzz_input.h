// Shared by the fuzz targets: the input as a stream (the readers' stream overloads, so that no
// file is written per input), and the contract every reader keeps on a refusal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <istream>
#include <streambuf>

#include "sdprl/error.h"

namespace sdprl::fuzz {

// A read-only stream over the fuzzer's bytes (no copy).
class InputStream : public std::istream {
 public:
  InputStream(const std::uint8_t* data, std::size_t size) : std::istream(nullptr), buffer_(data, size) {
    rdbuf(&buffer_);
  }

 private:
  struct Buffer : std::streambuf {
    Buffer(const std::uint8_t* data, std::size_t size) {
      char* begin = const_cast<char*>(reinterpret_cast<const char*>(data));
      setg(begin, begin, begin + size);
    }
  };
  Buffer buffer_;
};

// A refusal is an sdprl::Error that says where (the input's name, at least) and what. Anything
// else (another exception type, an empty place or message) is a bug: another exception escapes
// and libFuzzer reports it ("uncaught exception"); an Error without place or message aborts.
template <class F>
void expect_clean_refusal(F&& read) {
  try {
    read();
  } catch (const sdprl::Error& e) {
    if (e.where().empty() || e.message().empty()) {
      std::fprintf(stderr, "fuzz: an Error without place or message: '%s'\n", e.what());
      std::abort();
    }
  }
}

}  // namespace sdprl::fuzz
