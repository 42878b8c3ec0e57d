// Contact manifolds of touching faces: a reference face polygon clips an incident polygon, and the
// surviving points (at most four, the ones spanning the largest area) become point-face contacts, or
// edge-cut contacts where an incident edge crosses the reference polygon's boundary.
#pragma once

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "rigidiff/collision/feature.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace manifold {

/// A read-only view of world points (a polygon, segment or point) held by a std::vector or a fixed
/// array, so that a box face's four corners need no heap.
class PointsView {
 public:
  PointsView(const std::vector<Vec3>& v) : p_(v.data()), n_(v.size()) {}  // NOLINT: implicit on purpose
  template <std::size_t N>
  PointsView(const std::array<Vec3, N>& a) : p_(a.data()), n_(N) {}  // NOLINT: implicit on purpose
  std::size_t size() const { return n_; }
  const Vec3& operator[](std::size_t k) const { return p_[k]; }
  const Vec3* begin() const { return p_; }
  const Vec3* end() const { return p_ + n_; }

 private:
  const Vec3* p_;
  std::size_t n_;
};

/// At most four point indices, in increasing order (a reduced manifold); no heap.
struct FourIndices {
  int index[4] = {0, 0, 0, 0};
  int count = 0;
  void push(int i) { index[count++] = i; }
  void sort() {  // insertion sort: four at most
    for (int k = 1; k < count; ++k)
      for (int j = k; j > 0 && index[j - 1] > index[j]; --j) std::swap(index[j - 1], index[j]);
  }
  int size() const { return count; }
  const int* begin() const { return index; }
  const int* end() const { return index + count; }
};

/// Orders the points of a convex planar polygon (world) counter-clockwise about the unit normal n.
void orderAround(Vec3* pts, std::size_t size, const Vec3& n);
inline void orderAround(std::vector<Vec3>& pts, const Vec3& n) { orderAround(pts.data(), pts.size(), n); }

/// A corner of a clipped polygon and where it comes from: an incident point, the crossing of an
/// incident edge with a side plane of the reference polygon, or a reference point (where two adjacent
/// side planes meet on the incident polygon).
struct ClippedPoint {
  Vec3 x = Vec3::Zero();        ///< world
  int vertex = -1;              ///< the incident point it is, or -1
  int edge0 = -1, edge1 = -1;   ///< the incident edge (its two points) that a side plane cut, or -1
  int side = -1;                ///< that side plane: reference edge `side` (points side, side + 1), or -1
  int corner = -1;              ///< the reference point it lies below, or -1
};

/// The part of the incident polygon (or segment, or point; world, a polygon ordered around its boundary)
/// inside the prism of the reference polygon (world, convex, ordered by orderAround about n) along n,
/// written to `out` (cleared first; its capacity is reused).
void clipToPrism(PointsView incident, PointsView reference, const Vec3& n, std::vector<ClippedPoint>& out);

/// The features of the contact at a clipped point: `ref` (the reference side, placed by Mr) comes in as
/// the reference face, `inc` is the incident side's (Mi). An incident point is a Point of the incident
/// side; where an incident edge crossed a side plane, `inc` is that edge as an EdgeCut and `ref` carries
/// the side plane; a reference corner over an incident face (three points or more) is a Point of the
/// reference side on the incident face's plane. Degenerate edges and planes fall back to a Point of
/// the incident side.
void clippedFeatures(const ClippedPoint& c, PointsView incident, PointsView reference, const Vec3& n, const SE3& Mr,
                     const SE3& Mi, Feature& ref, Feature& inc);

/// Keeps at most four of the points: the deepest (smallest depth), then the ones spanning the largest
/// area with it. Returns the indices kept, in increasing order.
FourIndices reduceToFour(const std::vector<Vec3>& pts, const std::vector<double>& depth);

/// Keeps at most four of a body's points against a plane: those in contact (depth <= 0), reduced by
/// reduceToFour when there are more than four; with fewer, they are completed by the points above the
/// plane nearest to it (by depth, then index). Unlike reduceToFour on all of them, points that a large
/// margin lets in (a tumbling box's upper corners) never displace the lowest ones, so a symmetric
/// landing keeps a symmetric manifold. Returns the indices kept, in increasing order.
FourIndices reduceTouchingFirst(const std::vector<Vec3>& pts, const std::vector<double>& depth);

}  // namespace manifold
}  // namespace rigidiff
