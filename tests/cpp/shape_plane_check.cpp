// Checks that a hull against a plane keeps exactly the vertices an unfiltered pass keeps, to the bit:
// shapePlane drops the vertices clearly above the margin without placing them, and that shortcut must
// never change which vertices count nor their distances. Tetrahedra (four vertices: nothing is reduced)
// far from the origin and turned at random are placed so that a vertex lies within a few roundings of
// the margin, above or below. Prints the mismatches and "ok". Built and run by test_narrowphase_checks.py.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "rigidiff/collision/narrowphase.hpp"

using namespace rigidiff;

int main(int argc, char** argv) {
  const int trials = argc > 1 ? std::atoi(argv[1]) : 20000;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  const Vec3 plane_n = Vec3(0.1, -0.2, 1.0).normalized();
  const double plane_offset = 0.37;
  const CollisionShape plane = makePlane(plane_n, plane_offset);
  const SE3 Mp(Eigen::AngleAxisd(0.4, Vec3(0.3, 1.0, -0.2).normalized()).toRotationMatrix(), Vec3(200.0, -50.0, 3.0));
  const Vec3 n = Mp.R * plane.normal;  // as shapePlane places the plane
  const double offset = n.dot(Mp.actPoint(plane.offset * plane.normal));
  int mismatches = 0, near = 0;
  std::vector<Contact> out;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> v;
    for (int k = 0; k < 12; ++k) v.push_back((t % 3 == 0 ? 100.0 : 0.5) * uni(rng));
    const CollisionShape hull = makeConvexMesh(v.data(), 4);
    const Mat3 R = Eigen::AngleAxisd(3.0 * uni(rng), Vec3(uni(rng), uni(rng), uni(rng)).normalized()).toRotationMatrix();
    const double margin = (t % 4 == 0) ? 0.0 : 0.01 * std::abs(uni(rng));
    // put vertex 0 on the margin, then nudge the body a few ulps of its distance along the normal
    SE3 Ma(R, Vec3(150.0 * uni(rng), 150.0 * uni(rng), 0.0));
    const Vec3& v0 = hull.vertices[0];
    Ma.p += (margin - (n.dot(Ma.actPoint(v0)) - offset)) * n;
    const double ulp = std::abs(n.dot(Ma.actPoint(v0))) * 2.2e-16;
    Ma.p += (t % 7 - 3) * ulp * n;
    out.clear();
    narrowphase::shapePlane(hull, Ma, 0, plane, Mp, 1, margin, out);
    std::vector<Vec3> expected;  // every vertex placed, as shapePlane places the ones it keeps
    for (const Vec3& p : hull.vertices) {
      const Vec3 w = Ma.actPoint(p);
      if (n.dot(w) - offset - 0.0 < margin) expected.push_back(p);
    }
    bool same = out.size() == expected.size();
    for (std::size_t k = 0; same && k < out.size(); ++k) same = out[k].feature_a.p == expected[k];
    const double d0 = n.dot(Ma.actPoint(v0)) - offset;
    if (std::abs(d0 - margin) < 1e-9) ++near;
    if (!same) {
      ++mismatches;
      if (mismatches <= 5) std::printf("trial %d: %zu contacts, expected %zu\n", t, out.size(), expected.size());
    }
  }
  std::printf("%d of %d trials differ (%d with a vertex within 1e-9 of the margin)\n", mismatches, trials, near);
  if (mismatches == 0 && near > trials / 2) std::printf("ok\n");
  return mismatches == 0 ? 0 : 1;
}
