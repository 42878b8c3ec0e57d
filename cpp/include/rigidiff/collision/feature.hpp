// Contact features: the pieces of two shapes that touch (a point, a segment or a face of each, grown
// by a margin for spheres and capsules). A contact stores its two features in the frames of their
// geometries, so its witness points, normal and signed distance are functions of the two placements
// alone: evaluateFeatures() recomputes them, and the contact derivatives differentiate that map.
#pragma once

#include "rigidiff/spatial/se3.hpp"

namespace rigidiff {

/// What one side of a contact touches with.
enum class FeatureKind : int {
  Point = 0,    ///< a vertex, a sphere centre or a capsule end (p)
  Segment = 1,  ///< an edge or a capsule axis: the line through p with direction d (unit)
  Face = 2,     ///< a face or a plane: the plane through p with outward unit normal d
  /// a point of a circle (a cylinder's rim: centre p, unit axis d, `radius`) that slides along it: the
  /// point at `angle` (about d) from the circle's deepest point towards the other side's face. Only
  /// against a Face; it is a PointFace contact whose point follows the support of the circle.
  Circle = 3,
  /// an edge (the line through p with direction d) that the other side's face polygon clips: the point
  /// where the line crosses the side plane that the other side's Face carries (side_p, side_n). The
  /// point slides along the edge as the face moves. Only against a Face.
  EdgeCut = 4,
};

/// One side of a contact, in the frame of its geometry.
struct Feature {
  FeatureKind kind = FeatureKind::Point;
  Vec3 p = Vec3::Zero();       ///< point, a point of the line or a point of the plane
  Vec3 d = Vec3::UnitZ();      ///< unit line direction (Segment) or outward normal (Face); unused for Point
  double margin = 0.0;         ///< radius around the feature (sphere, capsule), 0 for polytopes
  double radius = 0.0;         ///< Circle: its radius
  double angle = 0.0;          ///< Circle: angle of the point from the support direction, about d
  Vec3 side_p = Vec3::Zero();  ///< Face against an EdgeCut: a point of the side plane that cuts the edge
  Vec3 side_n = Vec3::UnitX(); ///< Face against an EdgeCut: the side plane's unit normal
};

/// A circle's support direction has no meaning when its plane is parallel to the face: below this
/// norm of the normal's in-plane part, the circle's own first axis stands in, turning with the body.
constexpr double kCircleTiltTolerance = 1e-12;

/// World point of a Circle feature of A (placement Ma) against a face whose world normal is n (from B to
/// A): centre + radius (cos angle e + sin angle (axis x e)), e the unit in-plane direction opposite to n.
Vec3 circlePoint(const Feature& f, const SE3& Ma, const Vec3& n);

/// An edge's direction within this of parallel to the side plane cutting it leaves the cut point on the
/// edge's reference point (the narrow phase only cuts edges that cross the plane).
constexpr double kEdgeCutTolerance = 1e-12;

/// World point of an EdgeCut feature (placement Me) where its line crosses the side plane carried by
/// the Face feature `face` (placement Mf).
Vec3 edgeCutPoint(const Feature& edge, const SE3& Me, const Feature& face, const SE3& Mf);

/// The pair of feature kinds (A first), as reported to users.
enum class ContactType : int {
  PointFace = 0,       ///< vertex or sphere of A on a face of B
  FacePoint = 1,       ///< face of A on a vertex or sphere of B
  PointPoint = 2,      ///< sphere-sphere, sphere-vertex
  PointSegment = 3,    ///< sphere or vertex of A against an edge or capsule axis of B
  SegmentPoint = 4,    ///< edge or capsule axis of A against a sphere or vertex of B
  SegmentSegment = 5,  ///< edge-edge, capsule-capsule, capsule-edge
  FaceEdge = 6,        ///< face of A on the point where an edge of B leaves the face (clipped patches)
  EdgeFace = 7,        ///< the point where an edge of A leaves a face of B, on that face
};

/// Contact type of a feature pair; throws invalid_argument for face-face, face-segment (never produced:
/// those patches are reported as several point-face and edge-cut contacts).
ContactType contactType(FeatureKind a, FeatureKind b);

/// Two lines count as parallel when 1 - (ua . ub)^2 is at most this (evaluateFeatures and its derivatives
/// take the same branches).
constexpr double kParallelLinesTolerance = 1e-12;
/// Two centres coincide, and the fallback normal stands in, when |ca - cb| <= this * (1 + |ca|).
constexpr double kCoincidentCentresTolerance = 1e-12;

/// Witness points, normal and signed distance of a feature pair under placements Ma, Mb.
struct FeatureGeometry {
  Vec3 point_a = Vec3::Zero();  ///< witness point on A (world), margins included
  Vec3 point_b = Vec3::Zero();  ///< witness point on B (world)
  Vec3 normal = Vec3::UnitZ();  ///< unit, from B to A
  double distance = 0.0;        ///< signed: point_a - point_b = distance * normal
};

/// Evaluates a feature pair (contact conventions: docs/architecture.md). Lines are infinite: a segment feature
/// stands for the interior of its edge, which the narrow phase guarantees when it creates the contact.
/// `fallback_normal` (world, from B to A) orients two crossing lines (their common perpendicular has
/// two sides; the one closer to it is taken) and stands in when the pair has no direction of its own
/// (coincident points, a point on a line, parallel lines). Contact::update passes the previous normal.
FeatureGeometry evaluateFeatures(const Feature& a, const SE3& Ma, const Feature& b, const SE3& Mb,
                                 const Vec3& fallback_normal);

}  // namespace rigidiff
