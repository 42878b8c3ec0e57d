// Contact manifolds of touching faces: a reference face polygon clips an incident polygon, and the
// surviving points (at most four, the ones spanning the largest area) become point-face contacts.
#pragma once

#include <vector>

#include "rigidiff/fwd.hpp"

namespace rigidiff {
namespace manifold {

/// Orders the points of a convex planar polygon (world) counter-clockwise about the unit normal n.
void orderAround(std::vector<Vec3>& pts, const Vec3& n);

/// The part of the incident polygon (or segment, or point; world) inside the prism of the reference
/// polygon (world, convex, ordered by orderAround about n) along n.
std::vector<Vec3> clipToPrism(const std::vector<Vec3>& incident, const std::vector<Vec3>& reference, const Vec3& n);

/// Keeps at most four of the points: the deepest (smallest depth), then the ones spanning the largest
/// area with it. Returns the indices kept, in increasing order.
std::vector<int> reduceToFour(const std::vector<Vec3>& pts, const std::vector<double>& depth);

}  // namespace manifold
}  // namespace rigidiff
