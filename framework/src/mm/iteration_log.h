// Internal (not installed): the MM loop's iteration table on stderr, in the manner of OSQP's
// (SolverOptions::verbose, print_every; docs/results-files.md).
#pragma once

#include <cstdio>

#include "sdprl/loss.h"
#include "sdprl/solver.h"

namespace sdprl::mm {

class IterationLog {
 public:
  IterationLog(const SolverOptions& options, const Loss& loss) : verbose_(options.verbose), every_(options.print_every), loss_(loss) {}

  // The header, once. It shows the rho used: with the automatic rho it waits for the end of the
  // first MM step, which fixes it (or for a refused first step, whose line it heads).
  void header(const Summary& s) {
    if (verbose_ && !header_printed_)
      std::fprintf(stderr,
                   "-------------------------------------------------------------------------------\n"
                   "  sdprl: SDP-RL, MM + ADMM (docs/method.md)\n"
                   "  n = %ld, rank = %ld, terms = %ld (split terms %ld), loss = %s\n"
                   "  lambda = %.3g, gamma = %.3g, rho = %.3g\n"
                   "-------------------------------------------------------------------------------\n"
                   " iter    objective   rel.change   admm        gap      eps_k      time\n",
                   static_cast<long>(s.n), static_cast<long>(s.rank), static_cast<long>(s.terms),
                   static_cast<long>(s.split_terms), loss_.name().c_str(), s.weights.lambda, s.weights.gamma,
                   s.rho);
    header_printed_ = true;
  }

  // An accepted MM step (the first and every print_every-th).
  void step(const Summary& s, const TraceRow& row) {
    header(s);
    if (verbose_ && (row.mm_iteration == 1 || row.mm_iteration % every_ == 0)) print(row);
  }

  void refused(const Summary& s, int k, double f_next, double surrogate_value, double tau, double raised) {
    header(s);
    if (verbose_)
      std::fprintf(stderr, "%5d step refused: F(X_k + Xt) = %.6e > H(Xt) = %.6e; curvature scale %g -> %g\n", k,
                   f_next, surrogate_value, tau, raised);
  }

  // The automatic tau's trial of a halved tau failed at step k (MmLoop::judge).
  void undone(const Summary& s, int k, double f_next, double tau, double raised) {
    header(s);
    if (verbose_)
      std::fprintf(stderr,
                   "%5d step undone: F(X_k + Xt) = %.6e, less gain per ADMM iteration than at tau = %g; "
                   "curvature scale %g -> %g\n",
                   k, f_next, raised, tau, raised);
  }

  // xt_step = "auto": the row-split steps stalled at step k - 1; the exact surrogate from step k.
  void switched(int k, double rho) {
    if (verbose_)
      std::fprintf(stderr, "%5d row-split steps stalled: the exact surrogate (coupled Xt-step) from here, rho = %.3g\n",
                   k, rho);
  }

  void raised(int k, const RankRaise& step) {
    if (verbose_)
      std::fprintf(stderr,
                   "%5d converged at rank %ld, lambda_min(S) = %.2e < 0: rank %ld from here (F = %.6e)\n", k,
                   static_cast<long>(step.from), step.lambda_min, static_cast<long>(step.to), step.objective);
  }

  // The last step's row when print_every skipped it, and the summary line.
  void finish(const Summary& s) {
    if (!verbose_) return;
    if (!s.trace.empty() && s.trace.back().mm_iteration % every_ != 0 && s.trace.back().mm_iteration != 1)
      print(s.trace.back());
    std::fprintf(stderr, "%s\n", s.brief_report().c_str());
  }

 private:
  static void print(const TraceRow& t) {
    std::fprintf(stderr, "%5d  %11.6e  %10.3e  %5d  %10.3e  %9.2e  %7.2fs\n", t.mm_iteration, t.objective,
                 t.relative_change, t.admm_iterations, t.gap, t.tolerance, t.time);
  }
  bool verbose_;
  int every_;
  const Loss& loss_;
  bool header_printed_ = false;
};
}  // namespace sdprl::mm
