// Internal to collision/: a triangle mesh against a box or another triangle mesh, triangle by triangle.
#pragma once

#include <utility>
#include <vector>

#include "rigidiff/contact/contact_set.hpp"
#include "rigidiff/collision/shape.hpp"

namespace rigidiff {
namespace narrowphase {

/// A triangle mesh (A) against a box or a triangle mesh (B), both seen as closed surfaces of triangles
/// with outward normals. For the candidate pairs of faces (f of A, g of B; boxes within the margin) it
/// reports every local minimum of the distance between the surfaces that the stored features express:
/// - a vertex of one side over the interior of a face of the other (point_face, face_point), within
///   the margin above it and less than that face's depth below it, the vertex being the lowest of its
///   neighbours along the face normal within kPatchAngleDegrees (so a tilted resting face keeps its
///   corners); a vertex behind several faces keeps those within half the face depth of its shallowest
///   touch (the deeper ones lie across the solid);
/// - two ridge edges (edges whose faces make a convex angle) crossing between their ends
///   (segment_segment), the normal in the cone of outward normals of both edges.
/// - apart (not in penetration), a vertex in front of a ridge edge (point_segment, segment_point) or of
///   a vertex (point_point), the direction between them in the normal cones of both (each vertex the
///   strictly lowest of its neighbours along it).
/// Flat and valley edges and the mesh's boundary edges make no contacts. The depth of a mesh face is the mesh's prism thickness, of
/// a box face its smallest half extent. Contacts are appended with A first (a vertex over a
/// shared edge once per face: the caller drops duplicates and reduces patches). `pairs` are the candidate face pairs in a fixed order.
void meshPolytope(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                  const std::vector<std::pair<int, int>>& pairs, double margin, std::vector<Contact>& out);

/// The candidate face pairs of a triangle mesh (A) and a box or triangle mesh (B), overwriting `pairs`,
/// sorted: for two meshes the face pairs whose prism boxes meet within the margin (the two box trees
/// traversed together, B's placed in A's frame); for a box, `faces` (those of A whose prism boxes meet
/// the box grown by the margin, sorted) against the box's 12 triangles.
void meshPolytopePairs(const CollisionShape& a, const SE3& Ma, const CollisionShape& b, const SE3& Mb,
                       const std::vector<int>& faces, double margin, std::vector<std::pair<int, int>>& pairs);

}  // namespace narrowphase
}  // namespace rigidiff
