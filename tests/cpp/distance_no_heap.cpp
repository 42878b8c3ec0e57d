// Checks that the squared-distance primitives (collision/distance/) allocate nothing: malloc is wrapped
// and counted around every value, gradient and Hessian call, over configurations that reach each branch
// (every distance type, parallel and zero-length edges, the mollifier inside and outside its band).
// Built and run by test_no_heap_allocation.py.
#include "rigidiff/collision/distance/edge_edge.hpp"
#include "rigidiff/collision/distance/edge_edge_mollifier.hpp"
#include "rigidiff/collision/distance/line_line.hpp"
#include "rigidiff/collision/distance/point_edge.hpp"
#include "rigidiff/collision/distance/point_line.hpp"
#include "rigidiff/collision/distance/point_plane.hpp"
#include "rigidiff/collision/distance/point_point.hpp"
#include "rigidiff/collision/distance/point_triangle.hpp"

#include "malloc_counter.hpp"  // after the standard headers, which declare malloc

using namespace rigidiff;

int main() {
  AllocationChecks check;
  const Vec3 o(0.0, 0.0, 0.0), x(1.0, 0.0, 0.0), y(0.0, 1.0, 0.0);
  // points around the triangle (o, x, y): inside, beyond each edge, at each corner
  const Vec3 probes[] = {Vec3(0.2, 0.3, 0.5), Vec3(0.5, -1.0, 0.2), Vec3(1.0, 1.0, 0.1), Vec3(-1.0, 0.5, 0.3),
                         Vec3(-1.0, -1.0, 0.0), Vec3(2.0, -0.5, 0.1), Vec3(-0.5, 2.0, 0.2)};
  for (const Vec3& p : probes) {
    check("point-point", [&] { return pointPointDistance(p, x) + pointPointDistanceGradient(p, x).sum() +
                                      pointPointDistanceHessian(p, x).sum(); });
    check("point-line", [&] { return pointLineDistance(p, o, x) + pointLineDistanceGradient(p, o, x).sum() +
                                     pointLineDistanceHessian(p, o, x).sum(); });
    check("point-edge", [&] { return pointEdgeDistance(p, o, x) + pointEdgeDistanceGradient(p, o, x).sum() +
                                     pointEdgeDistanceHessian(p, o, x).sum(); });
    check("point-plane", [&] { return pointPlaneDistance(p, o, x, y) + pointPlaneDistanceGradient(p, o, x, y).sum() +
                                      pointPlaneDistanceHessian(p, o, x, y).sum(); });
    check("point-triangle", [&] {
      return pointTriangleDistance(p, o, x, y) + pointTriangleDistanceGradient(p, o, x, y).sum() +
             pointTriangleDistanceHessian(p, o, x, y).sum();
    });
  }
  // edge B against edge A = (o, x): crossing, each end region, parallel, zero-length
  const Vec3 edges[][2] = {{Vec3(0.5, -1.0, 1.0), Vec3(0.5, 1.0, 1.0)},  {Vec3(-1.0, -1.0, 1.0), Vec3(-1.0, 1.0, 1.0)},
                           {Vec3(2.0, -1.0, 1.0), Vec3(2.0, 1.0, 1.0)},  {Vec3(0.5, 0.5, 1.0), Vec3(0.5, 2.0, 1.0)},
                           {Vec3(0.2, 1.0, 0.0), Vec3(0.8, 1.0, 0.0)},   {Vec3(-1.0, 1.0, 0.0), Vec3(2.0, 1.0, 0.0)},
                           {Vec3(3.0, 1.0, 0.0), Vec3(2.0, 1.0, 0.0)},   {Vec3(0.5, 1.0, 0.0), Vec3(0.5, 1.0, 0.0)}};
  for (const auto& e : edges) {
    const Vec3 &b0 = e[0], &b1 = e[1];
    check("edge-edge", [&] { return edgeEdgeDistance(o, x, b0, b1) + edgeEdgeDistanceGradient(o, x, b0, b1).sum() +
                                    edgeEdgeDistanceHessian(o, x, b0, b1).sum(); });
    if ((b1 - b0).cross(x).squaredNorm() > 0.0)
      check("line-line", [&] { return lineLineDistance(o, x, b0, b1) + lineLineDistanceGradient(o, x, b0, b1).sum() +
                                      lineLineDistanceHessian(o, x, b0, b1).sum(); });
    for (double eps : {1e-3, 10.0})
      check("mollifier", [&] {
        return edgeEdgeMollifier(o, x, b0, b1, eps) + edgeEdgeMollifierGradient(o, x, b0, b1, eps).sum() +
               edgeEdgeMollifierHessian(o, x, b0, b1, eps).sum();
      });
    check("mollifier threshold", [&] {
      return edgeEdgeMollifierThreshold(o, x, b0, b1) + edgeEdgeMollifierThresholdGradient(o, x, b0, b1).sum() +
             edgeEdgeMollifierThresholdHessian(o, x, b0, b1).sum();
    });
  }
  return check.report();
}
