// Binding of the continuous collision queries (declared in rigidiff/bind/api_ccd.hpp).
#include "rigidiff/bind/api_ccd.hpp"

#include <array>
#include <utility>

#include "rigidiff/collision/ccd/edge_edge.hpp"
#include "rigidiff/collision/ccd/point_edge.hpp"
#include "rigidiff/collision/ccd/point_point.hpp"
#include "rigidiff/collision/ccd/point_triangle.hpp"
#include "rigidiff/collision/ccd/swept_pairs.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {
namespace bind {

namespace {

// x[k] (k < 2K) of one row: the K start points then the K end points
template <int K>
std::array<Vec3, 2 * K> readRow(const double* row) {
  std::array<Vec3, 2 * K> x;
  for (int k = 0; k < 2 * K; ++k) x[k] = Vec3(row[3 * k], row[3 * k + 1], row[3 * k + 2]);
  return x;
}

CcdResult query(int pair, const double* row, const CcdOptions& o) {
  switch (pair) {
    case 0: {
      const auto x = readRow<2>(row);
      return pointPointCcd(x[0], x[1], x[2], x[3], o);
    }
    case 1: {
      const auto x = readRow<3>(row);
      return pointEdgeCcd(x[0], x[1], x[2], x[3], x[4], x[5], o);
    }
    case 2: {
      const auto x = readRow<4>(row);
      return pointTriangleCcd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], o);
    }
    default: {
      const auto x = readRow<4>(row);
      return edgeEdgeCcd(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], o);
    }
  }
}

}  // namespace

int ccdPointCount(int pair) {
  RD_CHECK_ARG(pair >= 0 && pair < kCcdPairCount, "unknown CCD pair code " << pair);
  return pair == 0 ? 2 : (pair == 1 ? 3 : 4);
}

void primitiveCcd(int pair, int n, const double* points, double min_distance, double t_max,
                  double conservative_rescaling, int max_iterations, unsigned char* hit, double* toi,
                  unsigned char* exhausted) {
  const int width = 6 * ccdPointCount(pair);
  CcdOptions o;
  o.min_distance = min_distance;
  o.t_max = t_max;
  o.conservative_rescaling = conservative_rescaling;
  o.max_iterations = max_iterations;
  checkCcdOptions(o);
  for (int i = 0; i < n; ++i) {
    try {
      const CcdResult r = query(pair, points + static_cast<long>(i) * width, o);
      hit[i] = r.hit;
      toi[i] = r.toi;
      exhausted[i] = r.exhausted;
    } catch (const std::invalid_argument& e) {
      if (n == 1) throw;
      RD_THROW(std::invalid_argument, "configuration " << i << ": " << e.what());
    }
  }
}

void ccdSweptPairs(const double* start_a, const double* end_a, int na, int ka, const double* start_b,
                   const double* end_b, int nb, int kb, double min_distance, std::vector<int>& out) {
  RD_CHECK_ARG(na >= 0 && nb >= 0 && ka >= 1 && kb >= 1,
               "bad primitive counts or sizes: " << na << " x " << ka << " and " << nb << " x " << kb);
  const auto points = [](const double* p, long count) {
    std::vector<Vec3> v(count);
    for (long i = 0; i < count; ++i) v[i] = Vec3(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
    return v;
  };
  const long ma = static_cast<long>(na) * ka, mb = static_cast<long>(nb) * kb;
  const std::vector<Vec3> sa = points(start_a, ma), ea = points(end_a, ma), sb = points(start_b, mb),
                          eb = points(end_b, mb);
  SweptPairsScratch scratch;
  std::vector<std::pair<int, int>> pairs;
  sweptPairs(sa.data(), ea.data(), na, ka, sb.data(), eb.data(), nb, kb, min_distance, scratch, pairs);
  out.clear();
  for (const auto& [i, j] : pairs) {
    out.push_back(i);
    out.push_back(j);
  }
}

}  // namespace bind
}  // namespace rigidiff
