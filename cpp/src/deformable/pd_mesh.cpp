// Meshes of a Projective Dynamics world turned into quadrature samples and lumped masses.
//
// Tetrahedron: one sample, F = Ds Dm^-1. Hexahedron (trilinear): node k sits at the reference corner
// xi = (k & 1, (k >> 1) & 1, (k >> 2) & 1) of [0, 1]^3 (x fastest), and 2 x 2 x 2 Gauss samples carry
// d N_k / d X = J^-T d N_k / d xi and the weight |J| / 8. Each vertex's mass is the exact integral of
// density * N_k over its elements (the rows of the consistent mass matrix summed): the Gauss rule is exact for
// it because |J| N_k has degree <= 3 in each reference coordinate.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "rigidiff/deformable/pd_model.hpp"

namespace rigidiff {
namespace deformable {
namespace {

double shape(int k, const Vec3& xi) {
  double out = 1.0;
  for (int d = 0; d < 3; ++d) out *= ((k >> d) & 1) ? xi[d] : 1.0 - xi[d];
  return out;
}

Vec3 shapeGradient(int k, const Vec3& xi) {
  Vec3 g;
  for (int d = 0; d < 3; ++d) {
    double v = ((k >> d) & 1) ? 1.0 : -1.0;
    for (int e = 0; e < 3; ++e)
      if (e != d) v *= ((k >> e) & 1) ? xi[e] : 1.0 - xi[e];
    g[d] = v;
  }
  return g;
}

std::string elementName(const std::string& body, int e) {
  return "deformable " + body + ": element " + std::to_string(e);
}

// the longest edge of an element's bounding box: the length scale of the degeneracy test
double elementSize(const Points& rest, const Eigen::MatrixXi& elements, int e) {
  Vec3 lo = rest.row(elements(e, 0)).transpose(), hi = lo;
  for (int k = 1; k < elements.cols(); ++k) {
    lo = lo.cwiseMin(rest.row(elements(e, k)).transpose());
    hi = hi.cwiseMax(rest.row(elements(e, k)).transpose());
  }
  return (hi - lo).maxCoeff();
}

constexpr double kDegenerate = 1e-9;  // |J| below this times size^3 is a degenerate element

void tetSamples(const std::string& name, const Points& rest, const Eigen::MatrixXi& elements, int e, double density,
                int offset, PdSample& s, VecX& mass) {
  Mat3 Dm;
  for (int j = 0; j < 3; ++j) Dm.col(j) = (rest.row(elements(e, j + 1)) - rest.row(elements(e, 0))).transpose();
  const double det = Dm.determinant();
  const double size = elementSize(rest, elements, e);
  if (!(det > kDegenerate * size * size * size))
    throw std::invalid_argument(elementName(name, e) + (det < 0.0 ? " is inverted" : " is degenerate") +
                                " (signed volume " + std::to_string(det / 6.0) + ")");
  const Mat3 inv = Dm.inverse();
  s.count = 4;
  s.grad.setZero();
  for (int j = 0; j < 3; ++j) s.grad.row(j + 1) = inv.row(j);
  s.grad.row(0) = -(inv.row(0) + inv.row(1) + inv.row(2));
  s.volume = det / 6.0;
  for (int k = 0; k < 4; ++k) {
    s.nodes[k] = offset + elements(e, k);
    mass[s.nodes[k]] += density * s.volume / 4.0;
  }
}

void hexSamples(const std::string& name, const Points& rest, const Eigen::MatrixXi& elements, int e, double density,
                int offset, std::vector<PdSample>& out, VecX& mass) {
  const double g = 0.5 / std::sqrt(3.0);
  const double size = elementSize(rest, elements, e);
  // the Gauss samples, then the corners: an element folded between its samples is refused too
  for (int corner = 0; corner < 8; ++corner) {
    Mat3 J = Mat3::Zero();
    const Vec3 xi((corner & 1), (corner >> 1) & 1, (corner >> 2) & 1);
    for (int k = 0; k < 8; ++k) J += rest.row(elements(e, k)).transpose() * shapeGradient(k, xi).transpose();
    if (!(J.determinant() > kDegenerate * size * size * size))
      throw std::invalid_argument(elementName(name, e) + (J.determinant() < 0.0 ? " is inverted" : " is degenerate") +
                                  " at its corner " + std::to_string(corner) +
                                  " (node k sits at (k & 1, (k >> 1) & 1, (k >> 2) & 1) of the unit cube)");
  }
  for (int sample = 0; sample < 8; ++sample) {
    const Vec3 xi(0.5 + ((sample & 1) ? g : -g), 0.5 + (((sample >> 1) & 1) ? g : -g),
                  0.5 + (((sample >> 2) & 1) ? g : -g));
    Mat3 J = Mat3::Zero();
    for (int k = 0; k < 8; ++k) J += rest.row(elements(e, k)).transpose() * shapeGradient(k, xi).transpose();
    const double det = J.determinant();
    if (!(det > kDegenerate * size * size * size))
      throw std::invalid_argument(elementName(name, e) + " is inverted or degenerate at a quadrature point");
    const Mat3 JinvT = J.inverse().transpose();
    PdSample s;
    s.count = 8;
    s.grad.setZero();
    s.volume = det / 8.0;
    for (int k = 0; k < 8; ++k) {
      s.nodes[k] = offset + elements(e, k);
      s.grad.row(k) = (JinvT * shapeGradient(k, xi)).transpose();
      mass[s.nodes[k]] += density * shape(k, xi) * s.volume;
    }
    out.push_back(s);
  }
}

// vertices on faces that belong to a single element
void markSurface(const Eigen::MatrixXi& elements, int offset, std::vector<char>& surface) {
  std::map<std::array<int, 4>, int> faces;
  const bool hex = elements.cols() == 8;
  const int face_count = hex ? 6 : 4;
  for (int e = 0; e < elements.rows(); ++e) {
    for (int f = 0; f < face_count; ++f) {
      std::array<int, 4> key{-1, -1, -1, -1};
      int used = 0;
      for (int k = 0; k < elements.cols(); ++k) {
        const bool on = hex ? (((k >> (f / 2)) & 1) == (f % 2)) : (k != f);
        if (on) key[used++] = elements(e, k);
      }
      std::sort(key.begin(), key.begin() + used);
      ++faces[key];
    }
  }
  for (const auto& [key, count] : faces)
    if (count == 1)
      for (int v : key)
        if (v >= 0) surface[offset + v] = 1;
}

}  // namespace

int PdModel::addBody(const std::string& name, const Points& rest, const Eigen::MatrixXi& elements,
                     double youngs_modulus, double poisson_ratio, double density, int energies) {
  if (energies <= 0 || energies > (kCorotated | kVolume | kNeoHookean | kCorotatedHyperelastic))
    throw std::invalid_argument("deformable " + name + ": no energies");
  for (const PdBody& b : bodies)
    if (b.name == name) throw std::invalid_argument("name '" + name + "' is already used");
  if (elements.rows() == 0) throw std::invalid_argument("deformable " + name + ": the mesh has no elements");
  if (elements.cols() != 4 && elements.cols() != 8)
    throw std::invalid_argument("deformable " + name + ": elements must have 4 (tetrahedra) or 8 (hexahedra) nodes");
  if (!rest.allFinite()) throw std::invalid_argument("deformable " + name + ": vertices must be finite");
  if (!(density > 0.0)) throw std::invalid_argument("density must be > 0, got " + std::to_string(density));
  for (int e = 0; e < elements.rows(); ++e)
    for (int k = 0; k < elements.cols(); ++k)
      if (elements(e, k) < 0 || elements(e, k) >= rest.rows())
        throw std::invalid_argument(elementName(name, e) + " names vertex " + std::to_string(elements(e, k)) +
                                    " of " + std::to_string(rest.rows()));
  const int offset = n;
  VecX body_mass = VecX::Zero(offset + rest.rows());
  std::vector<PdSample> new_samples;
  for (int e = 0; e < elements.rows(); ++e) {
    if (elements.cols() == 4) {
      PdSample s;
      tetSamples(name, rest, elements, e, density, offset, s, body_mass);
      new_samples.push_back(s);
    } else {
      hexSamples(name, rest, elements, e, density, offset, new_samples, body_mass);
    }
  }
  for (int i = 0; i < rest.rows(); ++i)
    if (!(body_mass[offset + i] > 0.0))
      throw std::invalid_argument("deformable " + name + ": vertex " + std::to_string(i) +
                                  " belongs to no element");
  PdBody body;
  body.name = name;
  body.first_vertex = offset;
  body.vertex_count = static_cast<int>(rest.rows());
  body.first_sample = static_cast<int>(samples.size());
  body.first_element = elementCount();
  body.element_count = static_cast<int>(elements.rows());
  body.sample_count = static_cast<int>(new_samples.size());
  body.density = density;
  body.corotated = energies & kCorotated;
  body.volume = energies & kVolume;
  body.neohookean = energies & kNeoHookean;
  body.corotated_hyperelastic = energies & kCorotatedHyperelastic;
  const int b = static_cast<int>(bodies.size());
  for (PdSample& s : new_samples) s.body = b;
  bodies.push_back(body);
  samples.insert(samples.end(), new_samples.begin(), new_samples.end());
  const std::size_t elements_before = element_start.size();
  const int per_element = elements.cols() == 4 ? 1 : 8;
  for (int e = 0; e < elements.rows(); ++e) element_start.push_back(element_start.back() + per_element);
  n += static_cast<int>(rest.rows());
  body_mass.head(offset) = mass;
  mass = body_mass;
  fixed.resize(n, 0);
  surface.resize(n, 0);
  markSurface(elements, offset, surface);
  try {
    setMaterial(b, youngs_modulus, poisson_ratio);
  } catch (...) {
    bodies.pop_back();
    samples.resize(body.first_sample);
    element_start.resize(elements_before);
    n = offset;
    mass.conservativeResize(n);
    fixed.resize(n);
    surface.resize(n);
    throw;
  }
  updateFreeIndex();
  return b;
}

void PdModel::setMaterial(int b, double youngs_modulus, double poisson_ratio) {
  if (!(youngs_modulus > 0.0) || !std::isfinite(youngs_modulus))
    throw std::invalid_argument("youngs_modulus must be finite and > 0, got " + std::to_string(youngs_modulus));
  if (!(poisson_ratio >= 0.0 && poisson_ratio < 0.5))
    throw std::invalid_argument("poisson_ratio must be in [0, 0.5), got " + std::to_string(poisson_ratio));
  PdBody& body = bodies.at(b);
  body.youngs_modulus = youngs_modulus;
  body.poisson_ratio = poisson_ratio;
  double mu, lambda;
  lame(youngs_modulus, poisson_ratio, &mu, &lambda);
  for (int i = body.first_sample; i < body.first_sample + body.sample_count; ++i) {
    // the corotated hyperelastic energy's shear term is a corotated energy of its own
    samples[i].w_corotated = (body.corotated + body.corotated_hyperelastic) * 2.0 * mu * samples[i].volume;
    samples[i].w_volume = body.volume ? lambda * samples[i].volume : 0.0;
    samples[i].mu_neohookean = body.neohookean ? mu * samples[i].volume : 0.0;
    samples[i].lambda_neohookean = body.neohookean ? lambda * samples[i].volume : 0.0;
    samples[i].w_determinant = body.corotated_hyperelastic ? lambda * samples[i].volume : 0.0;
  }
}

void PdModel::setDensity(int b, double density) {
  if (!(density > 0.0) || !std::isfinite(density))
    throw std::invalid_argument("density must be finite and > 0, got " + std::to_string(density));
  PdBody& body = bodies.at(b);
  mass.segment(body.first_vertex, body.vertex_count) *= density / body.density;
  body.density = density;
}

void PdModel::updateFreeIndex() {
  free_index.assign(n, -1);
  free_count = 0;
  for (int i = 0; i < n; ++i)
    if (!fixed[i]) free_index[i] = free_count++;
}

}  // namespace deformable
}  // namespace rigidiff
