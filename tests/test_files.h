// Files and processes for the tests that run the program or write fixtures.
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>

namespace sdprl::testing_support {

// A fresh empty directory under the temporary directory (symlinks resolved, so that it compares
// equal to paths the program derives from /proc/self/exe), removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::canonical(std::filesystem::temp_directory_path()) /
            ("sdprl_test_" + std::to_string(getpid()) + "_" + std::to_string(stamp));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// `s` quoted for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace sdprl::testing_support
