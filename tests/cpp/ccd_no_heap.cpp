// Checks that the continuous collision queries (collision/ccd/) allocate nothing: malloc is wrapped and
// counted around each query, over motions that hit, miss, start in contact, flatten a triangle or run out
// of iterations. (The swept-box broad phase rebuilds its box trees, which allocates.)
// Built and run by test_no_heap_allocation.py.
#include "rigidiff/collision/ccd/edge_edge.hpp"
#include "rigidiff/collision/ccd/point_edge.hpp"
#include "rigidiff/collision/ccd/point_point.hpp"
#include "rigidiff/collision/ccd/point_triangle.hpp"

#include "malloc_counter.hpp"  // after the standard headers, which declare malloc

using namespace rigidiff;

int main() {
  AllocationChecks check;
  const Vec3 t0(-1.0, -1.0, 0.0), t1(1.0, -1.0, 0.0), t2(0.0, 1.0, 0.0), t2_flat(0.0, -3.0, 0.0);
  CcdOptions capped;
  capped.max_iterations = 2;
  // start and end heights of the moving point: through the face, above it, starting on it
  const double heights[][2] = {{1.0, -1.0}, {1.0, 0.5}, {0.0, 1.0}};
  for (const auto& h : heights) {
    const Vec3 p(0.1, 0.0, h[0]), p_end(0.2, 0.1, h[1]);
    check("point-point", [&] { return pointPointCcd(p, t0, p_end, t0).toi; });
    check("point-edge", [&] { return pointEdgeCcd(p, t0, t1, p_end, t0, t1).toi; });
    check("point-triangle", [&] { return pointTriangleCcd(p, t0, t1, t2, p_end, t0, t1, t2).toi; });
    check("point-triangle flattening", [&] { return pointTriangleCcd(p, t0, t1, t2, p_end, t0, t1, t2_flat).toi; });
    check("point-triangle capped", [&] { return pointTriangleCcd(p, t0, t1, t2, p_end, t0, t1, t2, capped).toi; });
    check("edge-edge", [&] { return edgeEdgeCcd(p, p + t2, t0, t1, p_end, p_end + t2, t0, t1).toi; });
    check("edge-edge parallel", [&] { return edgeEdgeCcd(p, p + t1, t0, t1, p_end, p_end + t1, t0, t1).toi; });
  }

  return check.report();
}
