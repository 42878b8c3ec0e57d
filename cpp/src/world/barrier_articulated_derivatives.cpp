// Derivatives of the step of a barrier world with skeletons (world/barrier_articulated_derivatives.hpp).
#include "rigidiff/world/barrier_articulated_derivatives.hpp"

#include <cmath>
#include <utility>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/crba.hpp"
#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/point_jacobian.hpp"
#include "rigidiff/algorithm/rnea_derivatives.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/barrier_friction.hpp"
#include "rigidiff/world/barrier_skeleton_parameters.hpp"
#include "rigidiff/world/floating_base_chart.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {

void addSurfaceCurvature(const ArticulatedBarrier& art, const Data& data, int k, const double* g, MatX& G) {
  const int j = art.surfaces[k].joint;
  if (j == 0) return;
  const SE3& pose = data.oMi[j];
  const Vec3 gp(g[0], g[1], g[2]);
  Mat3 gR;  // the gradient on the rows of R
  for (int r = 0; r < 3; ++r) gR.row(r) = Eigen::Map<const Vec3>(g + 3 + 3 * r).transpose();
  std::vector<int> dofs;
  forChainDofs(art.model, j, [&](int c) { dofs.push_back(c); });
  // a free, ball or planar joint's columns turn with each of its own dofs (its frame moves as q (+) e), not only
  // with those before them
  const auto group_joint = [&](int e, int c) {
    const int i = art.model.dof_joint[e];
    const JointType t = art.model.joints[i].type;
    return i == art.model.dof_joint[c] && (t == JointType::Free || t == JointType::Ball || t == JointType::Planar);
  };
  for (int e : dofs) {
    const Vec3 ve = data.J.col(e).head<3>(), we = data.J.col(e).tail<3>();
    const Vec3 dp = ve + we.cross(pose.p);  // d p / d s_e
    const Mat3 dR = skew(we) * pose.R;      // d R / d s_e
    for (int c : dofs) {
      const Vec3 vc = data.J.col(c).head<3>(), wc = data.J.col(c).tail<3>();
      // a joint's twist turns with the dofs before it in the chain (the Lie bracket [S_e, S_c]), not after
      Vec3 dv = Vec3::Zero(), dw = Vec3::Zero();
      if (e < c || group_joint(e, c)) {
        dv = we.cross(vc) + ve.cross(wc);
        dw = we.cross(wc);
      }
      // the surface Jacobian's column c is (v_c + w_c x p, rows of [w_c]x R): its derivative in s_e
      const Vec3 dlin = dv + dw.cross(pose.p) + wc.cross(dp);
      const Mat3 drot = skew(dw) * pose.R + skew(wc) * dR;
      G(e, c) += gp.dot(dlin) + gR.cwiseProduct(drot).sum();
    }
  }
}

namespace {

using ArtRowMajorMatX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The contact coordinates y(x) of a state and the link surfaces' Jacobians there; each contact participant's map
// into the state: a body's 12 coordinates (the identity at its columns), a moving link surface's Jacobian (at the
// joint coordinates' columns), or none (a surface welded to the world).
struct ParticipantMaps {
  VecX y;
  std::vector<MatX> jac;
  int ns = 0, nbodies = 0;

