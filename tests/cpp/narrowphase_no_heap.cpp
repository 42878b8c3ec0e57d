// Checks that the narrow phase of resting boxes and of shapes on the ground allocates nothing once its
// per-thread scratch and the output vector have grown: box-box face clipping (either box the reference),
// a box on a plane, and a many-vertex hull on a plane (more than four touching, and fewer, filled up
// by the points nearest the plane). malloc is wrapped and counted around the second call of each.
// Built and run by test_no_heap_allocation.py.
#include <cmath>
#include <cstdio>
#include <vector>

#include "rigidiff/collision/narrowphase.hpp"

#include "malloc_counter.hpp"  // after the standard headers, which declare malloc

using namespace rigidiff;

namespace {

Mat3 rotation(double angle, const Vec3& axis) { return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix(); }

// an octagonal prism (radius 0.3, height 0.2): a flat bottom of eight vertices
CollisionShape octagonalPrism() {
  std::vector<double> v;
  for (double z : {-0.1, 0.1})
    for (int k = 0; k < 8; ++k) {
      v.push_back(0.3 * std::cos(k * M_PI / 4));
      v.push_back(0.3 * std::sin(k * M_PI / 4));
      v.push_back(z);
    }
  return makeConvexMesh(v.data(), 16);
}

}  // namespace

int main() {
  const CollisionShape table = makeBox(Vec3(1.0, 1.0, 0.5)), block = makeBox(Vec3(0.6, 0.6, 0.4));
  const CollisionShape ground = makePlane(Vec3::UnitZ(), 0.0), prism = octagonalPrism();
  const SE3 M_table(Mat3::Identity(), Vec3::Zero());
  // turned about z and overhanging the table's edge: the clipped polygon has cut points and corners
  const SE3 M_block(rotation(0.3, Vec3::UnitZ()), Vec3(0.35, 0.1, 0.25 + 0.2 - 1e-3));
  const SE3 M_ground;
  const SE3 M_flat(Mat3::Identity(), Vec3(0.0, 0.0, 0.1 - 1e-3));                       // 8 touching
  const SE3 M_tilted(rotation(0.02, Vec3(1.0, 0.3, 0.0)), Vec3(0.0, 0.0, 0.1 + 2e-3));  // 1 or 2 touching
  std::vector<Contact> out;
  AllocationChecks check;
  int empty = 0;
  auto pair = [&](const char* name, const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb,
                  double margin) {
    auto call = [&] {
      out.clear();
      collideShapes(a, Ma, 0, b, Mb, 1, margin, out);
      return static_cast<double>(out.size());
    };
    call();  // warm-up: the thread's scratch and `out` grow to their working size
    check(name, call);
    std::printf("%-40s %zu contacts\n", name, out.size());
    if (out.empty()) ++empty;
  };
  pair("box-box, the lower box the reference", table, M_table, block, M_block, 0.0);
  pair("box-box, the upper box the reference", block, M_block, table, M_table, 0.0);
  pair("box-plane", block, M_flat, ground, M_ground, 0.0);
  pair("hull-plane, eight touching", prism, M_flat, ground, M_ground, 0.0);
  pair("hull-plane, filled up within the margin", prism, M_tilted, ground, M_ground, 0.05);
  std::printf("%d of the scenes found no contact\n", empty);
  const int code = check.report();
  return empty == 0 ? code : 1;
}
