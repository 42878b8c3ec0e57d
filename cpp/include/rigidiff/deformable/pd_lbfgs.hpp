// L-BFGS with a given initial inverse Hessian (the prefactorised PD matrix), the quasi-Newton iteration of
// Projective Dynamics' forward step (Liu et al. 2017; Du et al. 2021), and the Newton iterations and conjugate
// gradients of the other methods and the adjoint.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace deformable {

/// The longest step t in (0, 1] that a line search from x along d may try (e.g. the first that would invert an
/// element); empty: 1.
using StepLimit = std::function<double(const VecX& x, const VecX& d)>;

/// The value and gradient of f at the starting x, when the caller has already evaluated them.
struct Evaluated {
  double value = 0.0;
  VecX gradient;
};

struct LbfgsResult {
  int iterations = 0;
  double gradient_norm = 0.0;
  bool converged = false;
};

/// x in scientific notation, for the messages of solves that fail.
inline std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

/// Minimises f from x (updated in place) until |grad f| <= threshold. f(x, grad) returns the value and writes
/// the gradient; h0(g) applies the initial inverse Hessian. Armijo backtracking (c = 1e-4, halving) from the step
/// limit's t (1 without one). Stops
/// early, unconverged, when 50 iterations fail to halve |grad f| (a stall the caller may hand to Newton).
LbfgsResult lbfgs(const std::function<double(const VecX&, VecX&)>& f, const std::function<VecX(const VecX&)>& h0,
                  VecX& x, double threshold, int max_iterations, int history, const StepLimit& limit = {},
                  const Evaluated* at_start = nullptr);

/// Solves H x = b by conjugate gradients preconditioned by p (both applied as functions) from x = 0, until
/// |H x - b| <= tolerance |b| or max_iterations; stops at a direction of non-positive curvature. Returns the
/// iterations taken.
int preconditionedCg(const std::function<VecX(const VecX&)>& H, const std::function<VecX(const VecX&)>& p,
                     const VecX& b, VecX& x, double tolerance, int max_iterations);

/// The adjoint solve H z = b: conjugate gradients preconditioned by p from z (its start), then, where they meet
/// non-positive curvature, L-BFGS on z^T H z / 2 - b^T z from where they stopped, until |H z - b| <=
/// tolerance |b|. runtime_error naming the residual when neither gets there.
void solveAdjoint(const std::function<VecX(const VecX&)>& H, const std::function<VecX(const VecX&)>& p, const VecX& b,
                  VecX& z, double tolerance, int max_iterations, int history);

/// Newton's method on f from x until |grad f| <= threshold: direction(x, g, forcing) returns a Newton direction
/// at x for the gradient g, as an inexact solve may with the relative residual `forcing` (Eisenstat and Walker's
/// choice, never tighter than the threshold needs); a direction that does not descend is replaced by
/// -fallback(g). The line search of lbfgs.
LbfgsResult newton(const std::function<double(const VecX&, VecX&)>& f,
                   const std::function<VecX(const VecX&, const VecX&, double)>& direction,
                   const std::function<VecX(const VecX&)>& fallback, VecX& x, double threshold, int max_iterations,
                   const StepLimit& limit = {}, const Evaluated* at_start = nullptr);

}  // namespace deformable
}  // namespace rigidiff
