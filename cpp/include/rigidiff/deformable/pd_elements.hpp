// Per-element work of a Projective Dynamics world spread over threads (the model's ThreadTeam). Each element
// writes only its own slot of an output buffer; the caller reduces the slots in element order, so results are
// the same bit for bit whatever the thread count.
#pragma once

#include <climits>
#include <exception>
#include <memory>
#include <mutex>

#include "rigidiff/deformable/pd_model.hpp"
#include "rigidiff/world/thread_team.hpp"

namespace rigidiff {
namespace deformable {

/// The model's thread team for options.threads, made (or made again after the count changed) here.
inline std::shared_ptr<ThreadTeam> elementTeam(const PdModel& model) {
  static std::mutex guard;
  std::lock_guard<std::mutex> lock(guard);
  if (!model.element_team || model.element_team->size() != model.options.threads)
    model.element_team = std::make_shared<ThreadTeam>(model.options.threads);
  return model.element_team;
}

/// Calls work(e) for every element e of the model on up to model.options.threads threads (one below 64
/// elements, where sharing the loop costs more than it saves), the model's thread team's. The exception of
/// the lowest failing element is rethrown unchanged.
template <typename Work>
void forEachElement(const PdModel& model, const Work& work) {
  const int m = model.elementCount();
  if (model.options.threads <= 1 || m < 64) {
    for (int e = 0; e < m; ++e) work(e);
    return;
  }
  std::mutex mutex;
  int failed = INT_MAX;
  std::exception_ptr error;
  const auto chunk = [&](int begin, int end) {
    for (int e = begin; e < end; ++e) {
      try {
        work(e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (e < failed) failed = e, error = std::current_exception();
      }
    }
  };
  if (!elementTeam(model)->tryRun(m, chunk)) chunk(0, m);
  if (error) std::rethrow_exception(error);
}

/// Largest node count of an element (a hexahedron's).
constexpr int kMaxElementNodes = 8;

/// F = sum x_k grad_k^T over the sample's nodes.
inline Mat3 deformationGradient(const PdSample& s, const Points& x) {
  Mat3 F = Mat3::Zero();
  for (int k = 0; k < s.count; ++k) F += x.row(s.nodes[k]).transpose() * s.grad.row(k);
  return F;
}

}  // namespace deformable
}  // namespace rigidiff
