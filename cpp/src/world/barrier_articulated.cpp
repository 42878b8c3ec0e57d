// Skeletons in a barrier world (world/barrier_articulated.hpp): the contact model of their link surfaces,
// their contact coordinates and Jacobians, and the step of a world that has them.
#include "rigidiff/world/barrier_articulated.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "rigidiff/abd/orthogonality.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/crba.hpp"
#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/algorithm/point_jacobian.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/contact/barrier.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/floating_base_chart.hpp"
#include "rigidiff/world/barrier_friction.hpp"
#include "rigidiff/world/barrier_step.hpp"
#include "rigidiff/world/block_hessian.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {

void ArticulatedBarrier::checkSupported() const {
  for (int j = 1; j < model.njoints; ++j) {
    const JointType t = model.joints[j].type;
    RD_CHECK_ARG(t == JointType::Revolute || t == JointType::Prismatic || t == JointType::Translational ||
                     t == JointType::Free || t == JointType::Ball || t == JointType::Planar,
                 "joint '" << model.names[j] << "': barrier worlds support revolute, prismatic, universal, "
                           << "translational, free, ball and planar joints only");
  }
}

void buildArticulatedContactModel(const BarrierWorldModel& world, const ArticulatedBarrier& art,
                                  BarrierWorldModel& contact) {
  contact.dt = world.dt;
  contact.gravity = world.gravity;
  contact.options = world.options;
  contact.planes = world.planes;
  contact.bodies = world.bodies;
  contact.collision_group.assign(world.bodies.size(), -1);
  contact.collision_joint.assign(world.bodies.size(), -1);
  contact.collision_parent.assign(world.bodies.size(), -1);
  contact.collision_self.assign(world.bodies.size(), 0);
  for (const ArticulatedSurface& s : art.surfaces) {
    contact.bodies.push_back(s.mesh);
    contact.bodies.back().fixed = s.joint == 0;
    contact.collision_group.push_back(s.group);
    contact.collision_joint.push_back(s.joint);
    contact.collision_parent.push_back(s.parent_joint);
    contact.collision_self.push_back(s.self_collision);
  }
}

void contactCoordinates(const ArticulatedBarrier& art, Data& data, int nbodies, const double* q, double* y) {
  const int ns = art.nq();
  for (int i = 0; i < 12 * nbodies; ++i) y[i] = q[ns + i];
  if (art.model.nq > 0) forwardKinematics(art.model, data, q);
  for (size_t k = 0; k < art.surfaces.size(); ++k) {
    const int j = art.surfaces[k].joint;
    double* out = y + 12 * (nbodies + static_cast<int>(k));
    const SE3 pose = j == 0 ? SE3::Identity() : data.oMi[j];
    for (int r = 0; r < 3; ++r) {
      out[r] = pose.p[r];
      for (int c = 0; c < 3; ++c) out[3 + 3 * r + c] = pose.R(r, c);
    }
  }
}

void surfaceJacobian(const ArticulatedBarrier& art, const Data& data, int k, MatX& jac) {
  jac.setZero(12, art.model.nv);
  const int j = art.surfaces[k].joint;
  if (j == 0) return;
  const SE3& pose = data.oMi[j];
  forChainDofs(art.model, j, [&](int c) {
    const Vec3 lin = data.J.col(c).head<3>(), w = data.J.col(c).tail<3>();
    // the joint origin moves as a world point (v_O + w x p); the rows of R turn as d R = [w]x R
    jac.col(c).head<3>() = lin + w.cross(pose.p);
    for (int r = 0; r < 3; ++r) {
      const Vec3 row = w[(r + 1) % 3] * pose.R.row((r + 2) % 3).transpose() -
                       w[(r + 2) % 3] * pose.R.row((r + 1) % 3).transpose();
      jac.col(c).segment<3>(3 + 3 * r) = row;
    }
  });
}

