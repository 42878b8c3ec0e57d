// The hand-differentiated distance forms (collision/distance/closed_forms.hpp) against the same forms
// evaluated with dual numbers (formJet): gradients and Hessians over the difference vectors, on random
// configurations and on near-degenerate ones. Prints the worst relative error of each form and family
// (|closed - jet| over the largest entry of the Jet's gradient or Hessian) and "ok" when all are within
// the tolerance given as the first argument. Built and run by test_distance_closed_forms.py.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "../../cpp/src/collision/distance/forms.hpp"

using namespace rigidiff;
using distance::Form;
using distance::FormCall;

namespace {

using Points = std::array<Vec3, 4>;

// the forms as the primitives call them (points 0..3: p, t0, t1, t2 or ea0, ea1, eb0, eb1)
struct Case {
  const char* name;
  FormCall call;
};
const Case kCases[] = {
    {"point-point", {Form::PointPoint, {{{0, 1}}}}},
    {"point-line", {Form::PointLine, {{{2, 1}, {0, 1}}}}},
    {"point-plane", {Form::Volume, {{{2, 1}, {3, 1}, {0, 1}}}}},
    {"line-line", {Form::Volume, {{{1, 0}, {3, 2}, {2, 0}}}}},
    {"mollifier", {Form::Mollifier, {{{1, 0}, {3, 2}}}, 0.0}},  // eps set per configuration
    {"threshold", {Form::Threshold, {{{1, 0}, {3, 2}}}, 1e-3}},
};

double worst = 0.0;

template <int M>
void compare(const char* name, const char* family, FormCall c, const Points& x, double& err_g, double& err_h) {
  const std::array<const Vec3*, 4> px = {&x[0], &x[1], &x[2], &x[3]};
  const auto jet = distance::formJet<M, 2, 4>(c, px);
  const auto closed = distance::closedFormJet<M, 2, 4>(c, px);
  const auto closed1 = distance::closedFormJet<M, 1, 4>(c, px);  // the gradient-only path
  auto rel = [](double diff, double scale) { return scale > 0.0 ? diff / scale : (diff > 0.0 ? INFINITY : 0.0); };
  const double sg = jet.g.cwiseAbs().maxCoeff(), sh = jet.h.cwiseAbs().maxCoeff();
  const double eg = std::max(rel((closed.g - jet.g).cwiseAbs().maxCoeff(), sg),
                             rel((closed1.g - jet.g).cwiseAbs().maxCoeff(), sg));
  const double eh = rel((closed.h - jet.h).cwiseAbs().maxCoeff(), sh);
  if (!(std::abs(closed.v - jet.v) <= 1e-15 * std::abs(jet.v) + 1e-300)) {
    std::printf("%s %s: values differ (%.17g, %.17g)\n", name, family, closed.v, jet.v);
    worst = INFINITY;
  }
  err_g = std::max(err_g, eg);
  err_h = std::max(err_h, eh);
}

Vec3 normal(std::mt19937_64& rng) {
  std::normal_distribution<double> n;
  return Vec3(n(rng), n(rng), n(rng));
}

// configuration families: each makes the four points from the random generator
Points random(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double scale = std::exp(u(rng));
  return {scale * normal(rng), scale * normal(rng), scale * normal(rng), scale * normal(rng)};
}

// edges (0, 1) and (2, 3) at an angle of 1e-4 to 1e-7 rad, at a distance of order one
Points nearlyParallel(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(4.0, 7.0);
  const Vec3 e = normal(rng).normalized(), off = normal(rng), tilt = e.cross(normal(rng)).normalized();
  const double angle = std::pow(10.0, -u(rng));
  const Vec3 f = (e + angle * tilt).normalized();
  return {Vec3::Zero(), e, off, off + 1.3 * f};
}

// point 0 at 1e-6 to 1e-9 of the line through points 1 and 2 (and 2, 3 for the edge-edge forms)
Points pointNearEdge(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(6.0, 9.0), t(0.1, 0.9);
  const Vec3 a = normal(rng), b = normal(rng), side = (b - a).cross(normal(rng)).normalized();
  const Vec3 p = a + t(rng) * (b - a) + std::pow(10.0, -u(rng)) * side;
  return {p, a, b, a + 0.5 * (b - a) + normal(rng)};
}

// a triangle (points 1..3) of size 1e-4 to 1e-6, the point at distance of order one
Points tinyTriangle(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(4.0, 6.0);
  const double size = std::pow(10.0, -u(rng));
  const Vec3 c = normal(rng);
  return {normal(rng), c + size * normal(rng), c + size * normal(rng), c + size * normal(rng)};
}

// random shapes of size one far from the origin (1e4 to 1e6)
Points largeCoordinates(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(4.0, 6.0);
  const Vec3 far = std::pow(10.0, u(rng)) * normal(rng).normalized();
  return {far + normal(rng), far + normal(rng), far + normal(rng), far + normal(rng)};
}

}  // namespace

int main(int argc, char** argv) {
  const double tol = argc > 1 ? std::atof(argv[1]) : 1e-12;
  const int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  struct Family {
    const char* name;
    Points (*make)(std::mt19937_64&);
  };
  const Family families[] = {{"random", random},
                             {"nearly-parallel", nearlyParallel},
                             {"point-near-edge", pointNearEdge},
                             {"tiny-triangle", tinyTriangle},
                             {"large-coordinates", largeCoordinates}};
  std::mt19937_64 rng(7);
  for (const Case& k : kCases) {
    for (const Family& f : families) {
      double eg = 0.0, eh = 0.0;
      for (int i = 0; i < n; ++i) {
        const Points x = f.make(rng);
        FormCall c = k.call;
        // the mollifier inside its band (x < eps) in half of the configurations, beyond it in the rest
        if (c.form == Form::Mollifier)
          c.parameter = (i % 2 ? 2.0 : 0.5) * (x[1] - x[0]).cross(x[3] - x[2]).squaredNorm();
        switch (distance::differenceCount(c.form)) {
          case 1: compare<1>(k.name, f.name, c, x, eg, eh); break;
          case 2: compare<2>(k.name, f.name, c, x, eg, eh); break;
          default: compare<3>(k.name, f.name, c, x, eg, eh); break;
        }
      }
      std::printf("%-12s %-18s gradient %.2e  Hessian %.2e\n", k.name, f.name, eg, eh);
      worst = std::max({worst, eg, eh});
    }
  }
  std::printf("worst %.3e (tolerance %.1e)\n", worst, tol);
  if (!(worst <= tol)) return 1;
  std::printf("ok\n");
  return 0;
}