  void evaluate(const ArticulatedBarrier& art, ArticulatedBarrierData& ad, int bodies, const double* q) {
    ns = art.model.nv;
    nbodies = bodies;
    y.resize(ad.contact.nq());
    contactCoordinates(art, ad.data, nbodies, q, y.data());
    if (ns > 0) computeJointJacobians(art.model, ad.data, q);
    jac.resize(art.surfaces.size());
    for (size_t k = 0; k < art.surfaces.size(); ++k) surfaceJacobian(art, ad.data, static_cast<int>(k), jac[k]);
  }
  bool welded(const ArticulatedBarrier& art, int p) const { return p >= nbodies && art.surfaces[p - nbodies].joint == 0; }
  int offset(int p) const { return p < nbodies ? ns + 12 * p : 0; }
  MatX map(int p) const { return p < nbodies ? MatX(MatX::Identity(12, 12)) : jac[p - nbodies]; }
};

// out[rows of a, columns of b] += A^T B Bm, A and Bm participants a's and b's maps (rows: of `rows`, columns: of
// `cols`); nothing when either is welded to the world
void addMapped(const ArticulatedBarrier& art, const ParticipantMaps& rows, int a, const Mat12& B,
               const ParticipantMaps& cols, int b, MatX& out) {
  if (rows.welded(art, a) || cols.welded(art, b)) return;
  const MatX A = rows.map(a), Bm = cols.map(b);
  out.block(rows.offset(a), cols.offset(b), A.cols(), Bm.cols()).noalias() += A.transpose() * B * Bm;
}

// The joint terms of the linearisation with free or ball joints (docs/affine.md, "Floating bases"): the step's
// residual in the tangent at q' is rho = Jd^T r(dq) + J^T g_y, r = M(q_n) u - h^2 (tau_c - b) - h P^T r_g(v_n)
// + h D dq + h^2 K (d_r + dq), u = dq - h (v_n + h s(v_n)), dq = q' (-) q_n in the step's chart, r_g the implicit
// gyroscopic impulse (free_joint_motion.hpp, zero with gyroscopic="explicit"). Adds to Kss its derivative
// along delta' (Jd^T A Jd + V Jd, A = M + h D + h^2 K, V the derivative of Jd^T at fixed r, the joint limits'
// Hessian); sets the joints' blocks of R = -d rho / d delta_n, V = -d rho / d v_n, T, Tl and the maps of the
// outputs (lin.Jd, lin.Dn, lin.v_step).
void linearizeFloatingJoints(const BarrierWorldModel& world, const ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                             const double* q, const double* v, const double* tau, const double* q_next, double kappa_end,
                             MatX& Kss, ArticulatedStepLinearisation& lin, VecX& limit_dshat) {
  const Model& model = art.model;
  const int ns = model.nv;
  const double h = world.dt;
  VecX dq(ns), v_pred = Eigen::Map<const VecX>(v, ns);
  stepDisplacement(model, q, q_next, dq.data());
  addStepFrameTurn(model, v, h, v_pred.data());
  const MatX M = crba(model, ad.data, q);
  const VecX a = (dq - h * v_pred) / (h * h);
  computeRNEADerivatives(model, ad.data, q, v, a.data());  // data.tau = rnea(q, v, a) = M a + b
  VecX d_rest(ns);
  difference(model, model.rest_position.data(), q, d_rest.data());
  VecX tau_c = Eigen::Map<const VecX>(tau, ns).cwiseMax(-model.effort_limit).cwiseMin(model.effort_limit);
  addGyroscopicImpulses(model, v, h, 1.0 / h, tau_c.data());  // as the potential takes it: a force P^T r_g / h
  addFrameTurnDampingForce(model, v, v_pred, h, tau_c);       // and (D + h K)(v~ - v)
  const VecX r = h * h * (ad.data.tau - tau_c) + h * model.damping.cwiseProduct(dq) +
                 h * h * model.stiffness.cwiseProduct(d_rest + dq);
  MatX A = M;
  A.diagonal() += h * model.damping + h * h * model.stiffness;
  MatX Vd, D_rest(ns, ns), S = MatX::Zero(ns, ns);
  displacementJacobian(model, dq.data(), lin.Jd);
  displacementJacobianDerivative(model, dq.data(), r.data(), Vd);
  displacementStartJacobian(model, dq.data(), lin.Dn);
  const MatX JdtA = lin.Jd.transpose() * A + Vd;  // d (Jd^T r) / d dq
  Kss += JdtA * lin.Jd;
  // the limits' gradient is in the tangent at q' already (no Jd)
  jointLimitDerivatives(art, world.options.dhat, q_next, kappa_end, Kss, limit_dshat.data());
  dDifference(model, model.rest_position.data(), q, 1, D_rest.data());
  lin.R.topLeftCorner(ns, ns) = -(JdtA * lin.Dn + lin.Jd.transpose() * (h * h * ad.data.dtau_dq +
                                                                         h * h * model.stiffness.asDiagonal() * D_rest));
  addStepFrameTurnJacobian(model, v, h, S);  // d (h s(v)) / d v
  S.diagonal().array() += 1.0;
  MatX F = h * M * S - h * h * ad.data.dtau_dv;
  addGyroscopicImpulseJacobian(model, v, h, h, F);
  // the frame turn's damping force (D + h K)(v~ - v): h^2 (D + h K)(S - I) in -d r / d v_n
  const VecX dk = h * h * (model.damping + h * model.stiffness);
  for (int i = 0; i < ns; ++i)
    if (dk[i] != 0.0) {
      F.row(i) += dk[i] * S.row(i);
      F(i, i) -= dk[i];
    }
  lin.V.topLeftCorner(ns, ns) = lin.Jd.transpose() * F;
  for (int c = 0; c < ns; ++c) lin.T[c] = (tau[c] > -model.effort_limit[c] && tau[c] < model.effort_limit[c]) ? h * h : 0.0;
  const int n = static_cast<int>(lin.R.rows());
  lin.Tl = MatX::Identity(n, n);
  lin.Tl.topLeftCorner(ns, ns) = lin.Jd.transpose();
  lin.v_step = dq / h;
}

}  // namespace