namespace {

using Clock = std::chrono::steady_clock;

// The state-space view of one Newton iterate: the contact coordinates y(q), the surface Jacobians at q.
struct Iterate {
  VecX y;
  std::vector<MatX> jac;  // per surface, 12 x nv
};

void evaluateMaps(const ArticulatedBarrier& art, ArticulatedBarrierData& ad, int nbodies, const VecX& q, Iterate& it) {
  // q: the state's configuration (the skeletons' nq coordinates, then the bodies')
  it.y.resize(ad.contact.nq());
  contactCoordinates(art, ad.data, nbodies, q.data(), it.y.data());
  it.jac.resize(art.surfaces.size());
  if (art.model.nv > 0) computeJointJacobians(art.model, ad.data, q.data());
  for (size_t k = 0; k < art.surfaces.size(); ++k) surfaceJacobian(art, ad.data, static_cast<int>(k), it.jac[k]);
}

// g_state = P^T g_y with P = dy/dq: the bodies' part copied, the surfaces' pulled back through their Jacobians
void pullBack(const ArticulatedBarrier& art, int nbodies, const Iterate& it, const VecX& gy, VecX& g) {
  const int ns = art.model.nv;
  g.segment(ns, 12 * nbodies) += gy.head(12 * nbodies);
  for (size_t k = 0; k < art.surfaces.size(); ++k)
    g.head(ns).noalias() += it.jac[k].transpose() * gy.segment<12>(12 * (nbodies + k));
}

// dy = P dq (the linearised move of the contact coordinates)
VecX pushForward(const ArticulatedBarrier& art, int nbodies, const Iterate& it, const VecX& dq) {
  const int ns = art.model.nv;
  VecX dy(12 * (nbodies + static_cast<int>(art.surfaces.size())));
  dy.head(12 * nbodies) = dq.segment(ns, 12 * nbodies);
  for (size_t k = 0; k < art.surfaces.size(); ++k)
    dy.segment<12>(12 * (nbodies + k)).noalias() = it.jac[k] * dq.head(ns);
  return dy;
}

// The skeletons' part of the incremental potential (scaled like the bodies': h^2 times an energy) at dq =
// q' - q_n, and its gradient into g.head(nv). M, tau_eff (tau_c - b) and the spring offset are the step's.
double skeletonPotential(const ArticulatedBarrier& art, double h, const MatX& M, const VecX& tau_eff,
                         const VecX& spring0, const VecX& v, const VecX& dq, VecX* g) {
  const VecX u = dq - h * v;
  const VecX Mu = M * u;
  const VecX& D = art.model.damping;
  const VecX& K = art.model.stiffness;
  const VecX stretch = spring0 + dq;
  const double value = 0.5 * u.dot(Mu) - h * h * tau_eff.dot(dq) + 0.5 * h * dq.dot(D.cwiseProduct(dq)) +
                       0.5 * h * h * stretch.dot(K.cwiseProduct(stretch));
  if (g) g->head(dq.size()) = Mu - h * h * tau_eff + h * D.cwiseProduct(dq) + h * h * K.cwiseProduct(stretch);
  return value;
}

// The Newton matrix of a world with skeletons, [[Hss, Hsb], [Hsb^T, Hbb]] over (joint coordinates, bodies):
// Hbb the bodies' 12 x 12 blocks of the contact Hessian (sparse: bodies couple only where they touch), Hsb and Hss
// the Gauss-Newton products of the surfaces' blocks with their Jacobians, plus the skeletons' own terms in Hss.
// Solved by the Schur complement on the joints: Hbb's sparse LDL^T, then S = Hss - Hsb Hbb^-1 Hsb^T (dense, of
// the joints' size), so a robot among many bodies costs one sparse factorisation and nv solves, not a dense n^3.
struct BorderedNewtonSystem {
  MatX Hss, Hsb, X;
  std::vector<Eigen::Triplet<double>> triplets;
  Eigen::SparseMatrix<double> Hbb;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> bodies;
  Eigen::LDLT<MatX> schur;

