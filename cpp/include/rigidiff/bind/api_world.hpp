// The world's calls as seen by Cython: one entry point per operation over a WorldModel and a WorldData
// (world/world_model.hpp, world_data.hpp). Each checks its inputs (finite values, unit quaternions,
// sizes, parameter groups) and outputs, and calls world/world_step.hpp or trajopt/trajectory_kernels.hpp,
// which pick the step the world takes (stepKind: the semi-implicit step, RK4, or the constrained step)
// and document each call; the layouts are theirs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rigidiff/world/world_data.hpp"
#include "rigidiff/world/world_model.hpp"

namespace rigidiff {
namespace bind {

/// WorldModel::addBodyPart and setBodyPartInertia with the 10 numbers of an inertia as in addJoint
/// (mass, centre of mass, rotational inertia xx xy xz yy yz zz about it, in the joint frame), checked.
int addBodyPart(WorldModel& world, int j, const double* inertia, bool own);
void setBodyPartInertia(WorldModel& world, int b, const double* inertia);
/// WorldModel::addStateBlock (kind: 0 skeleton, 1 particles), checked.
int addStateBlock(WorldModel& world, const std::string& name, int kind, int nq, int nv);
/// The block called name: writes (kind, q_begin, nq, v_begin, nv) into out and returns true, or false.
bool readStateBlock(const WorldModel& world, const std::string& name, int* out);
/// Refreshes the world's constraint reason after its model or options changed (WorldModel::refresh).
void refreshWorld(WorldModel& world);
/// worldParameterCount (world_step.hpp), with the groups checked.
int worldParameterCount(const WorldModel& world, int groups);

void worldStep(const WorldModel& world, WorldData& wd, const double* q, const double* v, const double* tau,
               const double* fext, double* q_out, double* v_out);
void worldStepJacobians(const WorldModel& world, WorldData& wd, const double* q, const double* v, const double* tau,
                        const double* fext, int groups, double* q_out, double* v_out, double* jac, double* pjac);
void worldStepVJP(const WorldModel& world, WorldData& wd, const double* q, const double* v, const double* tau,
                  const double* fext, const double* gq, const double* gv, int groups, bool explore, double* q_out,
                  double* v_out, double* g_state, double* g_tau, double* g_params);
void worldRollout(const WorldModel& world, const double* q0, const double* v0, const double* taus, int T, double* Q,
                  double* V, int* rows, std::vector<std::int64_t>* keys, std::vector<int>* classes,
                  std::vector<double>* impulses);
void worldRolloutBackward(const WorldModel& world, const double* Q, const double* V, const double* taus, int T,
                          const double* GQ, const double* GV, int groups, bool explore, double* g_taus,
                          double* g_state, double* g_params, const int* rows, const std::int64_t* keys,
                          const int* classes, const double* impulses);
void worldTrajectoryJacobians(const WorldModel& world, WorldData& wd, const double* Q, const double* V,
                              const double* TAU, int T, double* jac, int threads);
void worldClosedLoopRollout(const WorldModel& world, WorldData& wd, const double* q0, const double* v0,
                            const double* Qr, const double* Vr, const double* Ur, const double* k, const double* K,
                            double alpha, const double* S, int nu, const double* lo, const double* hi, int T,
                            double* Q, double* V, double* U);
void worldStepBatch(const WorldModel& world, const double* Q, const double* V, const double* TAU, int N, int threads,
                    double* Qout, double* Vout);
void worldRolloutBatch(const WorldModel& world, const double* Q0, const double* V0, const double* TAUS,
                       bool sharedTaus, int N, int T, int threads, double* Q, double* V);
void worldStepJacobiansBatch(const WorldModel& world, const double* Q, const double* V, const double* TAU, int N,
                             int threads, double* Qout, double* Vout, double* jac);

}  // namespace bind
}  // namespace rigidiff