void linearizeArticulatedStep(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                              BarrierWorldData& data, const double* q, const double* v, const double* tau,
                              const double* q_next, double kappa_start, double kappa_end,
                              ArticulatedStepLinearisation& lin) {
  const bool rotations = hasRotationGroupJoints(art.model);
  const int ns = art.model.nv, nbodies = static_cast<int>(world.bodies.size()), n = ns + 12 * nbodies;
  const double h = world.dt;
  art.model.gravity = world.gravity;
  buildArticulatedContactModel(world, art, ad.contact);
  const BarrierWorldModel& contact = ad.contact;
  const auto fixed = [&](int p) { return contact.bodies[p].fixed; };

  // the contact model linearised at y(x') from y(x_n): its exact Hessian, friction frames, static couplings and
  // parameter derivatives in the contact coordinates
  ParticipantMaps start, end;
  start.evaluate(art, ad, nbodies, q);
  end.evaluate(art, ad, nbodies, q_next);  // leaves the kinematics at q_next in ad.data for the curvature
  VecX vy = VecX::Zero(contact.nq());
  vy.head(12 * nbodies) = Eigen::Map<const VecX>(v + ns, 12 * nbodies);
  BarrierStepLinearisation cl;
  linearizeBarrierContacts(contact, data, start.y.data(), vy.data(), end.y.data(), kappa_start, kappa_end, nbodies, cl);

  // K: the exact Hessian of E over the whole state (a static mesh's columns hold its coupling to the unknowns)
  MatX K = MatX::Zero(n, n);
  data.hessian.forEachBlock([&](int r, int c, const Mat12& B) {
    if (fixed(r) || fixed(c)) return;
    addMapped(art, end, r, B, end, c, K);
    if (r != c) addMapped(art, end, c, B.transpose(), end, r, K);
  });
  for (const StaticCoupling& c : cl.coupling) addMapped(art, end, c.moving, c.block, end, c.fixed, K);
  // the curvature of the surfaces' pose maps against the contact gradient at y(x') (barrier and friction)
  VecX gy = VecX::Zero(contact.nq());
  barrierPotential(contact, data, kappa_end, gy.data(), nullptr);
  frictionPotential(contact, data, end.y.data(), start.y.data(), gy.data(), nullptr);
  MatX Kss = MatX::Zero(ns, ns);
  for (size_t k = 0; k < art.surfaces.size(); ++k)
    addSurfaceCurvature(art, ad.data, static_cast<int>(k), gy.data() + 12 * (nbodies + k), Kss);
  // row c, column e: d (J^T g_y)_c / d delta_e (symmetric without free or ball joints)
  if (rotations) Kss.transposeInPlace();
  // the skeletons' own terms, and the start state's: M(s_n) u + h^2 b(s_n, v_n) = h^2 rnea(s_n, v_n, u / h^2)
  lin.R = MatX::Zero(n, n);
  lin.V = MatX::Zero(n, n);
  lin.T = VecX::Zero(n);
  VecX limit_dshat = VecX::Zero(ns);
  lin.Tl.resize(0, 0);
  if (ns > 0 && rotations) {
    linearizeFloatingJoints(world, art, ad, q, v, tau, q_next, kappa_end, Kss, lin, limit_dshat);
  } else if (ns > 0) {
    const MatX M = crba(art.model, ad.data, q);
    const Eigen::Map<const VecX> s0(q, ns), s1(q_next, ns), vs(v, ns), ts(tau, ns);
    const VecX a = ((s1 - s0) - h * vs) / (h * h);
    computeRNEADerivatives(art.model, ad.data, q, v, a.data());
    Kss += M;
    Kss.diagonal() += h * art.model.damping + h * h * art.model.stiffness;
    jointLimitDerivatives(art, world.options.dhat, q_next, kappa_end, Kss, limit_dshat.data());
    lin.R.topLeftCorner(ns, ns) = M - h * h * ad.data.dtau_dq;
    lin.R.topLeftCorner(ns, ns).diagonal() += h * art.model.damping;
    lin.V.topLeftCorner(ns, ns) = h * M - h * h * ad.data.dtau_dv;
    const VecX& limit = art.model.effort_limit;
    for (int c = 0; c < ns; ++c) lin.T[c] = (ts[c] > -limit[c] && ts[c] < limit[c]) ? h * h : 0.0;  // clipped: 0
  }
  K.topLeftCorner(ns, ns) += Kss;
  // with free or ball joints the pieces are not symmetric one by one, their sum is at the solution (the frame
  // fields' brackets act on the vanishing gradient): its symmetric part, exact to the Newton tolerance
  if (rotations) K.topLeftCorner(ns, ns) = 0.5 * (K.topLeftCorner(ns, ns) + K.topLeftCorner(ns, ns).transpose()).eval();
  lin.fixed.assign(n, 0);
  for (int i = 0; i < nbodies; ++i) {
    const AffineBody& body = world.bodies[i];
    if (body.fixed) {
      for (int r = 0; r < 12; ++r) lin.fixed[ns + 12 * i + r] = 1;
      continue;
    }
    lin.R.block<12, 12>(ns + 12 * i, ns + 12 * i) += body.mass_matrix;
    lin.V.block<12, 12>(ns + 12 * i, ns + 12 * i) = h * body.mass_matrix;
    lin.T.segment<12>(ns + 12 * i).setConstant(h * h);
  }
  // the friction's dependence on the start state: its frame and slip reference at y(x_n), mapped by P(x_n)
  MatX C = MatX::Zero(n, n);
  for (const FrictionPairDerivative& f : cl.friction)
    for (int s = 0; s < 2; ++s)
      for (int t = 0; t < 2; ++t)
        if (f.bodies[s] >= 0 && f.bodies[t] >= 0 && !fixed(f.bodies[s]))
          addMapped(art, end, f.bodies[s], Mat12(f.start.block<12, 12>(12 * s, 12 * t)), start, f.bodies[t], C);
  lin.R -= C;
  // dr/dtheta: the contact model's pulled back by P(x')^T, the joint limits' dhat, and the skeletons' own
  // parameters and gravity on the joints' rows (through Jd^T with free or ball joints)
  const int nw = barrierParameterCount(world);
  lin.P = MatX::Zero(n, nw + skeletonParameterCount(art.model));
  for (int p = 0; p < static_cast<int>(contact.bodies.size()); ++p)
    if (!fixed(p)) lin.P.block(end.offset(p), 0, p < nbodies ? 12 : ns, nw).noalias() +=
          end.map(p).transpose() * cl.parameters.middleRows(12 * p, 12);
  lin.P.col(2 * nbodies + 1).head(ns) += 2.0 * world.options.dhat * limit_dshat;
  if (ns > 0) {
    MatX Ps, Pg;
    skeletonParameterDerivatives(art.model, ad.data, h, q, v, q_next, Ps, Pg);
    if (rotations) {
      Ps = lin.Jd.transpose() * Ps;
      Pg = lin.Jd.transpose() * Pg;
    }
    lin.P.block(0, nw, ns, Ps.cols()) = Ps;
    lin.P.block(0, 2 * nbodies + 2, ns, 3) += Pg;
  }
  // a static mesh's coordinates move it where the step keeps it: its columns of K push on the unknowns; its rows
  // are no equations (H the identity there)
  for (int i = 0; i < n; ++i) {
    if (!lin.fixed[i]) continue;
    lin.R.col(i) -= K.col(i);
    lin.R.row(i).setZero();
    lin.V.row(i).setZero();
    lin.P.row(i).setZero();
    K.row(i).setZero();
    K.col(i).setZero();
    K(i, i) = 1.0;
  }
  lin.H.compute(K);
  if (lin.H.info() != Eigen::Success)
    RD_THROW(std::runtime_error, "barrier step derivatives: the Hessian at the solution is singular");
}

