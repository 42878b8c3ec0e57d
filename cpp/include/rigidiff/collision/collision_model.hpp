// The collision geometry of a world (Pinocchio's GeometryModel / GeometryData split): shapes attached
// to the frames of a Model, the pairs allowed to touch, and the query that turns a configuration
// into a ContactSet.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "rigidiff/contact/contact_set.hpp"
#include "rigidiff/contact/body_ref.hpp"
#include "rigidiff/collision/shape.hpp"
#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// A shape attached to a frame of the Model.
struct Geometry {
  CollisionShape shape;
  int frame = 0;                    ///< frame (user body) it is attached to
  int joint = 0;                    ///< supporting joint of that frame (0: welded to the world)
  /// the body that moves it, as the contact layer sees it: Static (joint 0), else Articulated (the joint),
  /// or Particle where the world says the joint is a particle's (WorldModel::refresh)
  BodyRef body;
  int skeleton = 0;                 ///< skeleton index, for self-collision filtering
  SE3 placement = SE3::Identity();  ///< pose of the geometry in its frame
  double friction = 0.5;
  double restitution = 0.0;
  unsigned group = 1u;              ///< collides with g when (group & g.mask) and (g.group & mask)
  unsigned mask = ~0u;
  std::string name;
  Vec3 box_center = Vec3::Zero();    ///< bounding box of the shape in its own frame (margin included):
  Vec3 box_half = Vec3::Zero();      ///< centre and half extents, computed once (infinite for planes)
};

/// Immutable once built, like Model.
struct CollisionModel {
  std::vector<Geometry> geometries;
  std::vector<char> self_collision;  ///< per skeleton: may its own bodies touch each other?
  double margin = 0.0;              ///< contacts are reported below this distance (>= 0)

  /// Appends a geometry attached to frame `frame` of `model`; returns its index.
  int addGeometry(const Model& model, const CollisionShape& shape, int frame, int skeleton, const SE3& placement,
                  double friction, double restitution, unsigned group, unsigned mask, const std::string& name);
  /// May geometries i and j touch (filters only: different moving bodies, groups, self-collision,
  /// no parent-child pairs)?
  bool allowed(const Model& model, int i, int j) const;
};

/// Buffers and results of collision queries against one CollisionModel.
struct CollisionData {
  std::vector<SE3> placements;   ///< (ngeometries) world poses of the geometries
  std::vector<Vec3> lower, upper;///< (ngeometries) world bounding boxes (infinite for planes)
  std::vector<int> order;        ///< broad-phase sweep order
  std::vector<std::pair<int, int>> pairs;  ///< candidate pairs of the last query, i < j
  ContactSet contacts;           ///< contacts of the last query
  /// (ngeometries) how far each geometry may move before the next query (m, >= 0; zero unless a time
  /// step sets it): a pair is queried with the margin plus both reaches, so that a contact that may
  /// close within the step is seen before it does (a speculative contact)
  std::vector<double> reach;

  explicit CollisionData(const CollisionModel& cmodel);
};

/// World placements of every geometry (needs data.oMi from forwardKinematics).
void updateGeometryPlacements(const Model& model, const Data& data, const CollisionModel& cmodel,
                              CollisionData& cdata);

/// Sweep-and-prune on bounding boxes grown by the margin: the allowed pairs whose boxes overlap, in
/// increasing (i, j) order, into cdata.pairs. Needs the placements.
void broadPhase(const Model& model, const CollisionModel& cmodel, CollisionData& cdata);

/// Forward kinematics at q, placements, broad phase and narrow phase: cdata.contacts holds every
/// contact below the margin, pairs in increasing order. A contact's A is the pair's lower geometry
/// index, unless that one is welded to the world: then the moving geometry is A.
void computeContacts(const Model& model, Data& data, const CollisionModel& cmodel, CollisionData& cdata,
                     const double* q);

/// computeContacts without the forward kinematics: data.oMi must already hold the joints' placements.
void detectContacts(const Model& model, const Data& data, const CollisionModel& cmodel, CollisionData& cdata);

/// The broad and narrow phases of detectContacts at the placements already in cdata, each pair
/// queried with the margin plus its geometries' reaches.
void detectContactsAtPlacements(const Model& model, const CollisionModel& cmodel, CollisionData& cdata);

}  // namespace rigidiff
