// Checks that manifold::orderAround gives, to the bit, the order of sorting its points by angle with
// std::sort (how it sorted before its small faces were sorted on the stack): polygons of 3 to 40 points,
// some with repeated points and points on the centre (equal angles), about random normals. Prints the
// mismatches and "ok". Built and run by test_narrowphase_checks.py.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "rigidiff/collision/manifold.hpp"

#include "../../cpp/src/collision/axes.hpp"

using namespace rigidiff;

namespace {

// the order by std::sort of the angle keys about the centroid, in the basis orderAround uses
std::vector<Vec3> sortedByAngle(const std::vector<Vec3>& pts, const Vec3& n) {
  Vec3 c = Vec3::Zero();
  for (const Vec3& p : pts) c += p;
  c /= static_cast<double>(pts.size());
  const Vec3 e1 = axes::anyOrthogonal(n);
  const Vec3 e2 = n.cross(e1);
  std::vector<std::pair<double, Vec3>> keyed;
  for (const Vec3& p : pts) keyed.emplace_back(std::atan2(e2.dot(p - c), e1.dot(p - c)), p);
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<Vec3> out;
  for (const auto& k : keyed) out.push_back(k.second);
  return out;
}

}  // namespace

int main() {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  int mismatches = 0, trials = 0, with_ties = 0;
  for (int size = 3; size <= 40; ++size)
    for (int t = 0; t < 200; ++t, ++trials) {
      const Vec3 n = Vec3(uni(rng), uni(rng), uni(rng)).normalized();
      const Vec3 e1 = axes::anyOrthogonal(n), e2 = n.cross(e1), o(uni(rng), uni(rng), uni(rng));
      std::vector<Vec3> pts;
      for (int k = 0; k < size; ++k) {
        const double a = 2.0 * M_PI * (uni(rng) + 1.0) / 2.0;
        pts.push_back(o + std::cos(a) * e1 + std::sin(a) * e2);
      }
      if (t % 3 == 0) {  // equal angles: repeated points
        pts[size / 2] = pts[0];
        pts[size - 1] = pts[1];
        ++with_ties;
      }
      std::shuffle(pts.begin(), pts.end(), rng);
      const std::vector<Vec3> expected = sortedByAngle(pts, n);
      manifold::orderAround(pts, n);
      bool same = true;
      for (int k = 0; k < size; ++k) same = same && pts[k] == expected[k];
      if (!same && ++mismatches <= 5) std::printf("size %d, trial %d differs\n", size, t);
    }
  std::printf("%d of %d polygons ordered differently (%d with repeated points)\n", mismatches, trials, with_ties);
  if (mismatches == 0) std::printf("ok\n");
  return mismatches == 0 ? 0 : 1;
}
