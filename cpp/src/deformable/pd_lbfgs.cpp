// L-BFGS with the prefactorised PD matrix as its initial inverse Hessian (pd_lbfgs.hpp).
#include "rigidiff/deformable/pd_lbfgs.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

namespace rigidiff {
namespace deformable {
namespace {

// Armijo backtracking (c = 1e-4, halving) along d from x. Near the solution the change of f drowns in its
// rounding error, so where it is within a thousand roundings of f the change is measured by the trapezoid
// rule on the gradients along the step instead (exact for a quadratic, and free of cancellation).
bool lineSearch(const std::function<double(const VecX&, VecX&)>& f, const VecX& x, double fx, const VecX& d,
                double slope, VecX& x_new, double& f_new, VecX& g_new, const StepLimit& limit) {
  const double rounding = 1e3 * std::numeric_limits<double>::epsilon() * std::abs(fx);
  double t = limit ? std::min(1.0, limit(x, d)) : 1.0;
  for (int ls = 0; ls < 40; ++ls, t *= 0.5) {
    x_new = x + t * d;
    f_new = f(x_new, g_new);
    double change = f_new - fx;
    if (std::abs(change) <= rounding) change = 0.5 * t * (slope + g_new.dot(d));
    if (std::isfinite(f_new) && change <= 1e-4 * t * slope) return true;
  }
  return false;
}

}  // namespace

LbfgsResult lbfgs(const std::function<double(const VecX&, VecX&)>& f, const std::function<VecX(const VecX&)>& h0,
                  VecX& x, double threshold, int max_iterations, int history, const StepLimit& limit,
                  const Evaluated* at_start) {
  LbfgsResult result;
  VecX g(x.size()), g_new(x.size()), x_new;
  if (at_start) g = at_start->gradient;
  double fx = at_start ? at_start->value : f(x, g);
  result.gradient_norm = g.norm();
  std::deque<VecX> S, Y;
  std::deque<double> rho;
  std::vector<double> alpha;
  double checkpoint = result.gradient_norm;
  while (result.gradient_norm > threshold) {
    if (result.iterations >= max_iterations) return result;
    if (result.iterations > 0 && result.iterations % 50 == 0) {
      if (result.gradient_norm > 0.5 * checkpoint) return result;  // stalled
      checkpoint = result.gradient_norm;
    }
    ++result.iterations;
    // two-loop recursion around the initial inverse Hessian
    VecX r = g;
    alpha.assign(S.size(), 0.0);
    for (int i = static_cast<int>(S.size()) - 1; i >= 0; --i) {
      alpha[i] = rho[i] * S[i].dot(r);
      r -= alpha[i] * Y[i];
    }
    r = h0(r);
    for (std::size_t i = 0; i < S.size(); ++i) r += S[i] * (alpha[i] - rho[i] * Y[i].dot(r));
    VecX d = -r;
    double slope = g.dot(d);
    if (!(slope < 0.0)) {  // the history lost positive curvature: restart from the PD step
      S.clear(), Y.clear(), rho.clear();
      d = -h0(g);
      slope = g.dot(d);
    }
    double f_new = 0.0;
    const bool accepted = lineSearch(f, x, fx, d, slope, x_new, f_new, g_new, limit);
    if (!accepted) {
      if (S.empty()) return result;
      S.clear(), Y.clear(), rho.clear();  // stale curvature pairs (a contact switched): restart from the PD step
      continue;
    }
    const VecX s = x_new - x, y = g_new - g;
    const double sy = s.dot(y);
    if (sy > 1e-14 * s.norm() * y.norm()) {
      if (static_cast<int>(S.size()) == history) S.pop_front(), Y.pop_front(), rho.pop_front();
      S.push_back(s), Y.push_back(y), rho.push_back(1.0 / sy);
    }
    x.swap(x_new);
    g.swap(g_new);
    fx = f_new;
    result.gradient_norm = g.norm();
  }
  result.converged = true;
  return result;
}

int preconditionedCg(const std::function<VecX(const VecX&)>& H, const std::function<VecX(const VecX&)>& p,
                     const VecX& b, VecX& x, double tolerance, int max_iterations) {
  x.setZero(b.size());
  VecX r = b, z = p(r), d = z;
  double rz = r.dot(z);
  const double target = tolerance * b.norm();
  int it = 0;
  while (it < max_iterations && r.norm() > target) {
    const VecX Hd = H(d);
    const double curvature = d.dot(Hd);
    if (!(curvature > 0.0)) {
      if (it == 0) x = z;  // no curvature information yet: the preconditioned residual is a descent direction
      break;
    }
    const double alpha = rz / curvature;
    x += alpha * d;
    r -= alpha * Hd;
    z = p(r);
    const double rz_new = r.dot(z);
    d = z + (rz_new / rz) * d;
    rz = rz_new;
    ++it;
  }
  return it;
}

LbfgsResult newton(const std::function<double(const VecX&, VecX&)>& f,
                   const std::function<VecX(const VecX&, const VecX&, double)>& direction,
                   const std::function<VecX(const VecX&)>& fallback, VecX& x, double threshold, int max_iterations,
                   const StepLimit& limit, const Evaluated* at_start) {
  LbfgsResult result;
  VecX g, g_new, x_new, d;
  if (at_start) g = at_start->gradient;
  double fx = at_start ? at_start->value : f(x, g);
  result.gradient_norm = g.norm();
  const double start_norm = result.gradient_norm;
  while (result.gradient_norm > threshold) {
    if (result.iterations >= max_iterations) return result;
    ++result.iterations;
    // inexact Newton: the linear solve is as accurate as the progress so far warrants (superlinear
    // convergence), and never more than the threshold needs
    const double forcing = std::max(std::min(0.1, std::sqrt(result.gradient_norm / start_norm)),
                                    0.1 * threshold / result.gradient_norm);
    d = direction(x, g, std::max(forcing, 1e-12));
    double slope = g.dot(d);
    if (!(slope < 0.0)) {
      d = -fallback(g);
      slope = g.dot(d);
    }
    double f_new = 0.0;
    if (!lineSearch(f, x, fx, d, slope, x_new, f_new, g_new, limit)) return result;
    x.swap(x_new);
    g.swap(g_new);
    fx = f_new;
    result.gradient_norm = g.norm();
  }
  result.converged = true;
  return result;
}

void solveAdjoint(const std::function<VecX(const VecX&)>& H, const std::function<VecX(const VecX&)>& p, const VecX& b,
                  VecX& z, double tolerance, int max_iterations, int history) {
  const double b_norm = b.norm(), target = tolerance * b_norm;
  if (z.size() != b.size()) z.setZero(b.size());
  if (!(b_norm > 0.0)) {
    z.setZero();
    return;
  }
  int iterations = 0;
  double residual = (H(z) - b).norm();  // a direct solve's answer is kept where it is accurate enough
  if (!(residual <= target)) {
    iterations = preconditionedCg(H, p, b, z, tolerance, max_iterations);
    residual = (H(z) - b).norm();
  }
  if (!(residual <= target)) {
    auto quadratic = [&](const VecX& x, VecX& g) {
      g = H(x) - b;
      return 0.5 * x.dot(g - b);
    };
    const LbfgsResult r = lbfgs(quadratic, p, z, target, max_iterations, history);
    iterations += r.iterations;
    residual = r.gradient_norm;
  }
  if (!(residual <= target))
    throw std::runtime_error("the projective adjoint did not converge: |H z - b| = " + sci(residual) + " is " +
                             sci(residual / b_norm) + " of |b| after " + std::to_string(iterations) + " iterations");
}

}  // namespace deformable
}  // namespace rigidiff
