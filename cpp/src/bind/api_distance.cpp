// Binding of the squared-distance primitives (declared in rigidiff/bind/api_distance.hpp).
#include "rigidiff/bind/api_distance.hpp"

#include <array>
#include <cmath>
#include <string>
#include <type_traits>

#include "rigidiff/collision/distance/edge_edge.hpp"
#include "rigidiff/collision/distance/edge_edge_mollifier.hpp"
#include "rigidiff/collision/distance/line_line.hpp"
#include "rigidiff/collision/distance/point_edge.hpp"
#include "rigidiff/collision/distance/point_line.hpp"
#include "rigidiff/collision/distance/point_plane.hpp"
#include "rigidiff/collision/distance/point_point.hpp"
#include "rigidiff/collision/distance/point_triangle.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace bind {

namespace {

constexpr const char* kNames[kPrimitiveCount] = {"point-point",    "point-line", "point-edge",
                                                 "point-plane",    "point-triangle", "line-line",
                                                 "edge-edge",      "edge-edge mollifier", "mollifier threshold"};
// what makes a closed form undefined, for the message of a non-finite value
constexpr const char* kUndefinedWhen[kPrimitiveCount] = {
    "the coordinates overflow",
    "the edge has zero length",
    "the edge has zero length",
    "the triangle's vertices are collinear",
    "the triangle's vertices are collinear, or the chosen type's edge has zero length",
    "the lines are parallel",
    "the chosen type divides by a zero-length edge or by parallel edges",
    "the coordinates overflow",
    "the coordinates overflow"};

template <int K>
std::array<Vec3, K> readPoints(const double* row) {
  std::array<Vec3, K> x;
  for (int k = 0; k < K; ++k) {
    x[k] = Vec3(row[3 * k], row[3 * k + 1], row[3 * k + 2]);
    RD_CHECK_ARG(x[k].allFinite(), "point " << k << " has a non-finite coordinate");
  }
  return x;
}

template <int Order>
using OrderTag = std::integral_constant<int, Order>;

// Runs f(points, OrderTag<0|1|2>) over the n configurations; f returns the value, the gradient or the
// Hessian of one of them.
template <int K, class F>
void evaluate(int primitive, int n, const double* points, int order, double* value, double* gradient, double* hessian,
              const F& f) {
  constexpr int N = 3 * K;
  for (int i = 0; i < n; ++i) {
    try {
      const std::array<Vec3, K> x = readPoints<K>(points + static_cast<long>(i) * N);
      value[i] = f(x, i, OrderTag<0>());
      RD_CHECK_ARG(std::isfinite(value[i]), "the " << kNames[primitive] << " value is not finite ("
                                                   << kUndefinedWhen[primitive] << ")");
      if (order >= 1) Eigen::Map<Eigen::Matrix<double, N, 1>>(gradient + static_cast<long>(i) * N) = f(x, i, OrderTag<1>());
      if (order >= 2)
        Eigen::Map<Eigen::Matrix<double, N, N, Eigen::RowMajor>>(hessian + static_cast<long>(i) * N * N) =
            f(x, i, OrderTag<2>());
    } catch (const std::invalid_argument& e) {
      if (n == 1) throw;
      RD_THROW(std::invalid_argument, "configuration " << i << ": " << e.what());
    }
  }
}

}  // namespace

int primitivePointCount(int primitive) {
  RD_CHECK_ARG(primitive >= 0 && primitive < kPrimitiveCount, "unknown distance primitive code " << primitive);
  return primitive == 0 ? 2 : (primitive <= 2 ? 3 : 4);
}

void primitiveDistances(int primitive, int type, int n, const double* points, const double* eps_x, int order,
                        double* value, double* gradient, double* hessian) {
  primitivePointCount(primitive);
  RD_CHECK_ARG(n >= 0, "the number of configurations must be >= 0, got " << n);
  RD_CHECK_ARG(order >= 0 && order <= 2, "derivatives must be 0, 1 or 2, got " << order);
  const int types = primitive == 2 ? 4 : (primitive == 4 ? 8 : (primitive == 6 ? 10 : 1));
  RD_CHECK_ARG(type >= 0 && (types == 1 || type < types), "unknown " << kNames[primitive] << " type code " << type);
  if (primitive == 7)
    for (int i = 0; i < n; ++i)
      RD_CHECK_ARG(std::isfinite(eps_x[i]) && eps_x[i] >= 0.0, "eps_x must be finite and >= 0, got " << eps_x[i]);
  const auto pe = static_cast<PointEdgeDistanceType>(type);
  const auto pt = static_cast<PointTriangleDistanceType>(type);
  const auto ee = static_cast<EdgeEdgeDistanceType>(type);
  // one generic lambda per primitive: the order tag picks value, gradient or Hessian
#define RD_DISTANCE_CALL(name, ...)                                                      \
  [&](const auto& x, int i, auto o) {                                                    \
    (void)i;                                                                             \
    if constexpr (decltype(o)::value == 0) return name(__VA_ARGS__);                     \
    else if constexpr (decltype(o)::value == 1) return name##Gradient(__VA_ARGS__);      \
    else return name##Hessian(__VA_ARGS__);                                              \
  }
  switch (primitive) {
    case 0: return evaluate<2>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(pointPointDistance, x[0], x[1]));
    case 1: return evaluate<3>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(pointLineDistance, x[0], x[1], x[2]));
    case 2: return evaluate<3>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(pointEdgeDistance, x[0], x[1], x[2], pe));
    case 3: return evaluate<4>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(pointPlaneDistance, x[0], x[1], x[2], x[3]));
    case 4: return evaluate<4>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(pointTriangleDistance, x[0], x[1], x[2], x[3], pt));
    case 5: return evaluate<4>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(lineLineDistance, x[0], x[1], x[2], x[3]));
    case 6: return evaluate<4>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(edgeEdgeDistance, x[0], x[1], x[2], x[3], ee));
    case 7: return evaluate<4>(primitive, n, points, order, value, gradient, hessian,
                               RD_DISTANCE_CALL(edgeEdgeMollifier, x[0], x[1], x[2], x[3], eps_x[i]));
    default: return evaluate<4>(primitive, n, points, order, value, gradient, hessian,
                                RD_DISTANCE_CALL(edgeEdgeMollifierThreshold, x[0], x[1], x[2], x[3]));
  }
#undef RD_DISTANCE_CALL
}

void primitiveDistanceTypes(int primitive, int n, const double* points, int* types) {
  RD_CHECK_ARG(primitive == 2 || primitive == 4 || primitive == 6,
               "only point-edge (2), point-triangle (4) and edge-edge (6) have distance types, got " << primitive);
  const int K = primitivePointCount(primitive);
  for (int i = 0; i < n; ++i) {
    const double* row = points + static_cast<long>(i) * 3 * K;
    try {
      if (primitive == 2) {
        const auto x = readPoints<3>(row);
        types[i] = static_cast<int>(pointEdgeDistanceType(x[0], x[1], x[2]));
      } else {
        const auto x = readPoints<4>(row);
        types[i] = primitive == 4 ? static_cast<int>(pointTriangleDistanceType(x[0], x[1], x[2], x[3]))
                                  : static_cast<int>(edgeEdgeDistanceType(x[0], x[1], x[2], x[3]));
      }
    } catch (const std::invalid_argument& e) {
      if (n == 1) throw;
      RD_THROW(std::invalid_argument, "configuration " << i << ": " << e.what());
    }
  }
}

}  // namespace bind
}  // namespace rigidiff
