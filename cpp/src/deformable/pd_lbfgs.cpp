// L-BFGS with the prefactorised PD matrix as its initial inverse Hessian (pd_lbfgs.hpp).
#include "rigidiff/deformable/pd_lbfgs.hpp"

#include <cmath>
#include <deque>
#include <limits>

namespace rigidiff {
namespace deformable {

LbfgsResult lbfgs(const std::function<double(const VecX&, VecX&)>& f, const std::function<VecX(const VecX&)>& h0,
                  VecX& x, double threshold, int max_iterations, int history) {
  LbfgsResult result;
  VecX g(x.size()), g_new(x.size()), x_new;
  double fx = f(x, g);
  result.gradient_norm = g.norm();
  std::deque<VecX> S, Y;
  std::deque<double> rho;
  std::vector<double> alpha;
  while (result.gradient_norm > threshold) {
    if (result.iterations >= max_iterations) return result;
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
    // Armijo backtracking; a rounding allowance lets the last digits of f settle
    const double allowance = 16.0 * std::numeric_limits<double>::epsilon() * std::abs(fx);
    double t = 1.0, f_new = 0.0;
    bool accepted = false;
    for (int ls = 0; ls < 40 && !accepted; ++ls, t *= 0.5) {
      x_new = x + t * d;
      f_new = f(x_new, g_new);
      accepted = std::isfinite(f_new) && f_new <= fx + 1e-4 * t * slope + allowance;
    }
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

}  // namespace deformable
}  // namespace rigidiff