  // Hss (set by the caller to the skeletons' own terms) += the surfaces' products; Hsb, Hbb from the blocks
  void assemble(const ArticulatedBarrier& art, int nbodies, const Iterate& it, const BlockHessian& Hy) {
    const int ns = static_cast<int>(Hss.rows());
    Hsb.setZero(ns, 12 * nbodies);
    triplets.clear();
    auto jac = [&](int p) -> const MatX* {
      return p < nbodies || art.surfaces[p - nbodies].joint == 0 ? nullptr : &it.jac[p - nbodies];
    };
    Hy.forEachBlock([&](int r, int c, const Mat12& B) {
      if (r < nbodies && c < nbodies) {
        for (int i = 0; i < 12; ++i)
          for (int j = 0; j < 12; ++j)
            if (r != c || i >= j) triplets.emplace_back(12 * r + i, 12 * c + j, B(i, j));
        return;
      }
      const MatX *Jr = jac(r), *Jc = jac(c);
      if (r >= nbodies && c >= nbodies) {  // two surfaces (or one with itself)
        if (!Jr || !Jc) return;
        const MatX JrB = Jr->transpose() * B;
        Hss.noalias() += JrB * *Jc;
        if (r != c) Hss.noalias() += Jc->transpose() * JrB.transpose();
      } else if (r >= nbodies) {  // surface r, body c
        if (Jr) Hsb.middleCols<12>(12 * c).noalias() += Jr->transpose() * B;
      } else if (Jc) {  // body r, surface c: the block (c, r) is B^T
        Hsb.middleCols<12>(12 * r).noalias() += Jc->transpose() * B.transpose();
      }
    });
    Hbb.resize(12 * nbodies, 12 * nbodies);
    Hbb.setFromTriplets(triplets.begin(), triplets.end());
  }

  bool factorize() {
    MatX S = Hss;
    if (Hbb.rows() > 0) {
      bodies.compute(Hbb);
      if (bodies.info() != Eigen::Success) return false;
      X = bodies.solve(MatX(Hsb.transpose()));
      S.noalias() -= Hsb * X;
    }
    if (S.rows() == 0) return true;  // skeletons welded to the world: no joint coordinates
    schur.compute(S);
    return schur.info() == Eigen::Success;
  }

