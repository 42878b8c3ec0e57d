// Recursive Newton-Euler inverse dynamics.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// tau = M(q) a + C(q, v) v + g(q) - sum J^T fext, armature included (M's diagonal).
/// \param[in] q (model.nq), v (model.nv), a (model.nv)
/// \param[in] with_fext use data.fext (per-joint wrenches in joint frames)
/// \return data.tau (model.nv)
const VecX& rnea(const Model& model, Data& data, const double* q, const double* v, const double* a, bool with_fext);

/// Bias forces C(q, v) v + g(q) (rnea with a = 0, no external wrench), into data.tau.
const VecX& nonLinearEffects(const Model& model, Data& data, const double* q, const double* v);

}  // namespace rigidiff
