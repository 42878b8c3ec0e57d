// The stencil of a contact feature: the world points whose positions carry it (IPC Toolkit's form, where a
// point-triangle pair is a function of 4 points). A contact's derivatives are taken with respect to these
// points and then chained through each side's point map (contact/point_jacobian.hpp): a rigid link moves
// every point with its twist, a particle translates them, and a body whose points move on their own (an
// affine body's map, a mesh vertex) plugs in its own map without touching the contact geometry.
#pragma once

#include <array>

#include "rigidiff/collision/feature.hpp"

namespace rigidiff {

/// Most points one side's stencil holds: a face with the side plane that cuts the other side's edge.
constexpr int kMaxStencilPoints = 6;

/// The points of one side, in world coordinates. Directions are differences of points, so that any
/// motion of the points (not only a rigid one) moves them; a rigid body's stencil is made with unit
/// offsets, where these differences are exactly its unit directions.
///
/// - Point: x0 = p.
/// - Segment, EdgeCut: x0 = p, x1 = p + d (the line's direction is x1 - x0, normalised).
/// - Face: x0 = p, x1 = p + t1, x2 = p + t2 with t1 x t2 = d (the normal is (x1 - x0) x (x2 - x0),
///   normalised); against an EdgeCut, x3, x4, x5 carry the side plane (side_p, side_n) the same way.
/// - Circle: x0 = the centre, x1 = x0 + the axis, x2 = x0 + a unit vector orthogonal to the axis that
///   stands in for the support direction when the circle lies flat on the face.
struct FeatureStencil {
  int count = 0;
  std::array<Vec3, kMaxStencilPoints> points;
};

/// The stencil of feature f placed at M. `carries_side_plane`: f is a Face against an EdgeCut.
FeatureStencil featureStencil(const Feature& f, const SE3& M, bool carries_side_plane);

}  // namespace rigidiff