  VecX solve(const VecX& rhs) const {
    const int ns = static_cast<int>(Hss.rows()), nb = static_cast<int>(Hbb.rows());
    VecX out(ns + nb);
    if (nb == 0) return schur.solve(rhs);
    if (ns == 0) return bodies.solve(rhs);
    const VecX yb = bodies.solve(rhs.tail(nb));
    out.head(ns) = schur.solve(rhs.head(ns) - Hsb * yb);
    out.tail(nb) = bodies.solve(rhs.tail(nb) - Hsb.transpose() * out.head(ns));
    return out;
  }
};

// the skeletons' part of a move dq as a length: the mass-weighted RMS displacement sqrt(dq^T M dq / m) of their
// links (a skeleton without surfaces has no vertex to measure convergence by)
double skeletonMove(const MatX& M, double total_mass, const VecX& dq) {
  if (!(total_mass > 0.0) || M.rows() == 0) return 0.0;
  const auto d = dq.head(M.rows());
  return std::sqrt(std::max(d.dot(M * d), 0.0) / total_mass);
}

// The incremental potential of one step from (q_n, v_n, tau) at a state q', with the constant terms of the
// step: the skeletons' M(q_n), tau_c - b(q_n, v_n) (gravity included), spring offset q_n - q_rest and v_n, and
// the bodies' coordinates in the contact model (the surfaces are massless: their v and tau are never read).
// E's contact pairs are left in data.pairs, their smallest squared distance in data.stats.min_distance.
struct StepPotential {
  StepPotential(const BarrierWorldModel& world, const ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                BarrierWorldData& data, const double* q, const double* v, const double* tau, const VecX& y_start)
      : art(art), contact(ad.contact), data(data), ns(art.model.nv), nbodies(static_cast<int>(world.bodies.size())),
        h(world.dt), dhat(world.options.dhat), rotations(hasRotationGroupJoints(art.model)),
        q0(Eigen::Map<const VecX>(q, art.nq())), vs(Eigen::Map<const VecX>(v, ns)), y0(y_start),
        M(MatX::Zero(ns, ns)), tau_eff(VecX::Zero(ns)), spring0(VecX::Zero(ns)), dq(VecX::Zero(ns)) {
    if (ns > 0) {
      M = crba(art.model, ad.data, q);
      tau_eff = Eigen::Map<const VecX>(tau, ns).cwiseMax(-art.model.effort_limit).cwiseMin(art.model.effort_limit) -
                nonLinearEffects(art.model, ad.data, q, v);
      if (!rotations) {
        spring0 = q0 - art.model.rest_position;
      } else {
        // the spring's displacement in the tangent, as the lcp step takes it; the predicted move adds the free
        // joints' frame turn (w x u): b holds the -w x u of a child-frame velocity fixed in space, so without
        // forces dq / h is the lcp step's v~ (free_joint_motion.hpp). The implicit gyroscopic update's impulse P^T r
        // (its shift (a) is A^-1 P^T r) acts as a generalized force P^T r / h: the minimiser then moves those joints as
        // the lcp step does, A the joint's block of M + h D + h^2 K. The lcp step adds the frame turn after its
        // damped solve, so the dampers and springs do not resist it: the force (D + h K)(v~ - v) gives back what
        // they take of it here (zero where D and K vanish, as on free joints by default)
        difference(art.model, art.model.rest_position.data(), q, spring0.data());
        addStepFrameTurn(art.model, v, h, vs.data());
        addGyroscopicImpulses(art.model, v, h, 1.0 / h, tau_eff.data());
        addFrameTurnDampingForce(art.model, v, vs, h, tau_eff);
        checkTurnsBelowPi(art.model, h, vs);
      }
    }
    vy = tauy = VecX::Zero(contact.nq());
    vy.head(12 * nbodies) = Eigen::Map<const VecX>(v + ns, 12 * nbodies);
    tauy.head(12 * nbodies) = Eigen::Map<const VecX>(tau + ns, 12 * nbodies);
    gy.resize(contact.nq());
  }

  // The skeletons' displacement dq from the start at the configuration qs (qs.head(nq) - q0 for vector-space
  // joints), left in dq.
  const VecX& displacement(const VecX& qs) {
    if (!rotations)
      dq = qs.head(ns) - q0;
    else if (ns > 0)
      stepDisplacement(art.model, q0.data(), qs.data(), dq.data());
    return dq;
  }

  // E(qs) with barrier stiffness kappa (and the friction pairs of data.friction) at the configuration qs; g = its
  // gradient when given, in the tangent at qs (qs (+) delta, Motion::Step: dq's Jacobian Jd, below, on the joints)
  double operator()(const VecX& qs, const Iterate& it, double kappa, VecX* g) {
    if (g) g->setZero(ns + 12 * nbodies);
    gy.setZero();
    double e = skeletonPotential(art, h, M, tau_eff, spring0, vs, displacement(qs), g);
    if (g && rotations && ns > 0) {
      displacementJacobian(art.model, dq.data(), Jd);
      g->head(ns) = Jd.transpose() * g->head(ns);
    }
    if (kappa > 0.0) e += kappa * jointLimitBarrier(art, dhat, qs.data(), kappa, g ? g->data() : nullptr, nullptr);
    e += incrementalPotential(contact, data, it.y.data(), y0.data(), vy.data(), tauy.data(), kappa,
                              g ? gy.data() : nullptr);
    if (g) pullBack(art, nbodies, it, gy, *g);
    return e;
  }

