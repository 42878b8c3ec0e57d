// The squared-distance closed forms, each written once for any scalar (double, or Jet for exact
// gradients and Hessians), and the dispatch from a distance type to its form.
#pragma once

#include <array>

#include "jet.hpp"
#include "point3.hpp"
#include "rigidiff/collision/distance/distance_types.hpp"

namespace rigidiff {
namespace distance {

template <class T>
T pointPointForm(const Point3<T>& a, const Point3<T>& b) {
  return squaredNorm(a - b);
}

// |(e0 - p) x (e1 - p)|^2 is the squared area of the parallelogram; over the squared base |e1 - e0|^2
// it leaves the squared height
template <class T>
T pointLineForm(const Point3<T>& p, const Point3<T>& e0, const Point3<T>& e1) {
  return squaredNorm(cross(e0 - p, e1 - p)) / squaredNorm(e1 - e0);
}

// the plane of (t0, t1, t2): ((p - t0) . n)^2 / |n|^2 with the unnormalised normal n
template <class T>
T pointPlaneForm(const Point3<T>& p, const Point3<T>& t0, const Point3<T>& t1, const Point3<T>& t2) {
  const Point3<T> n = cross(t1 - t0, t2 - t0);
  const T s = dot(p - t0, n);
  return s * s / squaredNorm(n);
}

// lines through the two edges: the offset between them along the common normal ea x eb
template <class T>
T lineLineForm(const Point3<T>& ea0, const Point3<T>& ea1, const Point3<T>& eb0, const Point3<T>& eb1) {
  const Point3<T> n = cross(ea1 - ea0, eb1 - eb0);
  const T s = dot(eb0 - ea0, n);
  return s * s / squaredNorm(n);
}

template <class T>
T pointEdgeForm(const std::array<Point3<T>, 3>& x, PointEdgeDistanceType type) {
  switch (type) {
    case PointEdgeDistanceType::P_E0: return pointPointForm(x[0], x[1]);
    case PointEdgeDistanceType::P_E1: return pointPointForm(x[0], x[2]);
    default: return pointLineForm(x[0], x[1], x[2]);
  }
}

template <class T>
T pointTriangleForm(const std::array<Point3<T>, 4>& x, PointTriangleDistanceType type) {
  switch (type) {
    case PointTriangleDistanceType::P_T0: return pointPointForm(x[0], x[1]);
    case PointTriangleDistanceType::P_T1: return pointPointForm(x[0], x[2]);
    case PointTriangleDistanceType::P_T2: return pointPointForm(x[0], x[3]);
    case PointTriangleDistanceType::P_E0: return pointLineForm(x[0], x[1], x[2]);
    case PointTriangleDistanceType::P_E1: return pointLineForm(x[0], x[2], x[3]);
    case PointTriangleDistanceType::P_E2: return pointLineForm(x[0], x[3], x[1]);
    default: return pointPlaneForm(x[0], x[1], x[2], x[3]);
  }
}

template <class T>
T edgeEdgeForm(const std::array<Point3<T>, 4>& x, EdgeEdgeDistanceType type) {
  switch (type) {
    case EdgeEdgeDistanceType::EA0_EB0: return pointPointForm(x[0], x[2]);
    case EdgeEdgeDistanceType::EA0_EB1: return pointPointForm(x[0], x[3]);
    case EdgeEdgeDistanceType::EA1_EB0: return pointPointForm(x[1], x[2]);
    case EdgeEdgeDistanceType::EA1_EB1: return pointPointForm(x[1], x[3]);
    case EdgeEdgeDistanceType::EA_EB0: return pointLineForm(x[2], x[0], x[1]);
    case EdgeEdgeDistanceType::EA_EB1: return pointLineForm(x[3], x[0], x[1]);
    case EdgeEdgeDistanceType::EA0_EB: return pointLineForm(x[0], x[2], x[3]);
    case EdgeEdgeDistanceType::EA1_EB: return pointLineForm(x[1], x[2], x[3]);
    default: return lineLineForm(x[0], x[1], x[2], x[3]);
  }
}

/// Evaluates form(points) for K points as a double, and with Jets of order 1 or 2 for the gradient and
/// the Hessian with respect to the 3K stacked coordinates.
template <int K, class Form>
double formValue(const Form& form, const std::array<const Vec3*, K>& x) {
  return form(plainPoints<K>(x));
}

template <int K, class Form>
Eigen::Matrix<double, 3 * K, 1> formGradient(const Form& form, const std::array<const Vec3*, K>& x) {
  return form(seededPoints<Jet<3 * K, 1>, K>(x)).g;
}

template <int K, class Form>
Eigen::Matrix<double, 3 * K, 3 * K> formHessian(const Form& form, const std::array<const Vec3*, K>& x) {
  return form(seededPoints<Jet<3 * K, 2>, K>(x)).h;
}

}  // namespace distance
}  // namespace rigidiff
