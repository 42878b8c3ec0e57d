// The shared contact layer (docs/architecture.md): the contacts that collision detection (collision/)
// hands to the contact solvers. A contact names geometries and their features, never body coordinates;
// the world maps each geometry to the body on that side (contact/body_ref.hpp).
#pragma once

#include <vector>

#include "rigidiff/collision/feature.hpp"

namespace rigidiff {

/// One contact point between geometry A and geometry B.
struct Contact {
  int geom_a = -1;             ///< index of geometry A in its collision model
  int geom_b = -1;             ///< index of geometry B
  Feature feature_a;           ///< touching feature of A, in A's geometry frame
  Feature feature_b;           ///< touching feature of B, in B's geometry frame
  ContactType type = ContactType::PointFace;
  Vec3 point = Vec3::Zero();   ///< world contact point: the midpoint of the two witness points
  Vec3 normal = Vec3::UnitZ(); ///< world unit normal, from B to A
  double distance = 0.0;       ///< signed distance along the normal (< 0 in penetration)

  /// Recomputes point, normal and distance from the features under the placements of A and B.
  void update(const SE3& Ma, const SE3& Mb) {
    const FeatureGeometry g = evaluateFeatures(feature_a, Ma, feature_b, Mb, normal);
    point = 0.5 * (g.point_a + g.point_b);
    normal = g.normal;
    distance = g.distance;
  }
};

/// The contacts of one collision query, in a deterministic order (geometry pairs in increasing
/// (a, b) order, then the narrow phase's order within a pair).
struct ContactSet {
  std::vector<Contact> contacts;
  void clear() { contacts.clear(); }
  int size() const { return static_cast<int>(contacts.size()); }
};

/// Builds a contact from its features (computing point, normal and distance) and appends it to `out`.
/// `normal_hint` orients pairs without a direction of their own.
void addContact(std::vector<Contact>& out, int geom_a, int geom_b, const Feature& fa, const SE3& Ma,
                const Feature& fb, const SE3& Mb, const Vec3& normal_hint);

}  // namespace rigidiff
