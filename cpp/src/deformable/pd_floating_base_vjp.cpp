// What the start s0 of free, ball and planar joints gives the adjoint of a projective step through s = s0 (+) ds at
// a fixed displacement ds (pd_skeleton.hpp, pdFloatingStartCotangents). Moving the start by e (s0 (+) e, the step's
// chart) and the unknown by d moves s to s (+) eta(e, d) in the step's chart at s, with
//   eta_d = A = Jd^-1,   eta_e = -A Dn   (world/floating_base_chart.hpp),
// and on each free joint (E = exp3(phi), phi = ds_ang) the mixed second derivatives
//   eta_lin = E^T (e_lin + exp3(e_ang) (ds_lin + d_lin) - ds_lin):   d^2 eta_lin[e, d] = E^T (e_ang x d_lin),
//   eta_ang = log3(exp3(E^T e_ang) exp3(omega(d))), omega = log3(E^T exp3(phi + d)):
//                                                             d^2 eta_ang[e, d] = 1/2 (E^T e_ang) x (Jr3(phi) d_ang)
// (a ball joint the angular part alone), and on each planar joint (E = R(ds_w), J the quarter turn)
//   eta_lin = E^T (e_lin + R(e_w) (ds_lin + d_lin) - ds_lin):   d^2 eta_lin[e, d] = E^T J d_lin e_w.
// The contacts' and the limits' gradient in ds is A^T g(s), g their gradient in the tangent at s, so its
// derivative in e contracted with the adjoint ws is (A ws)^T H_S eta_e + g . d^2 eta[e, ws], H_S their Hessian in
// the step's chart at s: the chain chart's (linkCoupling's, jointLimitPenalty's) plus the Euler turns' correction
// (chainChartHessianToDisplacement; none on a planar joint, whose chain chart is the step's). The vertices' part of
// grad G moves by the mixed blocks: Z^T xs eta_e.
#include <cmath>

#include "rigidiff/deformable/pd_skeleton.hpp"
#include "rigidiff/spatial/explog.hpp"
#include "rigidiff/world/floating_base_chart.hpp"

namespace rigidiff {
namespace deformable {

void pdFloatingStartCotangents(const PdModel& model, const PdSkeletons& sk, PdSkeletonData& ad, const Points& X,
                               const Points& Z, const VecX& ws, const VecX& gs_next, VecX& gs0) {
  const Model& m = sk.model;
  const int nv = m.nv;
  const double* ds = ad.ds.data();
  MatX A, Dn, H = MatX::Zero(nv, nv);
  VecX g = VecX::Zero(nv);
  displacementInverseJacobian(m, ds, A);
  displacementStartJacobian(m, ds, Dn);
  const MatX eta = -A * Dn;
  linkCoupling(model, sk, ad, X, ad.s, nullptr, &g, &H, true);  // in the chain chart at s, blocks in its tangent
  jointLimitPenalty(sk, ad.s, &g, &H);
  const VecX Aws = A * ws;
  VecX back = H * Aws;  // H_S (A ws), H_S = H + the Euler turns' correction (below)
  for (PdCouplingBlock& b : ad.blocks) back += b.xs.transpose() * Z.row(b.vertex).transpose();
  VecX curvature = VecX::Zero(nv);  // g . d^2 eta[., ws], a cotangent of e
  for (int i = 1; i < m.njoints; ++i) {
    const JointModel& j = m.joints[i];
    const int o = j.idx_v, a = o + j.nv - 3;
    if (j.type == JointType::Planar) {  // g_lin . E^T J ws_lin, a cotangent of e_w
      const double c = std::cos(ds[o + 2]), sn = std::sin(ds[o + 2]);
      const Eigen::Vector2d Eg(c * g[o] - sn * g[o + 1], sn * g[o] + c * g[o + 1]);
      curvature[o + 2] = Eg.dot(Eigen::Vector2d(-ws[o + 1], ws[o]));
      continue;
    }
    if (j.type != JointType::Free && j.type != JointType::Ball) continue;
    const Vec3 phi(ds[a], ds[a + 1], ds[a + 2]), ga = g.segment<3>(a), wa = ws.segment<3>(a);
    const Vec3 wd = Aws.segment<3>(a);
    // the Euler turns' correction of the chain chart's Hessian: -g_z / 2 at (x, y), g_y / 2 at (x, z), -g_x / 2
    // at (y, z), symmetric (world/floating_base_chart.hpp)
    back[a] += -0.5 * ga[2] * wd[1] + 0.5 * ga[1] * wd[2];
    back[a + 1] += -0.5 * ga[2] * wd[0] - 0.5 * ga[0] * wd[2];
    back[a + 2] += 0.5 * ga[1] * wd[0] - 0.5 * ga[0] * wd[1];
    const Mat3 E = exp3(phi);
    Vec3 c = 0.5 * E * (Jr3(phi) * wa).cross(ga);
    if (j.type == JointType::Free) c += Vec3(ws.segment<3>(o)).cross(E * g.segment<3>(o));
    curvature.segment<3>(a) = c;
  }
  gs0 -= eta.transpose() * back + curvature;
  gs0 += eta.transpose() * gs_next;
}

}  // namespace deformable
}  // namespace rigidiff