void articulatedStepJacobians(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                              BarrierWorldData& data, const double* q, const double* v, const double* tau,
                              double* q_out, double* v_out, double* dq_dq, double* dq_dv, double* dq_dtau,
                              double* dv_dq, double* dv_dv, double* dv_dtau, double* dq_dp, double* dv_dp) {
  articulatedBarrierStep(world, art, ad, data, q, v, tau, q_out, v_out);
  ArticulatedStepLinearisation lin;
  linearizeArticulatedStep(world, art, ad, data, q, v, tau, q_out, data.stats.kappa_start, data.stats.kappa, lin);
  const int n = static_cast<int>(lin.R.rows()), np = static_cast<int>(lin.P.cols());
  const double h = world.dt;
  MatX X = lin.H.solve(lin.R);  // dq'/dq
  for (int i = 0; i < n; ++i)
    if (lin.fixed[i]) X(i, i) = 1.0;  // the step keeps a static mesh: q' = q
  const MatX Z = lin.H.solve(lin.V);
  const MatX Y = lin.Tl.size() ? MatX(lin.H.solve(lin.Tl * lin.T.asDiagonal())) : MatX(lin.H.solve(MatX(lin.T.asDiagonal())));
  const MatX P = -lin.H.solve(lin.P);
  Eigen::Map<ArtRowMajorMatX>(dq_dq, n, n) = X;
  Eigen::Map<ArtRowMajorMatX>(dq_dv, n, n) = Z;
  Eigen::Map<ArtRowMajorMatX>(dq_dtau, n, n) = Y;
  Eigen::Map<ArtRowMajorMatX> Vq(dv_dq, n, n), Vv(dv_dv, n, n), Vt(dv_dtau, n, n), Vp(dv_dp, n, np);
  Vq = (X - MatX::Identity(n, n)) / h;
  Vv = Z / h;
  Vt = Y / h;
  Eigen::Map<ArtRowMajorMatX>(dq_dp, n, np) = P;
  Vp = P / h;
  if (lin.Tl.size() == 0) return;
  // free or ball joints: v' = re-expressed dq / h, dq moving by Jd delta' and by Dn with the start configuration
  const int ns = static_cast<int>(lin.Jd.rows());
  const auto joint_rows = [&](const MatX& W, bool start) {
    MatX out = lin.Jd * W.topRows(ns);
    if (start) out.leftCols(ns) += lin.Dn;
    out /= h;
    reexpressStepVelocityRows(art.model, h, lin.v_step.data(), out);
    return out;
  };
  Vq.topRows(ns) = joint_rows(X, true);
  Vv.topRows(ns) = joint_rows(Z, false);
  Vt.topRows(ns) = joint_rows(Y, false);
  Vp.topRows(ns) = joint_rows(P, false);
  // the implicit gyroscopic update's second half (b) also depends on the inertia and armature at a fixed v~
  const int nw = np - skeletonParameterCount(art.model);
  addGyroscopicRateParameterColumns(art.model, lin.v_step.data(), h, nw, nw + 10 * (art.model.njoints - 1) + 2 * ns,
                                    Vp.topRows(ns));
}

