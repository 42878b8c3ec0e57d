// The element blocks of the Hessian of a Projective Dynamics energy (pd_hessian.hpp).
//
// With F = sum_k x_k g_k^T and the stress S(F) = sum w (F - P(F)), a sample contributes
// H[(a, r), (b, c)] = sum_{i, j} g_a[i] C[(r, i), (c, j)] g_b[j], where C = dS/dF (9 x 9, F's entries
// row-major). C is probed column by column with the projections' directional derivatives.
#include "rigidiff/deformable/pd_hessian.hpp"

#include <algorithm>
#include <cmath>

#include "rigidiff/deformable/pd_corotated_hyperelastic.hpp"
#include "rigidiff/deformable/pd_elements.hpp"
#include "rigidiff/deformable/pd_muscle.hpp"
#include "rigidiff/deformable/pd_projection.hpp"

namespace rigidiff {
namespace deformable {
namespace {

constexpr int kBlock = kElementBlock;
static_assert(kElementBlock == 3 * kMaxElementNodes, "a block holds an element's dofs");
using Block = Eigen::Matrix<double, kBlock, kBlock>;
using Mat9 = Eigen::Matrix<double, 9, 9>;

// dS/dF of one sample (sample k) at x (cache: where F's SVD and volume projection may be recorded, or null;
// reused: set if they were)
Mat9 stressDerivative(const PdModel& model, const PdSample& s, int k, const Points& x, const PdSampleCache* cache,
                      bool* reused) {
  const Mat3 F = deformationGradient(s, x);
  const PdSampleCache::Entry* known = cache ? cache->find(k, F) : nullptr;
  *reused = known != nullptr;
  const Svd3 svd = known ? known->svd : svd3(F);
  Vec3 volume_s = Vec3::Ones();
  Mat3 volume_ds = Mat3::Zero();
  if (s.w_volume > 0.0)
    volume_s = volumeProjection(svd.sigma, &volume_ds, known && known->has_volume ? &known->volume : nullptr);
  const Mat3 zero = Mat3::Zero();
  // neo-Hookean: dP = mu dF + lambda tr(F^-1 dF) F^-T - (lambda log J - mu) F^-T dF^T F^-T
  Mat3 inv = Mat3::Zero(), inv_t = Mat3::Zero();
  double log_j = 0.0;
  if (s.mu_neohookean > 0.0) {
    inv = F.inverse();
    inv_t = inv.transpose();
    log_j = std::log(F.determinant());
  }
  const Mat3 cof = s.w_determinant > 0.0 ? cofactor(F) : zero;
  // the projections' derivatives in the SVD's frame, as linear maps (their divisions done once, not per column)
  FrameDerivative corotated, volume;
  if (s.w_corotated > 0.0) corotated = FrameDerivative(svd.sigma, Vec3::Ones(), zero);
  if (s.w_volume > 0.0) volume = FrameDerivative(svd.sigma, volume_s, volume_ds);
  Mat9 C;
  for (int m = 0; m < 9; ++m) {
    Mat3 dF = Mat3::Zero();
    dF(m / 3, m % 3) = 1.0;
    Mat3 dS = Mat3::Zero();
    if (s.mu_neohookean > 0.0)
      dS += s.mu_neohookean * dF + s.lambda_neohookean * (inv * dF).trace() * inv_t -
            (s.lambda_neohookean * log_j - s.mu_neohookean) * inv_t * dF.transpose() * inv_t;
    if (s.w_determinant > 0.0) dS += determinantStressDerivative(s, F, cof, dF);
    if (s.w_corotated > 0.0 || s.w_volume > 0.0) {
      // in the SVD's frame dF = e_r e_i^T is the outer product of U's row r and V's row i; the weighted
      // derivatives are summed there and brought back once
      const Mat3 M = svd.U.row(m / 3).transpose() * svd.V.row(m % 3);
      Mat3 L = Mat3::Zero();
      if (s.w_corotated > 0.0) L += s.w_corotated * corotated(M);
      if (s.w_volume > 0.0) L += s.w_volume * volume(M);
      dS += (s.w_corotated + s.w_volume) * dF - svd.U * L * svd.V.transpose();
    }
    for (int r = 0; r < 3; ++r)
      for (int i = 0; i < 3; ++i) C(3 * r + i, m) = dS(r, i);
  }
  if (s.muscle >= 0) muscleStressDerivative(model, s, F, C);
  return C;
}

// y = H z for an element's D x D block (column-major, leading dimension kBlock), a column at a time: the
// same sums in the same order as Eigen's matrix-vector kernel, without its call and blocking, the sums held
// in registers (a local array: y might alias H for all the compiler knows)
template <int D>
void blockProduct(const double* H, const double* z, double* y) {
  double sum[D];
  for (int i = 0; i < D; ++i) sum[i] = H[i] * z[0];
  for (int j = 1; j < D; ++j)
    for (int i = 0; i < D; ++i) sum[i] += H[j * kBlock + i] * z[j];
  for (int i = 0; i < D; ++i) y[i] = sum[i];
}

}  // namespace

int pdHessianBuild(const PdModel& model, const Points& x, PdHessian& hessian, const std::vector<char>* only,
                   const PdSampleCache* cache) {
  const int m = model.elementCount();
  std::vector<char> reused(model.samples.size(), 0);  // (per sample: written by its element's thread)
  hessian.blocks.assign(static_cast<std::size_t>(m) * kBlock * kBlock, 0.0);
  hessian.x = x;
  forEachElement(model, [&](int e) {
    if (only && !(*only)[e]) return;
    // accumulated by coordinate blocks, Hc(8 r + a, 8 c + b) = H(3 a + r, 3 b + c), so that each sample adds
    // whole 8 x 8 blocks; only c >= r: H is symmetric, its lower blocks mirrored once at the end
    Eigen::Matrix<double, kBlock, kBlock> Hc = Eigen::Matrix<double, kBlock, kBlock>::Zero();
    constexpr int N = kMaxElementNodes;
    int count = 0;
    for (int k = model.element_start[e]; k < model.element_start[e + 1]; ++k) {
      const PdSample& s = model.samples[k];
      count = s.count;
      if (s.w_corotated <= 0.0 && s.w_volume <= 0.0 && s.mu_neohookean <= 0.0 && s.w_determinant <= 0.0 &&
          s.muscle < 0)
        continue;
      bool from_cache = false;
      const Mat9 C = stressDerivative(model, s, k, x, cache, &from_cache);
      reused[k] = from_cache;
      const Eigen::Matrix<double, N, 3>& G = s.grad;  // rows beyond s.count are zero
      // C is symmetric (a Hessian): its (r, c) block is averaged with the (c, r) one transposed, so H is
      // exactly symmetric, as the Newton-Cholesky baseline's factorisation (which reads one triangle) needs
      for (int r = 0; r < 3; ++r)
        for (int c = r; c < 3; ++c) {
          const Eigen::Matrix<double, N, 3> GC =
              G * (0.5 * (C.block<3, 3>(3 * r, 3 * c) + C.block<3, 3>(3 * c, 3 * r).transpose()));
          Hc.block<N, N>(N * r, N * c).noalias() += GC * G.transpose();
        }
    }
    Eigen::Map<Block> H(hessian.blocks.data() + static_cast<std::size_t>(e) * kBlock * kBlock);
    for (int c = 0; c < 3; ++c)
      for (int b = 0; b < count; ++b)
        for (int r = 0; r < 3; ++r)
          for (int a = 0; a < count; ++a)
            H(3 * a + r, 3 * b + c) = r <= c ? Hc(N * r + a, N * c + b) : Hc(N * c + b, N * r + a);
  });
  return static_cast<int>(std::count(reused.begin(), reused.end(), 1));
}

void pdHessianProduct(const PdModel& model, const PdHessian& hessian, const Points& z, Points& out) {
  const int m = model.elementCount();
  std::vector<double>& local = hessian.products;
  local.resize(static_cast<std::size_t>(m) * kBlock);
  forEachElement(model, [&](int e) {
    const PdSample& s = model.samples[model.element_start[e]];
    Eigen::Matrix<double, kBlock, 1> zl;
    for (int a = 0; a < s.count; ++a) zl.segment<3>(3 * a) = z.row(s.nodes[a]).transpose();
    const double* H = hessian.blocks.data() + static_cast<std::size_t>(e) * kBlock * kBlock;
    double* y = local.data() + static_cast<std::size_t>(e) * kBlock;
    static_assert(kBlock == 24, "hexahedra (24 dofs) and tetrahedra (12)");
    if (s.count == 8)
      blockProduct<24>(H, zl.data(), y);
    else
      blockProduct<12>(H, zl.data(), y);
  });
  out.setZero(z.rows(), 3);
  for (int e = 0; e < m; ++e) {
    const PdSample& s = model.samples[model.element_start[e]];
    const double* y = local.data() + static_cast<std::size_t>(e) * kBlock;
    for (int a = 0; a < s.count; ++a)
      for (int r = 0; r < 3; ++r) out(s.nodes[a], r) += y[3 * a + r];
  }
  // k (n n^T + d hess(distance)) z, with hess(distance) = (I - n n^T) / |x - c| for a sphere
  model.forEachPenetration(hessian.x, [&](int i, int, double d, const Vec3& n, double curvature) {
    const Vec3 zi = z.row(i).transpose();
    const Vec3 tangential = zi - n * n.dot(zi);
    out.row(i) += model.contact_stiffness * (n * n.dot(zi) + d * curvature * tangential).transpose();
  });
}

}  // namespace deformable
}  // namespace rigidiff
