// Kinetic and potential energy.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// 0.5 v^T M(q) v (armature included).
double kineticEnergy(const Model& model, Data& data, const double* q, const double* v);
/// Gravitational potential energy -sum m_i g . c_i (zero at the world origin); springs excluded.
double potentialEnergy(const Model& model, Data& data, const double* q);

}  // namespace rigidiff
