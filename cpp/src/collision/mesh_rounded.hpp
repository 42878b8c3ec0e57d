// Internal to collision/: a triangle mesh against a sphere or a capsule, triangle by triangle.
#pragma once

#include <vector>

#include "rigidiff/contact/contact_set.hpp"
#include "rigidiff/collision/shape.hpp"

namespace rigidiff {
namespace narrowphase {

/// A triangle mesh (A) against a sphere or a capsule (B). Each sphere centre or capsule end meets the
/// closest feature of every nearby face (its interior, an edge or a vertex); an edge or vertex counts
/// only where it is the closest feature of every face around it (elsewhere a face beside it is
/// closer). A centre in front of a face it touches drops the faces it lies behind (across a thin
/// wall). Of the contacts of one centre, those whose normals agree within 5 degrees keep the deepest,
/// and at most 8 remain (a ball in a round hole touches every facet of its rim): the deepest, then each
/// time the one whose normal is farthest from those kept. The capsule's axis also meets the edges and
/// vertices it passes over where they are such local minima. Contacts are appended with A first.
/// `faces` are the candidates: every face whose box meets B's box grown by the margin, in a fixed order.
void meshRounded(const CollisionShape& mesh, const SE3& Mm, int gm, const std::vector<int>& faces,
                 const CollisionShape& rounded, const SE3& Mr, int gr, double margin, std::vector<Contact>& out);

}  // namespace narrowphase
}  // namespace rigidiff
