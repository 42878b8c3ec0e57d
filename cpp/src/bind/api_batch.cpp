// Batches of rollouts and step Jacobians on threads (declared in rigidiff/bind/api_batch.hpp).
#include "rigidiff/bind/api_batch.hpp"

#include <memory>

#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/api_implicit.hpp"
#include "rigidiff/bind/api_rk4.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/world/batch_buffers.hpp"
#include "rigidiff/world/parallel.hpp"
#include "rigidiff/world/step.hpp"
#include "rigidiff/world/world_options.hpp"

namespace rigidiff {
namespace bind {

void rolloutBatch(const Model& m, const CollisionModel* cm, const ContactOptions* o, int integrator, const double* Q0,
                  const double* V0, const double* TAUS, bool sharedTaus, int N, int T, double dt, int threads,
                  double* Q, double* V) {
  RD_CHECK_ARG(N >= 0 && T >= 0, "a batch needs N >= 0 rollouts of T >= 0 steps, got N = " << N << ", T = " << T);
  const long nq = m.nq, nv = m.nv, steps = T;
  checkStateRows(m, Q0, V0, N);
  checkFinite(TAUS, (sharedTaus ? 1 : static_cast<long>(N)) * steps * nv, "taus");
  auto taus = [&](long i) { return TAUS + (sharedTaus ? 0 : i * steps * nv); };
  auto Qi = [&](long i) { return Q + i * (steps + 1) * nq; };
  auto Vi = [&](long i) { return V + i * (steps + 1) * nv; };
  if (cm && o) {
    parallelFor(
        N, threads, [&] { return std::make_unique<ContactBuffers>(m, *cm); },
        [&](ContactBuffers& b, long i) {
          contactChain(m, b.data, *cm, b.cd, *o, Q0 + i * nq, V0 + i * nv, taus(i), T, dt, Qi(i), Vi(i), [](int) {});
        });
  } else if (integrator == kIntegratorImplicit) {
    parallelFor(
        N, threads, [&] { return std::make_unique<ImplicitBuffers>(m); },
        [&](ImplicitBuffers& b, long i) {
          rigidiff::implicitRollout(m, b.data, b.ws, Q0 + i * nq, V0 + i * nv, taus(i), T, dt, Qi(i), Vi(i));
        });
  } else if (integrator == kIntegratorRk4) {
    parallelFor(
        N, threads, [&] { return std::make_unique<Rk4Buffers>(m); },
        [&](Rk4Buffers& b, long i) {
          rigidiff::rk4Rollout(m, b.data, b.ws, Q0 + i * nq, V0 + i * nv, taus(i), T, dt, Qi(i), Vi(i));
        });
  } else {
    parallelFor(
        N, threads, [&] { return std::make_unique<Data>(m); },
        [&](Data& d, long i) { rigidiff::rollout(m, d, Q0 + i * nq, V0 + i * nv, taus(i), T, dt, Qi(i), Vi(i)); });
  }
}

void stepJacobiansBatch(const Model& m, const CollisionModel* cm, const ContactOptions* o, int integrator, const double* Q,
                        const double* V, const double* TAU, int N, double dt, int threads, double* Qout, double* Vout,
                        double* jac) {
  RD_CHECK_ARG(N >= 0, "a batch needs N >= 0 states, got " << N);
  const long nq = m.nq, nv = m.nv, block = 6 * nv * nv;
  checkStateRows(m, Q, V, N, TAU);
  if (cm && o) {
    parallelFor(
        N, threads, [&] { return std::make_unique<ContactBuffers>(m, *cm); },
        [&](ContactBuffers& b, long i) {
          clearWarmStart(b.cd);  // as step_jacobians from a state no step ended at
          constrainedStepJacobians(m, b.data, *cm, b.cd, *o, Q + i * nq, V + i * nv, TAU + i * nv, dt, nullptr, 0,
                                   Qout + i * nq, Vout + i * nv, jac + i * block, nullptr);
        });
  } else if (integrator == kIntegratorImplicit) {
    parallelFor(
        N, threads, [&] { return std::make_unique<ImplicitBuffers>(m); },
        [&](ImplicitBuffers& b, long i) {
          implicitStepJacobians(m, b.data, b.ws, Q + i * nq, V + i * nv, TAU + i * nv, dt, nullptr, Qout + i * nq,
                                Vout + i * nv, jac + i * block);
        });
  } else if (integrator == kIntegratorRk4) {
    parallelFor(
        N, threads, [&] { return std::make_unique<Rk4Buffers>(m); },
        [&](Rk4Buffers& b, long i) {
          rk4StepJacobians(m, b.data, b.ws, Q + i * nq, V + i * nv, TAU + i * nv, dt, nullptr, Qout + i * nq,
                           Vout + i * nv, jac + i * block);
        });
  } else {
    parallelFor(
        N, threads, [&] { return std::make_unique<Data>(m); },
        [&](Data& d, long i) {
          stepJacobians(m, d, Q + i * nq, V + i * nv, TAU + i * nv, dt, nullptr, Qout + i * nq, Vout + i * nv,
                        jac + i * block);
        });
  }
}

}  // namespace bind
}  // namespace rigidiff
