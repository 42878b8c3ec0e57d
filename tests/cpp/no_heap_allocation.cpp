// Checks that no algorithm allocates on the heap once its Data exists: malloc is wrapped and
// counted around each call. Built and run by test_no_heap_allocation.py.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "rigidiff/algorithm/aba.hpp"
#include "rigidiff/algorithm/minverse.hpp"
#include "rigidiff/algorithm/aba_derivatives.hpp"
#include "rigidiff/algorithm/center_of_mass.hpp"
#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/crba.hpp"
#include "rigidiff/algorithm/energy.hpp"
#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/algorithm/kinematics_derivatives.hpp"
#include "rigidiff/algorithm/regressor.hpp"
#include "rigidiff/algorithm/rnea.hpp"
#include "rigidiff/algorithm/rnea_derivatives.hpp"
#include "rigidiff/collision/distance.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/step_derivatives.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"
#include "rigidiff/world/step_vjp.hpp"

#include "malloc_counter.hpp"

#include "every_joint_model.hpp"

using namespace rigidiff;

struct Case {
  const Model& m;
  Data d;
  VecX q, v, a, tau, qn, vn, dq;
  std::vector<double> fext, out, Q, V, T;
  explicit Case(const Model& model)
      : m(model),
        d(model),
        q(model.nq),
        v(VecX::LinSpaced(model.nv, -0.5, 0.7)),
        a(VecX::LinSpaced(model.nv, 0.3, -0.2)),
        tau(v),
        qn(model.nq),
        vn(model.nv),
        dq(model.nv),
        fext(6 * model.frames.size(), 0.3),
        out(6 * model.nv),
        Q(3 * model.nq),
        V(3 * model.nv),
        T(2 * model.nv, 0.1) {
    neutralConfiguration(m, q.data());
    integrate(m, q.data(), a.data(), q.data());
  }
};