  const ArticulatedBarrier& art;
  const BarrierWorldModel& contact;
  BarrierWorldData& data;
  int ns, nbodies;
  double h, dhat;
  bool rotations;  // free or ball joints: dq in the step's chart (floating_base_chart.hpp)
  VecX q0, vs, y0;
  MatX M;
  VecX tau_eff, spring0, vy, tauy, gy, dq;
  MatX Jd;  // d dq / d delta at the last configuration with rotations (set with its gradient)
};

void checkFiniteState(int n, const double* q, const double* v, const double* tau) {
  for (int i = 0; i < n; ++i) {
    RD_CHECK_ARG(std::isfinite(q[i]), "q[" << i << "] is not finite (" << q[i] << ")");
    RD_CHECK_ARG(std::isfinite(v[i]), "v[" << i << "] is not finite (" << v[i] << ")");
    RD_CHECK_ARG(std::isfinite(tau[i]), "tau[" << i << "] is not finite (" << tau[i] << ")");
  }
}

// The state's check with free or ball joints (q has nq + 12 nbodies entries, v and tau nv + 12 nbodies): finite,
// unit quaternions (within 1e-6, naming the joint).
void checkFiniteState(const ArticulatedBarrier& art, int nbodies, const double* q, const double* v,
                      const double* tau) {
  if (art.nq() == art.model.nv) return checkFiniteState(art.nq() + 12 * nbodies, q, v, tau);
  checkFinite(q, art.nq() + 12 * nbodies, "q");
  checkFinite(v, art.model.nv + 12 * nbodies, "v");
  checkFinite(tau, art.model.nv + 12 * nbodies, "tau");
  checkConfiguration(art.model, q);
}

}  // namespace

double articulatedIncrementalPotential(const BarrierWorldModel& world, ArticulatedBarrier& art,
                                       ArticulatedBarrierData& ad, BarrierWorldData& data, const double* q,
                                       const double* q_n, const double* v_n, const double* tau, double kappa,
                                       double* grad) {
  const int nbodies = static_cast<int>(world.bodies.size()), n = art.model.nv + 12 * nbodies;
  const int nq = art.nq() + 12 * nbodies;
  checkFiniteState(art, nbodies, q_n, v_n, tau);
  art.model.gravity = world.gravity;
  buildArticulatedContactModel(world, art, ad.contact);
  data.friction.clear();
  Iterate start, at;
  evaluateMaps(art, ad, nbodies, Eigen::Map<const VecX>(q_n, nq), start);
  StepPotential energy(world, art, ad, data, q_n, v_n, tau, start.y);
  const VecX qs = Eigen::Map<const VecX>(q, nq);
  evaluateMaps(art, ad, nbodies, qs, at);
  VecX g;
  const double e = energy(qs, at, kappa, grad ? &g : nullptr);
  if (grad) Eigen::Map<VecX>(grad, n) = g;
  return e;
}

double articulatedFrictionPotential(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                                    BarrierWorldData& data, const double* q, const double* q_n, double kappa,
                                    double* grad) {
  const int nbodies = static_cast<int>(world.bodies.size()), n = art.model.nv + 12 * nbodies;
  const int nq = art.nq() + 12 * nbodies;
  buildArticulatedContactModel(world, art, ad.contact);
  Iterate start, at;
  evaluateMaps(art, ad, nbodies, Eigen::Map<const VecX>(q_n, nq), start);
  barrierPositions(ad.contact, start.y.data(), data.x);
  collectBarrierPairs(ad.contact, data);
  buildFrictionPairs(ad.contact, data, kappa);
  evaluateMaps(art, ad, nbodies, Eigen::Map<const VecX>(q, nq), at);
  VecX gy = VecX::Zero(ad.contact.nq());
  const double e = frictionPotential(ad.contact, data, at.y.data(), start.y.data(), gy.data(), nullptr);
  if (grad) {
    VecX g = VecX::Zero(n);
    pullBack(art, nbodies, at, gy, g);
    Eigen::Map<VecX>(grad, n) = g;
  }
  return e;
}

