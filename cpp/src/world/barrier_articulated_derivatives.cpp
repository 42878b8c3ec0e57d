// Derivatives of the step of a barrier world with skeletons (world/barrier_articulated_derivatives.hpp).
#include "rigidiff/world/barrier_articulated_derivatives.hpp"

#include <cmath>
#include <utility>

#include "rigidiff/algorithm/crba.hpp"
#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/point_jacobian.hpp"
#include "rigidiff/algorithm/rnea_derivatives.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/barrier_friction.hpp"

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
  for (int e : dofs) {
    const Vec3 ve = data.J.col(e).head<3>(), we = data.J.col(e).tail<3>();
    const Vec3 dp = ve + we.cross(pose.p);  // d p / d s_e
    const Mat3 dR = skew(we) * pose.R;      // d R / d s_e
    for (int c : dofs) {
      const Vec3 vc = data.J.col(c).head<3>(), wc = data.J.col(c).tail<3>();
      // a joint's twist turns with the dofs before it in the chain (the Lie bracket [S_e, S_c]), not after
      Vec3 dv = Vec3::Zero(), dw = Vec3::Zero();
      if (e < c) {
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

}  // namespace

void linearizeArticulatedStep(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                              BarrierWorldData& data, const double* q, const double* v, const double* tau,
                              const double* q_next, double kappa_start, double kappa_end,
                              ArticulatedStepLinearisation& lin) {
  // free and ball joints: their step is not differentiated yet (the Python side raises NotImplementedError first)
  for (int j = 1; j < art.model.njoints; ++j)
    RD_CHECK_ARG(art.model.joints[j].type != JointType::Free && art.model.joints[j].type != JointType::Ball,
                 "joint '" << art.model.names[j] << "': the derivatives of barrier steps with free or ball joints "
                           << "are not implemented yet");
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
  // the skeletons' own terms, and the start state's: M(s_n) u + h^2 b(s_n, v_n) = h^2 rnea(s_n, v_n, u / h^2)
  lin.R = MatX::Zero(n, n);
  lin.V = MatX::Zero(n, n);
  lin.T = VecX::Zero(n);
  VecX limit_dshat = VecX::Zero(ns);
  if (ns > 0) {
    const MatX M = crba(art.model, ad.data, q);
    const Eigen::Map<const VecX> s0(q, ns), s1(q_next, ns), vs(v, ns), ts(tau, ns);
    const VecX a = ((s1 - s0) - h * vs) / (h * h);
    computeRNEADerivatives(art.model, ad.data, q, v, a.data());
    Kss += M;
    Kss.diagonal() += h * art.model.damping + h * h * art.model.stiffness;
    VecX limit_diag = VecX::Zero(ns);
    jointLimitDerivatives(art, world.options.dhat, q_next, kappa_end, limit_diag.data(), limit_dshat.data());
    Kss.diagonal() += limit_diag;
    lin.R.topLeftCorner(ns, ns) = M - h * h * ad.data.dtau_dq;
    lin.R.topLeftCorner(ns, ns).diagonal() += h * art.model.damping;
    lin.V.topLeftCorner(ns, ns) = h * M - h * h * ad.data.dtau_dv;
    const VecX& limit = art.model.effort_limit;
    for (int c = 0; c < ns; ++c) lin.T[c] = (ts[c] > -limit[c] && ts[c] < limit[c]) ? h * h : 0.0;  // clipped: 0
  }
  K.topLeftCorner(ns, ns) += Kss;
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
  // dr/dtheta: the contact model's pulled back by P(x')^T, and the joint limits' dhat
  lin.P = MatX::Zero(n, barrierParameterCount(world));
  for (int p = 0; p < static_cast<int>(contact.bodies.size()); ++p)
    if (!fixed(p)) lin.P.middleRows(end.offset(p), p < nbodies ? 12 : ns).noalias() +=
          end.map(p).transpose() * cl.parameters.middleRows(12 * p, 12);
  lin.P.col(2 * nbodies + 1).head(ns) += 2.0 * world.options.dhat * limit_dshat;
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
  const MatX Y = lin.H.solve(MatX(lin.T.asDiagonal()));
  const MatX P = -lin.H.solve(lin.P);
  Eigen::Map<ArtRowMajorMatX>(dq_dq, n, n) = X;
  Eigen::Map<ArtRowMajorMatX>(dq_dv, n, n) = Z;
  Eigen::Map<ArtRowMajorMatX>(dq_dtau, n, n) = Y;
  Eigen::Map<ArtRowMajorMatX>(dv_dq, n, n) = (X - MatX::Identity(n, n)) / h;
  Eigen::Map<ArtRowMajorMatX>(dv_dv, n, n) = Z / h;
  Eigen::Map<ArtRowMajorMatX>(dv_dtau, n, n) = Y / h;
  Eigen::Map<ArtRowMajorMatX>(dq_dp, n, np) = P;
  Eigen::Map<ArtRowMajorMatX>(dv_dp, n, np) = P / h;
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
  // q' enters directly and through v' = (q' - q) / dt; a static mesh's rows are no unknowns (w = 0 there)
  VecX rhs = a + b / h;
  for (int i = 0; i < n; ++i)
    if (lin.fixed[i]) rhs[i] = 0.0;
  const VecX w = lin.H.solve(rhs);  // H is symmetric: one solve serves the transposed system
  Eigen::Map<VecX> out_q(gq, n);
  out_q.noalias() = lin.R.transpose() * w;
  out_q -= b / h;
  for (int i = 0; i < n; ++i)
    if (lin.fixed[i]) out_q[i] += a[i] + b[i] / h;
  Eigen::Map<VecX>(gv, n).noalias() = lin.V.transpose() * w;
  Eigen::Map<VecX>(gtau, n) = lin.T.cwiseProduct(w);
  Eigen::Map<VecX>(gparams, lin.P.cols()).noalias() = -lin.P.transpose() * w;
}

}  // namespace rigidiff
