// Composite rigid-body algorithm: the joint-space inertia matrix.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Fills data.M (model.nv x model.nv, both triangles, armature on the diagonal) at q (model.nq).
/// Uses data.J (world-frame subspaces) and data.oYcrb10 (composite inertias) as workspace.
const MatX& crba(const Model& model, Data& data, const double* q);

}  // namespace rigidiff
