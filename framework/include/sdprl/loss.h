// Loss: the robust function phi applied to the absolute residual |<X, Q X> - t| of every term.
//
// The MM solver (docs/method.md section 2, paper Assumption 3) needs phi and phi' on [0, inf) and
// nothing else: phi(0) = 0, phi increasing and concave, phi' finite and positive. Implementations
// document their formula and their values at zero in the header comment, as Ceres does.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API Loss {
 public:
  virtual ~Loss();

  // The plugin name, e.g. "l1" or "leaky-mcp".
  virtual std::string name() const = 0;
  // phi(a) for a >= 0.
  virtual double value(double a) const = 0;
  // phi'(a) for a >= 0 (right derivative at 0). This is the MM weight w = phi'(|r|).
  virtual double derivative(double a) const = 0;
  // The parameters as (name, value) pairs, for reports.
  virtual std::vector<std::pair<std::string, double>> parameters() const;

  // Batched form used by the solver: phi and phi' of every entry of `a` (both outputs resized).
  // The default loops over value() and derivative(); override when a vectorised form is faster.
  // Called from several threads at once (the solver's row loops): keep it free of shared mutable
  // state, as value() and derivative() are.
  virtual void evaluate(const Vector& a, Vector& phi, Vector& dphi) const;
};

// The batched evaluate() of a final loss class L from its own value() and derivative(), called
// without virtual dispatch so that they inline (the default makes two virtual calls per entry: a
// tenth of an MM step at m = 10^5). A loss overrides evaluate() with it in one line:
//   void evaluate(const Vector& a, Vector& phi, Vector& dphi) const override { evaluate_inline(*this, a, phi, dphi); }
template <class L>
void evaluate_inline(const L& loss, const Vector& a, Vector& phi, Vector& dphi) {
  static_assert(std::is_final_v<L>, "evaluate_inline needs the final loss class, so that its calls do not dispatch");
  phi.resize(a.size());
  dphi.resize(a.size());
  for (Index k = 0; k < a.size(); ++k) {
    phi[k] = loss.L::value(a[k]);
    dphi[k] = loss.L::derivative(a[k]);
  }
}

}  // namespace sdprl
