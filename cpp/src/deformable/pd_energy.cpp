// The Projective Dynamics energy E(x) = sum over samples of w/2 |F - P(F)|^2 (P: the corotated or volume
// projection), the hyperelastic energies (neo-Hookean, the corotated hyperelastic's volume term) plus the ground
// penalty k/2 min(0, n . x - offset)^2 of surface vertices, and its gradient sum w G^T (F - P) (the projection's
// own change drops out: P minimises the distance); its Hessian is in pd_hessian.cpp.
#include <cmath>
#include <limits>

#include "rigidiff/deformable/pd_corotated_hyperelastic.hpp"
#include "rigidiff/deformable/pd_elements.hpp"
#include "rigidiff/deformable/pd_muscle.hpp"
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {
namespace {

void scatter(const PdSample& s, const Mat3& stress, Points& out) {
  for (int k = 0; k < s.count; ++k) out.row(s.nodes[k]) += (stress * s.grad.row(k).transpose()).transpose();
}

// One sample's energy w/2 |F - P(F)|^2 summed over its energies, and its stress sum w (F - P(F)).
// (record: where F, its SVD and volume projection are recorded for the Hessian, or null)
double sampleEnergy(const PdModel& model, const PdSample& s, const Points& x, Mat3* stress,
                    PdSampleCache::Entry* record) {
  const Mat3 F = deformationGradient(s, x);
  const Svd3 svd = svd3(F);
  if (record) record->F = F, record->svd = svd, record->has_volume = false;
  double energy = 0.0;
  stress->setZero();
  if (s.w_corotated > 0.0) {
    const Mat3 r = F - svd.U * svd.V.transpose();
    energy += 0.5 * s.w_corotated * r.squaredNorm();
    *stress += s.w_corotated * r;
  }
  if (s.w_volume > 0.0) {
    const Vec3 t = volumeProjection(svd.sigma, nullptr, nullptr, record ? &record->volume : nullptr);
    if (record) record->has_volume = true;
    const Mat3 r = F - svd.U * t.asDiagonal() * svd.V.transpose();
    energy += 0.5 * s.w_volume * r.squaredNorm();
    *stress += s.w_volume * r;
  }
  if (s.w_determinant > 0.0) energy += determinantEnergy(s, F, stress);
  if (s.mu_neohookean > 0.0) {
    const double J = F.determinant();
    if (!(J > 0.0)) return std::numeric_limits<double>::infinity();  // inverted: refused by the line search
    const Mat3 inv_t = F.inverse().transpose();
    const double log_j = std::log(J);
    // the value from the singular values' strains e = sigma - 1: 0.5 (|F|^2 - 3) - log J = sum e - log1p(e) + e^2 / 2
    // without cancelling terms of order one (near rest |F|^2 - 3 and log J are 1e4 times smaller than their parts,
    // and so is the energy: a line search near the solution compares values whose rounding would be that of the parts)
    double shape = 0.0, log_sigma = 0.0;
    for (int i = 0; i < 3; ++i) {
      const double e = svd.sigma[i] - 1.0;
      if (!(e > -1.0)) return std::numeric_limits<double>::infinity();  // (as J <= 0 above, at round-off)
      shape += (e - std::log1p(e)) + 0.5 * e * e;
      log_sigma += std::log1p(e);
    }
    energy += s.mu_neohookean * shape + 0.5 * s.lambda_neohookean * log_sigma * log_sigma;
    *stress += s.mu_neohookean * (F - inv_t) + s.lambda_neohookean * log_j * inv_t;
  }
  if (s.muscle >= 0) energy += muscleEnergy(model, s, F, stress);
  return energy;
}

}  // namespace

double pdEnergy(const PdModel& model, const Points& x, Points* grad, int body, PdSampleCache* cache) {
  // each element's energy and nodal forces in its own slot (threads), summed in element order
  constexpr int kSlot = 1 + 3 * kMaxElementNodes;
  const int m = model.elementCount();
  std::vector<double> slots(static_cast<std::size_t>(m) * kSlot, 0.0);
  if (cache) {
    PdSampleCache::Entry empty;
    empty.F.setConstant(std::numeric_limits<double>::quiet_NaN());  // (equal to no F)
    cache->entries.resize(model.samples.size(), empty);
  }
  forEachElement(model, [&](int e) {
    double* slot = slots.data() + static_cast<std::size_t>(e) * kSlot;
    for (int k = model.element_start[e]; k < model.element_start[e + 1]; ++k) {
      const PdSample& s = model.samples[k];
      if (body >= 0 && s.body != body) return;
      Mat3 stress;
      slot[0] += sampleEnergy(model, s, x, &stress, cache ? &cache->entries[k] : nullptr);
      if (!grad) continue;
      for (int a = 0; a < s.count; ++a) {
        const Vec3 f = stress * s.grad.row(a).transpose();
        for (int r = 0; r < 3; ++r) slot[1 + 3 * a + r] += f[r];
      }
    }
  });
  double energy = 0.0;
  if (grad) grad->setZero(x.rows(), 3);
  for (int e = 0; e < m; ++e) {
    const double* slot = slots.data() + static_cast<std::size_t>(e) * kSlot;
    energy += slot[0];
    if (!grad) continue;
    const PdSample& s = model.samples[model.element_start[e]];
    for (int a = 0; a < s.count; ++a)
      for (int r = 0; r < 3; ++r) (*grad)(s.nodes[a], r) += slot[1 + 3 * a + r];
  }
  if (body >= 0) return energy;
  model.forEachPenetration(x, [&](int i, int, double d, const Vec3& n, double) {
    energy += 0.5 * model.contact_stiffness * d * d;
    if (grad) grad->row(i) += model.contact_stiffness * d * n.transpose();
  });
  return energy;
}

void pdLameGradients(const PdModel& model, const Points& x, int body, Points& per_mu, Points& per_lambda,
                     const PdSampleCache* cache) {
  per_mu.setZero(x.rows(), 3);
  per_lambda.setZero(x.rows(), 3);
  const PdBody& b = model.bodies.at(body);
  for (int i = b.first_sample; i < b.first_sample + b.sample_count; ++i) {
    const PdSample& s = model.samples[i];
    const Mat3 F = deformationGradient(s, x);
    const PdSampleCache::Entry* known = cache ? cache->find(i, F) : nullptr;
    const Svd3 svd = known ? known->svd : svd3(F);
    // the weights: corotated 2 mu V (and the corotated hyperelastic's shear term), volume lambda V; neo-Hookean
    // mu V and lambda V in its stress; the corotated hyperelastic's volume term lambda V
    const int shear = b.corotated + b.corotated_hyperelastic;
    if (shear > 0) scatter(s, 2.0 * shear * s.volume * (F - svd.U * svd.V.transpose()), per_mu);
    if (b.corotated_hyperelastic) scatter(s, determinantStressPerLambda(s, F), per_lambda);
    if (b.volume) {
      const Vec3 t = volumeProjection(svd.sigma, nullptr, known && known->has_volume ? &known->volume : nullptr);
      scatter(s, s.volume * (F - svd.U * t.asDiagonal() * svd.V.transpose()), per_lambda);
    }
    if (b.neohookean) {
      const Mat3 inv_t = F.inverse().transpose();
      scatter(s, s.volume * (F - inv_t), per_mu);
      scatter(s, s.volume * std::log(F.determinant()) * inv_t, per_lambda);
    }
  }
}

}  // namespace deformable
}  // namespace rigidiff
