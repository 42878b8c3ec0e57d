// Narrow phase: the contact manifold of two placed shapes, as feature contacts (contact/contact_set.hpp).
#pragma once

#include <vector>

#include "rigidiff/contact/contact_set.hpp"
#include "rigidiff/collision/manifold.hpp"
#include "rigidiff/collision/shape.hpp"

namespace rigidiff {

/// Appends to `out` the contacts of shape a (geometry ga, placed by Ma) and shape b (gb, Mb) whose
/// signed distance is below `margin` (>= 0; contacts about to close are reported too). A resting
/// face gives several contacts (a box on a plane: its 4 corners). Pairs with closed forms (plane,
/// sphere, capsule, box) are exact; the others take the GJK/EPA normal and clip the support features
/// of both shapes against each other. Two planes never collide.
void collideShapes(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                   double margin, std::vector<Contact>& out);

namespace narrowphase {
// Pair routines; each takes its shapes in the order of its name and appends contacts with that order.
/// any bounded shape (A) against a half-space (B)
void shapePlane(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& plane, const SE3& Mp, int gp,
                double margin, std::vector<Contact>& out);
/// spheres and capsules (A, B): point and segment features with the radii as margins
void roundedPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                 double margin, std::vector<Contact>& out);
void sphereBox(const CollisionShape& sphere, const SE3& Ms, int gs, const CollisionShape& box, const SE3& Mb, int gb,
               double margin, std::vector<Contact>& out);
void boxBox(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
            double margin, std::vector<Contact>& out);
/// any two convex shapes: GJK/EPA normal, then the support features of both clipped against each other
void convexPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
                double margin, std::vector<Contact>& out);
/// a triangle mesh (A) against any shape but a half-space: the prisms of its faces near B
void meshPair(const CollisionShape& a, const SE3& Ma, int ga, const CollisionShape& b, const SE3& Mb, int gb,
              double margin, std::vector<Contact>& out);
/// Swaps the roles of A and B in the contacts out[first:] (features, geometries, normal, type).
void swapRoles(std::vector<Contact>& out, std::size_t first);
/// The contacts of a face patch: the reference face `face` (of geometry gr, placed by Mr; world polygon
/// `reference`, ordered about its outward normal n_ref) clips the incident polygon (gi, Mi; world, ordered
/// around its boundary; its margin inc_margin), and the clipped points whose gap to the face (both margins
/// off) is below `margin` give at most four contacts, with the reference side as A. Returns how many.
int clippedPatchContacts(const Feature& face, manifold::PointsView reference, const Vec3& n_ref, const SE3& Mr,
                         int gr, manifold::PointsView incident, double inc_margin, const SE3& Mi, int gi,
                         double margin, std::vector<Contact>& out);
}  // namespace narrowphase

}  // namespace rigidiff