void articulatedVjpAt(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                      BarrierWorldData& data, const double* q, const double* v, const double* tau,
                      const double* q_next, double kappa_start, double kappa_end, const double* gq_next,
                      const double* gv_next, double* gq, double* gv, double* gtau, double* gparams) {
  ArticulatedStepLinearisation lin;
  linearizeArticulatedStep(world, art, ad, data, q, v, tau, q_next, kappa_start, kappa_end, lin);
  const int n = static_cast<int>(lin.R.rows());
  const double h = world.dt;
  const Eigen::Map<const VecX> a(gq_next, n), b(gv_next, n);
  // q' enters directly and through v' = (q' - q) / dt; a static mesh's rows are no unknowns (w = 0 there). With
  // free or ball joints the joints' v' is the re-expressed dq / h: its cotangent reaches delta' through Jd^T and
  // the start through Dn^T
  const int ns = static_cast<int>(lin.Jd.rows());
  VecX bj;  // the joints' cotangent of dq
  VecX rhs = a + b / h;
  if (lin.Tl.size()) {
    bj.resize(ns);
    reexpressStepCotangent(art.model, h, lin.v_step.data(), gv_next, bj.data());
    bj /= h;
    rhs.head(ns) = a.head(ns) + lin.Jd.transpose() * bj;
  }
  for (int i = 0; i < n; ++i)
    if (lin.fixed[i]) rhs[i] = 0.0;
  const VecX w = lin.H.solve(rhs);  // H is symmetric: one solve serves the transposed system
  Eigen::Map<VecX> out_q(gq, n);
  out_q.noalias() = lin.R.transpose() * w;
  out_q -= b / h;
  if (lin.Tl.size()) out_q.head(ns) = lin.R.leftCols(ns).transpose() * w + lin.Dn.transpose() * bj;
  for (int i = 0; i < n; ++i)
    if (lin.fixed[i]) out_q[i] += a[i] + b[i] / h;
  Eigen::Map<VecX>(gv, n).noalias() = lin.V.transpose() * w;
  Eigen::Map<VecX>(gtau, n) = lin.T.cwiseProduct(lin.Tl.size() ? VecX(lin.Tl.transpose() * w) : w);
  Eigen::Map<VecX>(gparams, lin.P.cols()).noalias() = -lin.P.transpose() * w;
  if (lin.Tl.size()) {  // (b)'s direct dependence on the inertia and armature, as in articulatedStepJacobians
    const int nw = static_cast<int>(lin.P.cols()) - skeletonParameterCount(art.model);
    addGyroscopicRateParameterVJP(art.model, lin.v_step.data(), h, gv_next, gparams + nw,
                                  gparams + nw + 10 * (art.model.njoints - 1) + 2 * ns);
  }
}

}  // namespace rigidiff
