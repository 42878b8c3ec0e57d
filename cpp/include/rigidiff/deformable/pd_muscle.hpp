// The muscle energy of a Projective Dynamics sample, E = w/2 (|F m| - a)^2 (DiffPD's actuation after Min et al.
// 2019; its projection is a F m / |F m|, onto the sphere of radius a), and its derivatives. Each function reads
// the sample's muscle (s.muscle >= 0), fibre m, weight w and the model's activation a of that muscle.
#pragma once

#include "rigidiff/deformable/pd_model.hpp"

namespace rigidiff {
namespace deformable {

/// The energy, and its stress dE/dF added to *stress.
double muscleEnergy(const PdModel& model, const PdSample& s, const Mat3& F, Mat3* stress);

/// Adds d(stress)/dF to C (9 x 9, F's entries row-major).
void muscleStressDerivative(const PdModel& model, const PdSample& s, const Mat3& F, Eigen::Matrix<double, 9, 9>& C);

/// d(stress)/da and d(stress)/d(stiffness).
Mat3 muscleStressPerActivation(const PdSample& s, const Mat3& F);
Mat3 muscleStressPerStiffness(const PdModel& model, const PdSample& s, const Mat3& F);

}  // namespace deformable
}  // namespace rigidiff
