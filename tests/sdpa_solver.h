// Running Debian's `sdpa` program (package sdpa, an interior-point SDP solver) on a .dat-s file and
// reading its result file, for the global-optimality tests (docs/method.md check 4).
//
// SDPA's result file (checked by SdpaProgram.SignConventionsOnAHandSolvedInstance):
//   objValPrimal = c^T x          (SDPA's primal:  min c^T x,  X = sum x_i F_i - F_0 PSD)
//   objValDual   = tr(F_0 Y)      (SDPA's dual:    max tr(F_0 Y),  tr(F_i Y) = c_i, Y PSD)
//   xVec = {x_1, ..., x_m};  xMat = X;  yMat = Y
// Matrices are printed block by block: "{ {row}, {row} }" for an SDP block, "{v, v, ...}" for a
// diagonal (LP) block, all inside one pair of braces.
#pragma once

#include <unistd.h>

#include <Eigen/Dense>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_files.h"

namespace sdprl::testing_support {

// The sdpa program on PATH, or "" when it is not installed.
inline std::string find_sdpa() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / "sdpa";
    if (access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate.string();
  }
  return {};
}

struct SdpaBlock {
  bool diagonal = false;
  Eigen::MatrixXd dense;  // SDP block
  Eigen::VectorXd diag;   // LP block
};

struct SdpaResult {
  std::string phase;  // pdOPT, pdFEAS, ... (SDPA's phase.value)
  double primal = 0.0, dual = 0.0, relative_gap = 0.0;
  Eigen::VectorXd x;
  std::vector<SdpaBlock> X, Y;
  std::string error;  // non-empty when the run or the parse failed
};

// Parses "{ {..}, {..} } {..}" (the inside of xMat/yMat = { ... }) into blocks.
inline std::vector<SdpaBlock> parse_sdpa_blocks(const std::string& text, std::size_t& pos) {
  std::vector<SdpaBlock> blocks;
  std::vector<std::vector<double>> rows;
  std::vector<double> values, row;
  int depth = 0;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    const double v = std::stod(token);
    (depth == 3 ? row : values).push_back(v);
    token.clear();
  };
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '{') {
      flush();
      ++depth;
      if (depth == 2) rows.clear(), values.clear();
      if (depth == 3) row.clear();
    } else if (c == '}') {
      flush();
      if (depth == 3) rows.push_back(row);
      if (depth == 2) {
        SdpaBlock b;
        if (!rows.empty()) {
          b.dense.resize(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
          for (std::size_t i = 0; i < rows.size(); ++i)
            for (std::size_t j = 0; j < rows[i].size(); ++j)
              b.dense(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = rows[i][j];
        } else {
          b.diagonal = true;
          b.diag = Eigen::Map<Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
        }
        blocks.push_back(std::move(b));
      }
      if (--depth == 0) {
        ++pos;
        break;
      }
    } else if (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      flush();
    } else {
      token += c;
    }
  }
  return blocks;
}

// Solves `data` with the sdpa program (parameters: epsilonStar = 1e-9 and full-precision
// printing; one thread), its output going to `dir`.
inline SdpaResult run_sdpa(const std::string& sdpa, const std::filesystem::path& data, const std::filesystem::path& dir) {
  SdpaResult r;
  const auto param = dir / (data.stem().string() + ".param");
  const auto out = dir / (data.stem().string() + ".out");
  {
    std::ofstream p(param);
    p << "200 unsigned int maxIteration;\n1.0E-9 double 0.0 < epsilonStar;\n1.0E2 double 0.0 < lambdaStar;\n"
         "2.0 double 1.0 < omegaStar;\n-1.0E5 double lowerBound;\n1.0E5 double upperBound;\n"
         "0.1 double 0.0 <= betaStar < 1.0;\n0.2 double 0.0 <= betaBar < 1.0, betaStar <= betaBar;\n"
         "0.9 double 0.0 < gammaStar < 1.0;\n1.0E-9 double 0.0 < epsilonDash;\n"
         "%+.17e char* xPrint\n%+.17e char* XPrint\n%+.17e char* YPrint\n%+.17e char* infPrint\n";
  }
  const std::string command = "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 " + shell_quote(sdpa) + " -ds " +
                              shell_quote(data.string()) + " -o " + shell_quote(out.string()) + " -p " +
                              shell_quote(param.string()) + " > " + shell_quote((dir / "sdpa.log").string()) + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    r.error = "sdpa failed: " + command;
    return r;
  }
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  auto value_after = [&](const std::string& key, std::string& word) {
    const auto k = text.find(key);
    if (k == std::string::npos) return false;
    const auto eq = text.find('=', k);
    std::istringstream rest(text.substr(eq + 1, 64));
    rest >> word;
    return true;
  };
  std::string w;
  if (!value_after("phase.value", r.phase) || !value_after("objValPrimal", w)) {
    r.error = "no phase/objValPrimal in " + out.string();
    return r;
  }
  r.primal = std::stod(w);
  value_after("objValDual", w);
  r.dual = std::stod(w);
  value_after("relative gap", w);
  r.relative_gap = std::stod(w);
  std::size_t pos = text.find("xVec =");
  if (pos == std::string::npos) {
    r.error = "no xVec in " + out.string();
    return r;
  }
  pos = text.find('{', pos);
  std::string xs = text.substr(pos + 1, text.find('}', pos) - pos - 1);
  std::vector<double> xv;
  for (char& c : xs)
    if (c == ',') c = ' ';
  std::istringstream xin(xs);
  for (double v; xin >> v;) xv.push_back(v);
  r.x = Eigen::Map<Eigen::VectorXd>(xv.data(), static_cast<Eigen::Index>(xv.size()));
  pos = text.find('{', text.find("xMat ="));
  r.X = parse_sdpa_blocks(text, pos);
  pos = text.find('{', text.find("yMat ="));
  r.Y = parse_sdpa_blocks(text, pos);
  return r;
}

}  // namespace sdprl::testing_support
