// Contact manifolds of touching faces: a reference face polygon clips an incident polygon, and the
// surviving points (at most four, the ones spanning the largest area) become point-face contacts, or
// edge-cut contacts where an incident edge crosses the reference polygon's boundary.
#pragma once

#include <vector>

#include "rigidiff/collision/feature.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace manifold {

/// Orders the points of a convex planar polygon (world) counter-clockwise about the unit normal n.
void orderAround(std::vector<Vec3>& pts, const Vec3& n);

/// A corner of a clipped polygon and where it comes from: an incident point, the crossing of an
/// incident edge with a side plane of the reference polygon, or neither (a reference corner).
struct ClippedPoint {
  Vec3 x = Vec3::Zero();        ///< world
  int vertex = -1;              ///< the incident point it is, or -1
  int edge0 = -1, edge1 = -1;   ///< the incident edge (its two points) that a side plane cut, or -1
  int side = -1;                ///< that side plane: reference edge `side` (points side, side + 1), or -1
};

/// The part of the incident polygon (or segment, or point; world, a polygon ordered around its boundary)
/// inside the prism of the reference polygon (world, convex, ordered by orderAround about n) along n.
std::vector<ClippedPoint> clipToPrism(const std::vector<Vec3>& incident, const std::vector<Vec3>& reference,
                                      const Vec3& n);

/// The features of the contact at a clipped point, the reference face `face` (in the frame of Mr, the
/// reference geometry's placement) against the incident side (Mi): an incident point is a Point of the
/// incident side; where an incident edge crossed a side plane, the incident feature is that edge as an
/// EdgeCut and `face` carries the side plane; a reference corner is taken as a Point of the incident side
/// (it is neither side's material point: its motion is that of the incident side's point).
void clippedFeatures(const ClippedPoint& c, const std::vector<Vec3>& incident, const std::vector<Vec3>& reference,
                     const Vec3& n, const SE3& Mr, const SE3& Mi, Feature& face, Feature& inc);

/// Keeps at most four of the points: the deepest (smallest depth), then the ones spanning the largest
/// area with it. Returns the indices kept, in increasing order.
std::vector<int> reduceToFour(const std::vector<Vec3>& pts, const std::vector<double>& depth);

}  // namespace manifold
}  // namespace rigidiff
