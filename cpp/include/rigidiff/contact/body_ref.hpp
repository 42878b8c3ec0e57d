// The body on one side of a contact (a contact side is {BodyRef{kind, index}, feature, stencil}):
// what moves the side's points, so that the contact layer maps a world point on it to its block's
// velocity through one switch on the kind (contact/point_jacobian.hpp), never through a chain walk of
// its own. Collision fills it from the geometry (Geometry::body); the world sets the kinds.
#pragma once

namespace rigidiff {

enum class BodyKind : int {
  Static = 0,       ///< welded to the world: its points do not move
  Articulated = 1,  ///< a link of a kinematic tree: a point's velocity is the chain walk of its joint
  Particle = 2,     ///< a point mass on its own 3 translation dofs, in world axes (identity point map)
};

struct BodyRef {
  BodyKind kind = BodyKind::Static;
  /// Articulated: the model joint that moves the link; Particle: the model joint of its 3 dofs (the
  /// particle block's dofs live in the model, as a world-attached translation); Static: 0
  int index = 0;

  /// The model joint whose spatial velocity moves the body (0, the world, for a static one).
  int joint() const { return kind == BodyKind::Static ? 0 : index; }
  bool moves() const { return kind != BodyKind::Static; }
};

}  // namespace rigidiff
