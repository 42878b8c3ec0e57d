// Checks that the box tree's refit and queries allocate nothing once their output vectors have grown:
// malloc is wrapped and counted around the second run of each. Built and run by test_no_heap_allocation.py.
#include <cmath>
#include <cstdio>
#include <vector>

#include "rigidiff/collision/bvh.hpp"

#include "malloc_counter.hpp"  // after the standard headers, which declare malloc

using namespace rigidiff;

namespace {

// boxes around the points of a wavy sheet, each a little larger than its spacing so that neighbours overlap
void sheet(double phase, std::vector<Vec3>& lo, std::vector<Vec3>& hi) {
  lo.clear();
  hi.clear();
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 40; ++j) {
      const Vec3 c(0.1 * i, 0.1 * j, 0.05 * std::sin(0.3 * i + 0.2 * j + phase));
      lo.push_back(c - Vec3::Constant(0.06));
      hi.push_back(c + Vec3::Constant(0.06));
    }
}

}  // namespace

int main() {
  std::vector<Vec3> lo, hi, lo2, hi2;
  sheet(0.0, lo, hi);
  sheet(0.7, lo2, hi2);
  const int n = static_cast<int>(lo.size());
  Bvh a, b;
  a.build(lo.data(), hi.data(), n, 0.01);
  b.build(lo.data(), hi.data(), n);
  const SE3 aMb(Eigen::AngleAxisd(0.3, Vec3(1.0, 1.0, 0.2).normalized()).toRotationMatrix(), Vec3(0.5, 0.3, 0.05));
  std::vector<int> hits;
  std::vector<std::pair<int, int>> pairs;
  int failures = 0;
  auto check = [&](const char* name, auto&& query) {
    query();  // warm-up: the output vector grows to its working size
    const long before = g_mallocs;
    query();
    const long count = g_mallocs - before;
    const std::size_t found = hits.size() + pairs.size();
    std::printf("%-10s %ld heap allocations, %zu results\n", name, count, found);
    if (count != 0 || found == 0) ++failures;
  };
  check("refit", [&] {
    a.refit(lo2.data(), hi2.data(), n, 0.01);
    a.queryBox(Vec3::Zero(), Vec3::Constant(1.0), 0.0, hits);
    pairs.clear();
  });
  check("box", [&] { a.queryBox(Vec3::Zero(), Vec3::Constant(1.0), 0.02, hits); pairs.clear(); });
  check("halfspace", [&] { a.queryHalfspace(Vec3(0.0, 0.6, 0.8), 0.3, 0.02, hits); pairs.clear(); });
  check("self", [&] { a.selfPairs(0.01, pairs); hits.clear(); });
  check("pairs", [&] { bvhPairs(a, b, aMb, 0.01, pairs); hits.clear(); });
  std::printf("%d of 5 queries failed\n", failures);
  return failures == 0 ? 0 : 1;
}
