// Running the `sdprl` program from a test: exit status, stdout, stderr, and the "key = value" lines
// it prints on stdout (the summary), with the plugins of the build tree.
#pragma once

#include <sys/wait.h>

#include <cmath>
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

}  // namespace sdprl::testing_support
