// The inversion-free step of a line search for bodies with the neo-Hookean energy (pd_step.hpp). Its barrier
// on det F keeps a continuous path from inverting an element, but a discrete step can jump over it to a
// configuration turned inside out through a large rotation (every det F positive again). Along x + t d each
// sample's det F(t) is a cubic in t, det(A + t B) = det A + t tr(adj(A) B) + t^2 tr(adj(B) A) + t^3 det B;
// the line search starts no further than where the first of them falls to a tenth of its value at t = 0.
#include <algorithm>
#include <array>
#include <cmath>

#include "rigidiff/deformable/pd_corotated_hyperelastic.hpp"
#include "rigidiff/deformable/pd_elements.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {
namespace {

// The first t in (0, 1] where c0 + c1 t + c2 t^2 + c3 t^3 reaches `floor` (< c0), or 1 if it stays above.
double firstCrossing(const std::array<double, 4>& c, double floor) {
  auto p = [&](double t) { return c[0] + t * (c[1] + t * (c[2] + t * c[3])) - floor; };
  // the cubic is monotone between the roots of its derivative c1 + 2 c2 t + 3 c3 t^2
  std::array<double, 4> knots{0.0, 1.0, 1.0, 1.0};
  int count = 1;
  const double a = 3.0 * c[3], b = 2.0 * c[2], k = c[1];
  if (a != 0.0) {
    const double disc = b * b - 4.0 * a * k;
    if (disc >= 0.0) {
      const double r = std::sqrt(disc);
      for (double t : {(-b - r) / (2.0 * a), (-b + r) / (2.0 * a)})
        if (t > 0.0 && t < 1.0) knots[count++] = t;
    }
  } else if (b != 0.0 && -k / b > 0.0 && -k / b < 1.0) {
    knots[count++] = -k / b;
  }
  std::sort(knots.begin() + 1, knots.begin() + count);
  knots[count++] = 1.0;
  for (int s = 0; s + 1 < count; ++s) {
    double lo = knots[s], hi = knots[s + 1];
    if (p(hi) > 0.0) continue;  // monotone on [lo, hi] and positive at lo: no crossing inside
    for (int it = 0; it < 60; ++it) {
      const double mid = 0.5 * (lo + hi);
      (p(mid) > 0.0 ? lo : hi) = mid;
    }
    return lo;
  }
  return 1.0;
}

}  // namespace

double pdInversionFreeStep(const PdModel& model, const Points& x, const Points& d) {
  const int m = model.elementCount();
  std::vector<double> limit(m, 1.0);
  forEachElement(model, [&](int e) {
    for (int k = model.element_start[e]; k < model.element_start[e + 1]; ++k) {
      const PdSample& s = model.samples[k];
      if (!(s.mu_neohookean > 0.0)) continue;
      const Mat3 A = deformationGradient(s, x), B = deformationGradient(s, d);
      const double det_a = A.determinant();
      // tr(adj(A) B) = cof(A) : B
      const std::array<double, 4> c{det_a, (cofactor(A).array() * B.array()).sum(),
                                    (cofactor(B).array() * A.array()).sum(), B.determinant()};
      limit[e] = std::min(limit[e], firstCrossing(c, 0.1 * det_a));
    }
  });
  return *std::min_element(limit.begin(), limit.end());
}

}  // namespace deformable
}  // namespace rigidiff
