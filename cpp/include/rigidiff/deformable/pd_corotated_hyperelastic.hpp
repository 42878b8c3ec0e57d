// The corotated hyperelastic energy of a Projective Dynamics sample (Stomakhin et al. 2012's fixed corotated
// model), V (mu |F - R|^2 + lambda/2 (J - 1)^2) with R = U V^T of the rotation-variant SVD and J = det F, split
// as Projective Dynamics needs it: the shear term is the corotated PD energy of weight 2 mu V (projection R,
// carried by the sample's w_corotated), and the volume term w/2 (J - 1)^2 (w = lambda V, the sample's
// w_determinant), a polynomial in F with no projection, is here with its derivatives. Both are finite for an
// inverted element (J <= 0), which they push back the right way out.
#pragma once

#include "rigidiff/deformable/pd_model.hpp"

namespace rigidiff {
namespace deformable {

/// cof(F) = dJ/dF (J F^-T where F is invertible; defined for any F).
Mat3 cofactor(const Mat3& F);

/// The volume term w/2 (J - 1)^2 of s at F, and its stress w (J - 1) cof(F) added to *stress.
double determinantEnergy(const PdSample& s, const Mat3& F, Mat3* stress);

/// The volume term's stress derivative along dF: w ((cof(F) : dF) cof(F) + (J - 1) dcof(F)[dF]).
Mat3 determinantStressDerivative(const PdSample& s, const Mat3& F, const Mat3& cof, const Mat3& dF);

/// The volume term's stress per unit lambda: V (J - 1) cof(F).
Mat3 determinantStressPerLambda(const PdSample& s, const Mat3& F);

}  // namespace deformable
}  // namespace rigidiff