int main() {
  const Model m = buildEveryJointModel(true);
  const Model m2 = buildEveryJointModel(false);
  Case c2(m2);
  Data d(m);
  VecX q(m.nq), v = VecX::LinSpaced(m.nv, -0.5, 0.7), a = VecX::LinSpaced(m.nv, 0.3, -0.2), tau = v, qn(m.nq), vn(m.nv),
                dq(m.nv);
  neutralConfiguration(m, q.data());
  integrate(m, q.data(), a.data(), q.data());
  std::vector<double> fext(6 * m.frames.size(), 0.3), out(6 * m.nv), Q(3 * m.nq), V(3 * m.nv), T(2 * m.nv, 0.1);
  // reverse-mode buffers (model without the universal joint, which reverse mode does not support)
  const long half = static_cast<long>(m2.nv) * stepParameterCount(m2, 31);
  std::vector<double> pjac(2 * half), g_state(2 * m2.nv), g_tau(m2.nv), g_theta(10 * (m2.njoints - 1)), g_arm(m2.nv),
      g_damp(m2.nv), g_stiff(m2.nv), g_grav(3), GQ(3 * m2.nv, 0.2), gtaus(2 * m2.nv);
  StepCotangents cot;
  cot.q = g_state.data();
  cot.v = g_state.data() + m2.nv;
  cot.tau = g_tau.data();
  cot.theta = g_theta.data();
  cot.armature = g_arm.data();
  cot.damping = g_damp.data();
  cot.stiffness = g_stiff.data();
  cot.gravity = g_grav.data();
  rollout(m2, c2.d, c2.q.data(), c2.v.data(), c2.T.data(), 2, 1e-3, c2.Q.data(), c2.V.data());
  // shapes for the distance queries: overlapping pairs go through GJK and EPA
  const double hull[] = {0.3, 0, 0, -0.3, 0.1, 0, 0, 0.3, 0.1, 0, -0.2, 0.3, 0.1, 0.1, -0.3, -0.1, -0.1, 0.2};
  const CollisionShape box = makeBox(Vec3(0.4, 0.3, 0.2)), cyl = makeCylinder(0.2, 0.5), mesh = makeConvexMesh(hull, 6),
                       capsule = makeCapsule(0.1, 0.3), plane = makePlane(Vec3(0.1, 0.2, 1.0), 0.1);
  const SE3 M0(Eigen::AngleAxisd(0.4, Vec3(1, 2, 3).normalized()).toRotationMatrix(), Vec3(0.1, 0.05, 0.15)), M1;
  double dist_sum = 0.0;
  std::vector<std::pair<std::string, std::function<void()>>> calls = {
      {"forwardKinematics", [&] { forwardKinematics(m, d, q.data(), v.data(), a.data()); }},
      {"rnea", [&] { rnea(m, d, q.data(), v.data(), a.data(), false); }},
      {"rnea+fext",
       [&] {
         externalWrenchesFromFrames(m, d, fext.data());
         rnea(m, d, q.data(), v.data(), a.data(), true);
       }},
      {"nonLinearEffects", [&] { nonLinearEffects(m, d, q.data(), v.data()); }},
      {"crba", [&] { crba(m, d, q.data()); }},
      {"aba", [&] { aba(m, d, q.data(), v.data(), tau.data(), true, v.data()); }},
      {"computeMinverse", [&] { computeMinverse(m, d, q.data()); }},
      {"jacobians",
       [&] {
         computeJointJacobiansTimeVariation(m, d, q.data(), v.data());
         frameJacobian(m, d, 2, ReferenceFrame::Local, out.data());
         frameJacobianTimeVariation(m, d, 4, ReferenceFrame::LocalWorldAligned, out.data());
       }},
      {"centerOfMass", [&] { jacobianCenterOfMass(m, d, q.data()); }},
      {"energy", [&] { kineticEnergy(m, d, q.data(), v.data()) + potentialEnergy(m, d, q.data()); }},
      {"integrate/difference",
       [&] {
         integrate(m, q.data(), v.data(), qn.data());
         difference(m, q.data(), qn.data(), dq.data());
       }},
      {"step", [&] { step(m, d, q.data(), v.data(), tau.data(), 1e-3, fext.data(), qn.data(), vn.data()); }},
      {"computeRNEADerivatives", [&] { computeRNEADerivatives(m2, c2.d, c2.q.data(), c2.v.data(), c2.a.data()); }},
      {"computeABADerivatives", [&] { computeABADerivatives(m2, c2.d, c2.q.data(), c2.v.data(), c2.tau.data()); }},
      {"stepDerivatives",
       [&] { stepDerivatives(m2, c2.d, c2.q.data(), c2.v.data(), c2.tau.data(), 1e-3, c2.qn.data(), c2.vn.data()); }},
      {"rollout(Data given)", [&] { rollout(m, d, q.data(), v.data(), T.data(), 2, 1e-3, Q.data(), V.data()); }},
      {"abaSolve",
       [&] {
         aba(m, d, q.data(), v.data(), tau.data(), false, v.data());
         abaSolve(m, d, a.data(), dq.data());
       }},
      {"regressor", [&] { inverseDynamicsRegressor(m2, c2.d, c2.q.data(), c2.v.data(), c2.a.data()); }},
      {"stepParameterDerivs",
       [&] {
         stepDerivatives(m2, c2.d, c2.q.data(), c2.v.data(), c2.tau.data(), 1e-3, c2.qn.data(), c2.vn.data());
         stepParameterDerivatives(m2, c2.d, c2.q.data(), c2.v.data(), 1e-3, 31, pjac.data(), pjac.data() + half);
       }},
      {"stepDerivatives+fext",
       [&] {
         stepDerivatives(m2, c2.d, c2.q.data(), c2.v.data(), c2.tau.data(), 1e-3, c2.qn.data(), c2.vn.data(),
                         c2.fext.data());
       }},
      {"kinematicDerivatives",
       [&] {
         frameAccelerationDerivatives(m2, c2.d, c2.q.data(), c2.v.data(), c2.a.data(), 3, ReferenceFrame::Local,
                                      c2.d.Ftmp.data(), c2.d.U.data(), c2.d.dJ.data());
         centerOfMassVelocityDerivatives(m2, c2.d, c2.q.data(), c2.v.data(), c2.d.Jcom.data());
       }},
      {"stepVJP",
       [&] {
         stepVJP(m2, c2.d, c2.q.data(), c2.v.data(), c2.tau.data(), 1e-3, c2.v.data(), c2.a.data(), c2.qn.data(),
                 c2.vn.data(), cot, c2.fext.data());
       }},
      {"rolloutBackward",
       [&] {
         rolloutBackward(m2, c2.d, c2.Q.data(), c2.V.data(), c2.T.data(), 2, 1e-3, GQ.data(), GQ.data(), gtaus.data(),
                         cot);
       }},
      {"signedDistance",
       [&] {
         dist_sum += signedDistance(box, M0, cyl, M1).distance + signedDistance(mesh, M0, box, M1).distance +
                     signedDistance(capsule, M0, mesh, M1).distance + signedDistance(cyl, M0, plane, M1).distance;
       }},
      {"gradient maps",
       [&] {
         tangentGradient(m, q.data(), qn.data(), dq.data());
         coordinateGradient(m, q.data(), dq.data(), qn.data());
       }},
  };
  int failures = 0;
  for (auto& [name, fn] : calls) {
    fn();  // warm-up
    const long before = g_mallocs;
    fn();
    const long n = g_mallocs - before;
    std::printf("%-22s %ld heap allocations\n", name.c_str(), n);
    if (n != 0) ++failures;
  }
  std::printf("%d of %zu calls allocated\n", failures, calls.size());
  return failures == 0 ? 0 : 1;
}