void articulatedBarrierStep(const BarrierWorldModel& world, ArticulatedBarrier& art, ArticulatedBarrierData& ad,
                            BarrierWorldData& data, const double* q, const double* v, const double* tau,
                            double* q_out, double* v_out) {
  const int ns = art.model.nv, nbodies = static_cast<int>(world.bodies.size());
  const int n = ns + 12 * nbodies, nq = art.nq() + 12 * nbodies;  // tangent and configuration sizes
  checkFiniteState(art, nbodies, q, v, tau);
  const Clock::time_point start = Clock::now();
  const double h = world.dt;
  art.model.gravity = world.gravity;
  buildArticulatedContactModel(world, art, ad.contact);
  const BarrierWorldModel& contact = ad.contact;
  data.stats = BarrierStepStats();
  data.friction.clear();

  const Eigen::Map<const VecX> q0(q, nq);
  Iterate at;
  evaluateMaps(art, ad, nbodies, q0, at);
  const VecX y0 = at.y;
  checkIntersectionFree(contact, data, y0.data());
  checkWithinJointLimits(art, q);
  const double l = sceneDiagonal(contact, data);
  StepPotential energy(world, art, ad, data, q, v, tau, y0);
  const MatX& M = energy.M;

  // the barrier stiffness as the affine step chooses it (a power of two from IPC's lower bound); the mean
  // mass is over the moving bodies and the skeletons' moving links
  double mass = 0.0;
  int moving = 0;
  for (const AffineBody& b : world.bodies)
    if (!b.fixed) mass += b.mass, ++moving;
  for (int j = 1; j < art.model.njoints; ++j) mass += art.model.inertias[j].mass, ++moving;
  const double shat = world.options.dhat * world.options.dhat;
  const BarrierStiffness stiffness = initialBarrierStiffness(l, shat, moving > 0 ? mass / moving : 1.0, 0.0, 0.0);
  double kappa = std::exp2(std::ceil(std::log2(stiffness.kappa_min)));
  data.stats.kappa_start = kappa;  // the friction's, which the step's derivatives need
  const double kappa_max = std::exp2(std::ceil(std::log2(stiffness.kappa_max)));

  VecX qk = q0, grad(n), trial(nq), grad_trial(n), dir(n), free_step(n);
  double e = energy(qk, at, kappa, &grad);
  // the friction pairs are frozen at the start state (data.pairs, data.x at y0), as in the affine step
  buildFrictionPairs(contact, data, kappa);
  if (!data.friction.empty()) e += frictionPotential(contact, data, y0.data(), y0.data(), nullptr, nullptr);

  // the block-diagonal mass of the state, for the free step of the residual force
  Eigen::LDLT<MatX> skeleton_mass;
  if (ns > 0) skeleton_mass.compute(M);
  std::vector<Eigen::LDLT<Mat12>> body_mass;
  for (const AffineBody& b : world.bodies) body_mass.emplace_back(b.mass_matrix);
  double total_mass = 0.0;
  for (int j = 1; j < art.model.njoints; ++j) total_mass += art.model.inertias[j].mass;
  BorderedNewtonSystem newton;
  double prev_min_s = data.stats.min_distance;
  const double tolerance = world.options.newton_tolerance * l * h;
  double residual = std::numeric_limits<double>::infinity();
  Iterate trial_at;
  int iteration = 0;
  Clock::time_point t = Clock::now();
  auto lap = [&t](double& total) {  // adds the seconds since t to total, and moves t to now
    const Clock::time_point now = Clock::now();
    total += std::chrono::duration<double>(now - t).count();
    t = now;
  };
  for (; iteration < world.options.max_newton_iterations; ++iteration) {
    lap(data.stats.time_barrier);  // the energy evaluations since the last lap
    // contact Hessian in y (element blocks projected to PSD), pulled back: J^T H_y J is PSD (Gauss-Newton:
    // the second derivative of the nonlinear map y(q) is left out)
    data.hessian.reset(static_cast<int>(contact.bodies.size()));
    for (int i = 0; i < nbodies; ++i) {
      const AffineBody& body = world.bodies[i];
      data.hessian.addDiagonal(i, body.fixed ? body.mass_matrix
                                             : Mat12(body.mass_matrix + h * h * projectToPsd(orthogonalityHessian(
                                                   qk.data() + art.nq() + 12 * i, body.stiffness * body.integrals.volume))));
    }
    barrierPotential(contact, data, kappa, nullptr, &data.hessian);
    frictionPotential(contact, data, at.y.data(), y0.data(), nullptr, &data.hessian);
    lap(data.stats.time_barrier);
    newton.Hss = M;
    newton.Hss.diagonal() += h * art.model.damping + h * h * art.model.stiffness;
    // with rotations the joint terms are quadratic in dq, not in delta: their Gauss-Newton product Jd^T A Jd
    // (Jd at the iterate, set with the gradient) leaves out the curvature of dq(delta), keeping the matrix PSD
    if (energy.rotations && ns > 0) newton.Hss = energy.Jd.transpose() * newton.Hss * energy.Jd;
    jointLimitBarrier(art, world.options.dhat, qk.data(), kappa, nullptr, &newton.Hss);  // in the tangent already
    newton.assemble(art, nbodies, at, data.hessian);
    lap(data.stats.time_assembly);
    if (!newton.factorize())
      RD_THROW(std::runtime_error, "barrier step: the Newton matrix could not be factorised at iteration " << iteration);
    dir = newton.solve(-grad);
    lap(data.stats.time_factorisation);
    if (ns > 0) free_step.head(ns) = skeleton_mass.solve(grad.head(ns));
    for (int i = 0; i < nbodies; ++i) free_step.segment<12>(ns + 12 * i) = body_mass[i].solve(grad.segment<12>(ns + 12 * i));
    const double move = std::max(largestVertexMove(contact, pushForward(art, nbodies, at, dir)),
                                 skeletonMove(M, total_mass, dir));
    const double free_move = std::max(largestVertexMove(contact, pushForward(art, nbodies, at, free_step)),
                                      skeletonMove(M, total_mass, free_step));
    residual = std::max(move, free_move) / (l * h);
    if (move <= tolerance && free_move <= std::max(tolerance, 1e-6 * l * h)) break;

    // the largest collision-free fraction of the joint-space path (substeps of chords), then halving
    const double gap = std::isfinite(data.stats.min_distance) ? std::sqrt(data.stats.min_distance) : world.options.dhat;
    double alpha = std::min(jointLimitStep(art, qk.data(), dir.data()),
                            articulatedCollisionFreeStep(art, ad, data, qk.data(), dir.data(),
                                                         std::min(gap, world.options.dhat)));
    lap(data.stats.time_ccd);
    e = backtrackingLineSearch(world, alpha, e, iteration, residual, [&](double a) {
      if (energy.rotations)
        moveState(art.model, 12 * nbodies, qk.data(), dir.data(), a, trial.data());
      else
        trial = qk + a * dir;
      evaluateMaps(art, ad, nbodies, trial, trial_at);
      ++data.stats.line_search_evaluations;
      return energy(trial, trial_at, kappa, &grad_trial);
    });
    qk = trial;
    std::swap(at, trial_at);
    grad = grad_trial;
    const double min_s = data.stats.min_distance;
    const double new_kappa = updateBarrierStiffness(prev_min_s, min_s, kappa_max, kappa, l);
    prev_min_s = min_s;
    if (new_kappa != kappa) {
      kappa = new_kappa;
      e = energy(qk, at, kappa, &grad);
    }
  }
  if (!energy.rotations) {
    finishBarrierStep(world, data, iteration, kappa, residual, q, qk, q_out, v_out);
  } else {
    // the bodies as the affine step finishes them; the joints' v~ = dq / h re-expressed as the lcp step does
    // (a free joint's linear velocity in its new frame)
    const int nqs = art.nq();
    finishBarrierStep(world, data, iteration, kappa, residual, q + nqs, qk.tail(12 * nbodies), q_out + nqs, v_out + ns);
    for (int i = 0; i < nqs; ++i) q_out[i] = qk[i];
    const VecX v_step = energy.displacement(qk) / h;
    reexpressStepVelocities(art.model, h, v_step.data(), v_out);
  }
  data.stats.time_total = std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace rigidiff
