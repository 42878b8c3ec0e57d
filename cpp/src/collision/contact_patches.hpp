// Internal to collision/: contact reduction per patch, for the triangle-level mesh pairs.
#pragma once

#include <cstddef>
#include <vector>

#include "rigidiff/contact/contact_set.hpp"

namespace rigidiff {
namespace narrowphase {

/// Normals within this angle (degrees) belong to one patch.
constexpr double kPatchAngleDegrees = 5.0;
/// At most this many contacts remain per patch.
constexpr std::size_t kMostPerPatch = 8;

/// Groups the contacts out[first:] into patches (in order of discovery, a contact joins the first patch
/// whose first normal is within kPatchAngleDegrees of its own) and reduces each patch of more than
/// kMostPerPatch contacts to: its deepest contact, then the extreme contact points along eight fixed
/// directions of the patch's tangent plane (the diagonals first, then the axes), up to kMostPerPatch in
/// all. Ties (within 1e-9 size) go to the earlier contact, so that a resting patch keeps the same
/// contacts from step to step. The kept contacts stay in their order of discovery.
void reducePatches(std::vector<Contact>& out, std::size_t first, double size);

}  // namespace narrowphase
}  // namespace rigidiff
