// The volume term of the corotated hyperelastic energy (pd_corotated_hyperelastic.hpp).
#include "rigidiff/deformable/pd_corotated_hyperelastic.hpp"

namespace rigidiff {
namespace deformable {

Mat3 cofactor(const Mat3& F) {
  // J = F0 . (F1 x F2) over F's columns, so the derivative with respect to each column is the cross product of
  // the other two (cyclically)
  Mat3 out;
  out.col(0) = F.col(1).cross(F.col(2));
  out.col(1) = F.col(2).cross(F.col(0));
  out.col(2) = F.col(0).cross(F.col(1));
  return out;
}

double determinantEnergy(const PdSample& s, const Mat3& F, Mat3* stress) {
  const double gap = F.determinant() - 1.0;
  *stress += s.w_determinant * gap * cofactor(F);
  return 0.5 * s.w_determinant * gap * gap;
}

Mat3 determinantStressDerivative(const PdSample& s, const Mat3& F, const Mat3& cof, const Mat3& dF) {
  // the cofactor is bilinear in F's columns: its derivative replaces one factor of each cross product by dF's
  Mat3 dcof;
  dcof.col(0) = dF.col(1).cross(F.col(2)) + F.col(1).cross(dF.col(2));
  dcof.col(1) = dF.col(2).cross(F.col(0)) + F.col(2).cross(dF.col(0));
  dcof.col(2) = dF.col(0).cross(F.col(1)) + F.col(0).cross(dF.col(1));
  const double gap = F.determinant() - 1.0;
  return s.w_determinant * ((cof.array() * dF.array()).sum() * cof + gap * dcof);
}

Mat3 determinantStressPerLambda(const PdSample& s, const Mat3& F) {
  return s.volume * (F.determinant() - 1.0) * cofactor(F);
}

}  // namespace deformable
}  // namespace rigidiff
