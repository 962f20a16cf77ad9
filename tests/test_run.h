// Running the `sdprl` program from a test: exit status, stdout, stderr, and the "key = value" lines
// it prints on stdout (the summary), with the plugins of the build tree.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_files.h"

namespace sdprl::testing_support {

inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int code = -1;
  std::string out, err;
  std::map<std::string, std::string> values;  // stdout "key = value" lines
};

// Runs SDPRL_EXECUTABLE with `args` and --plugin-path SDPRL_PLUGIN_BUILD_DIR (SDPRL_PLUGIN_PATH
// unset); stdout and stderr go through files in `dir`.
inline RunResult run_sdprl(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  static int counter = 0;
  const std::string tag = std::to_string(++counter);
  const std::filesystem::path out_file = dir / ("stdout_" + tag), err_file = dir / ("stderr_" + tag);
  std::string command = "env -u SDPRL_PLUGIN_PATH " + shell_quote(SDPRL_EXECUTABLE) + " ";
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " --plugin-path " + shell_quote(SDPRL_PLUGIN_BUILD_DIR);
  command += " >" + shell_quote(out_file.string()) + " 2>" + shell_quote(err_file.string()) + " </dev/null";
  const int status = std::system(command.c_str());
  RunResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out_file);
  r.err = read_text(err_file);
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find(" = ");
    if (eq != std::string::npos) r.values[line.substr(0, eq)] = line.substr(eq + 3);
  }
  return r;
}

// The number printed as "key = value", or a test failure and NaN.
inline double number(const RunResult& r, const std::string& key) {
  const auto it = r.values.find(key);
  if (it == r.values.end()) {
    ADD_FAILURE() << "no '" << key << " = ...' on stdout:\n" << r.out << "\nstderr:\n" << r.err;
    return std::nan("");
  }
  return std::stod(it->second);
}

// Starts SDPRL_EXECUTABLE with `args` and --plugin-path SDPRL_PLUGIN_BUILD_DIR in the background
// (SDPRL_PLUGIN_PATH unset, stdout and stderr to `stdout_file` and `stderr_file`), for the tests
// that signal a run; returns its pid. Reap it with wait_exit().
inline pid_t spawn_sdprl(const std::vector<std::string>& args, const std::filesystem::path& stdout_file,
                         const std::filesystem::path& stderr_file) {
  std::vector<std::string> argv_strings{SDPRL_EXECUTABLE};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  argv_strings.push_back("--plugin-path");
  argv_strings.push_back(SDPRL_PLUGIN_BUILD_DIR);
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::unsetenv("SDPRL_PLUGIN_PATH");
    const int out = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) ::_exit(127);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::dup2(in, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits for `pid`: its exit status, or -(signal number) when a signal ended it.
inline int wait_exit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1000;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1000;
}

// Polls every 5 ms until `file` exists (true) or process `pid` has ended or `timeout_seconds`
// passed (false). Does not reap the process.
inline bool wait_for_file(const std::filesystem::path& file, pid_t pid, double timeout_seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < timeout_seconds) {
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) return true;
    // Ended (WNOWAIT: left for wait_exit to reap)? One last look: the file may have appeared just before.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid)
      return std::filesystem::exists(file, ec);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// The numbers of a MatrixMarket array file (X.mtx), after its comments and size line.
inline std::vector<double> matrix_market_values(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<double> values;
  bool size_line = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '%') continue;
    if (size_line) {
      size_line = false;
      continue;
    }
    values.push_back(std::stod(line));
  }
  return values;
}

}  // namespace sdprl::testing_support
