// IPC's lagged, smoothed friction in a barrier world (barrier_world.hpp). At the start of a step each pair
// within dhat is frozen: its normal force lambda = -kappa b'(d^2) 2 d (in the units of the incremental
// potential), the closest points' weights c_k on its points (+ on the first side, - on the second) and a
// tangent basis T (3 x 2) orthogonal to the normal. During the step the pair's tangential slip is
// u = T^T sum_k c_k (x_k(q) - x_k(q_n)) and it adds the potential mu lambda f0(|u|) with IPC's mollifier
//   f0(y) = -y^3 / (3 eps^2) + y^2 / eps + eps / 3   for y < eps,   y otherwise,   eps = eps_v dt,
// whose gradient is Coulomb's force mu lambda along -u / |u| when sliding faster than eps_v (m/s), smoothly
// going to zero (sticking) below it.
#pragma once

#include "rigidiff/world/barrier_world.hpp"

namespace rigidiff {

/// data.friction = the frozen pairs of data.pairs at data.x (the start state q_n) with barrier stiffness kappa;
/// empty when options.friction is 0.
void buildFrictionPairs(const BarrierWorldModel& model, BarrierWorldData& data, double kappa);

/// The friction potential of data.friction at q (start state q_n); adds its gradient to grad (model.nq())
/// and adds its Hessian (each pair's 2 x 2 tangent block PSD as it stands) to hessian, when given.
double frictionPotential(const BarrierWorldModel& model, BarrierWorldData& data, const double* q,
                         const double* q_n, double* grad, BlockHessian* hessian);

}  // namespace rigidiff
