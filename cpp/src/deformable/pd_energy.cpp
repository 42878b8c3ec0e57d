// The Projective Dynamics energy E(x) = sum over samples of w/2 |F - P(F)|^2 (P: the corotated or volume
// projection) plus the ground penalty k/2 min(0, n . x - offset)^2 of surface vertices, its gradient
// sum w G^T (F - P) (the projection's own change drops out: P minimises the distance) and its Hessian
// products sum w G^T (dF - dP) G.
#include <cmath>

#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {
namespace {

Mat3 deformationGradient(const PdSample& s, const Points& x) {
  Mat3 F = Mat3::Zero();
  for (int k = 0; k < s.count; ++k) F += x.row(s.nodes[k]).transpose() * s.grad.row(k);
  return F;
}

void scatter(const PdSample& s, const Mat3& stress, Points& out) {
  for (int k = 0; k < s.count; ++k) out.row(s.nodes[k]) += (stress * s.grad.row(k).transpose()).transpose();
}

}  // namespace

double pdEnergy(const PdModel& model, const Points& x, Points* grad, int body) {
  double energy = 0.0;
  if (grad) grad->setZero(x.rows(), 3);
  for (const PdSample& s : model.samples) {
    if (body >= 0 && s.body != body) continue;
    const Mat3 F = deformationGradient(s, x);
    const Svd3 svd = svd3(F);
    Mat3 stress = Mat3::Zero();
    if (s.w_corotated > 0.0) {
      const Mat3 r = F - svd.U * svd.V.transpose();
      energy += 0.5 * s.w_corotated * r.squaredNorm();
      stress += s.w_corotated * r;
    }
    if (s.w_volume > 0.0) {
      const Vec3 t = volumeProjection(svd.sigma, nullptr);
      const Mat3 r = F - svd.U * t.asDiagonal() * svd.V.transpose();
      energy += 0.5 * s.w_volume * r.squaredNorm();
      stress += s.w_volume * r;
    }
    if (grad) scatter(s, stress, *grad);
  }
  if (body >= 0) return energy;
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i]) continue;
    for (int o = 0; o < model.obstacleCount(); ++o) {
      Vec3 n;
      double curvature;
      const double d = model.obstacleDistance(o, x.row(i).transpose(), &n, &curvature);
      if (d >= 0.0) continue;
      energy += 0.5 * model.contact_stiffness * d * d;
      if (grad) grad->row(i) += model.contact_stiffness * d * n.transpose();
    }
  }
  return energy;
}

void pdElasticWeightGradients(const PdModel& model, const Points& x, int body, Points& corotated, Points& volume) {
  corotated.setZero(x.rows(), 3);
  volume.setZero(x.rows(), 3);
  const PdBody& b = model.bodies.at(body);
  for (int i = b.first_sample; i < b.first_sample + b.sample_count; ++i) {
    const PdSample& s = model.samples[i];
    const Mat3 F = deformationGradient(s, x);
    const Svd3 svd = svd3(F);
    if (b.corotated) scatter(s, s.volume * (F - svd.U * svd.V.transpose()), corotated);
    if (b.volume) {
      const Vec3 t = volumeProjection(svd.sigma, nullptr);
      scatter(s, s.volume * (F - svd.U * t.asDiagonal() * svd.V.transpose()), volume);
    }
  }
}

void pdHessianCache(const PdModel& model, const Points& x, std::vector<PdSampleCache>& cache) {
  cache.resize(model.samples.size());
  for (std::size_t i = 0; i < model.samples.size(); ++i) {
    const PdSample& s = model.samples[i];
    cache[i].svd = svd3(deformationGradient(s, x));
    if (s.w_volume > 0.0) cache[i].s = volumeProjection(cache[i].svd.sigma, &cache[i].ds);
  }
}

void pdEnergyHessianProduct(const PdModel& model, const Points& x, const std::vector<PdSampleCache>& cache,
                            const Points& z, Points& out) {
  out.setZero(z.rows(), 3);
  const Mat3 zero = Mat3::Zero();
  for (std::size_t i = 0; i < model.samples.size(); ++i) {
    const PdSample& s = model.samples[i];
    const Mat3 dF = deformationGradient(s, z);
    Mat3 stress = Mat3::Zero();
    if (s.w_corotated > 0.0)
      stress += s.w_corotated * (dF - isotropicDerivative(cache[i].svd, Vec3::Ones(), zero, dF));
    if (s.w_volume > 0.0) stress += s.w_volume * (dF - isotropicDerivative(cache[i].svd, cache[i].s, cache[i].ds, dF));
    scatter(s, stress, out);
  }
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i]) continue;
    for (int o = 0; o < model.obstacleCount(); ++o) {
      Vec3 n;
      double curvature;
      const double d = model.obstacleDistance(o, x.row(i).transpose(), &n, &curvature);
      if (d >= 0.0) continue;
      // k (n n^T + d hess(distance)) z, with hess(distance) = (I - n n^T) / |x - c| for a sphere
      const Vec3 zi = z.row(i).transpose();
      const Vec3 tangential = zi - n * n.dot(zi);
      out.row(i) += model.contact_stiffness * (n * n.dot(zi) + d * curvature * tangential).transpose();
    }
  }
}

}  // namespace deformable
}  // namespace rigidiff
