#include "rigidiff/world/knot_team.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "rigidiff/world/world_step.hpp"

namespace rigidiff {

namespace knot_detail {

// the loop knotJacobians stands for
void sequentialKnots(const WorldModel& w, WorldData& wd, const double* Q, const double* V, const double* TAU, int T,
                     double* Qend, double* Vend, double* jac) {
  const long nq = w.model.nq, nv = w.model.nv, block = 6 * nv * nv;
  std::vector<double> qn(Qend ? 0 : nq), vn(Vend ? 0 : nv);
  for (long t = 0; t < T; ++t)
    worldStepJacobians(w, wd, Q + t * nq, V + t * nv, TAU + t * nv, nullptr, 0, Qend ? Qend + t * nq : qn.data(),
                       Vend ? Vend + t * nv : vn.data(), jac + t * block, nullptr);
}

bool sameRows(const double* a, const double* b, long n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

// a wait for another thread's progress: the machine may run more threads than it has cores
void pause(int spins) {
  if (spins > 32) std::this_thread::yield();
}

}  // namespace knot_detail

void knotJacobians(const WorldModel& w, WorldData& wd, int threads, const double* Q, const double* V,
                   const double* TAU, int T, double* Qend, double* Vend, double* jac) {
  if (threads > 1 && T > 1 && wd.knotTeam(threads).run(w, wd, Q, V, TAU, T, Qend, Vend, jac)) return;
  knot_detail::sequentialKnots(w, wd, Q, V, TAU, T, Qend, Vend, jac);
}

void KnotTeam::WarmStart::save(const WorldData& wd) {
  known = wd.warm_known;
  end = wd.warm_end;
  keys = wd.contact.warmKeys;
  prevKeys = wd.contact.prevKeys;
  classes = wd.contact.warmClasses;
  impulses = wd.contact.warmImpulses;
}

void KnotTeam::WarmStart::restore(WorldData& wd) const {
  wd.warm_known = known;
  wd.warm_end = end;
  wd.contact.warmKeys = keys;
  wd.contact.prevKeys = prevKeys;
  wd.contact.warmClasses = classes;
  wd.contact.warmImpulses = impulses;
}

KnotTeam::KnotTeam(int threads) : team_(threads), workers_(team_.size()) {}

KnotTeam::~KnotTeam() = default;

int KnotTeam::claimReached(int T) {
  const int reached = reached_.load(std::memory_order_acquire);
  for (int t = scan_.load(std::memory_order_relaxed); t < reached && t < T; ++t) {
    if (claimed_[t].load(std::memory_order_relaxed) || claimed_[t].exchange(1)) continue;
    claims_.fetch_add(1);
    int low = scan_.load(std::memory_order_relaxed);  // only a hint: a claimer scans from there
    while (low < t && !scan_.compare_exchange_weak(low, t)) {
    }
    return t;
  }
  return -1;
}

void KnotTeam::stepThrough(const WorldModel& w, WorldData& wd, const double* Q, const double* V, const double* TAU,
                           int T, double* Qend, double* Vend, double* jac) {
  const long nq = w.model.nq, nv = w.model.nv, block = 6 * nv * nv;
  try {
    for (int t = 0; t < T; ++t) {
      warm_[t].save(wd);
      // the helpers have more reached knots waiting than there are of them (or none came yet): this one with
      // its Jacobians here, from wd's own warm start, as the sequential loop would
      const bool fuse = reached_.load(std::memory_order_relaxed) - claims_.load() > helpers_.load() &&
                        !claimed_[t].exchange(1);
      if (fuse) claims_.fetch_add(1);
      reached_.store(t + 1, std::memory_order_release);  // with a rollout, Q[t] came before
      if (fuse)
        worldStepJacobians(w, wd, Q + t * nq, V + t * nv, TAU + t * nv, nullptr, 0, Qend + t * nq, Vend + t * nv,
                           jac + t * block, nullptr);
      else
        worldStep(w, wd, Q + t * nq, V + t * nv, TAU + t * nv, nullptr, Qend + t * nq, Vend + t * nv);
    }
  } catch (...) {  // the sequential loop throws it again
    mismatch_.store(true);
    stopped_.store(true, std::memory_order_release);
  }
}

void KnotTeam::help(const WorldModel& w, int worker, bool stepper, const double* Q, const double* V,
                    const double* TAU, int T, bool stepping, double* jac) {
  const long nq = w.model.nq, nv = w.model.nv, block = 6 * nv * nv;
  if (!stepper) helpers_.fetch_add(1);
  try {
    if (!workers_[worker]) workers_[worker] = std::make_unique<Worker>(w);  // on this thread: its own memory
    Worker& k = *workers_[worker];
    for (int spins = 0; claims_.load() < T && !stopped_.load(std::memory_order_acquire);) {
      const int t = claimReached(T);
      if (t < 0) {  // the stepper has not reached the next knot yet
        knot_detail::pause(++spins);
        continue;
      }
      spins = 0;
      if (stepping) warm_[t].restore(k.wd);
      worldStepJacobians(w, k.wd, Q + t * nq, V + t * nv, TAU + t * nv, nullptr, 0, &ends_[t * (nq + nv)],
                         &ends_[t * (nq + nv) + nq], jac + t * block, nullptr);
      done_by_[t] = stepper ? 1 : 2;
    }
  } catch (...) {
    mismatch_.store(true);
    stopped_.store(true, std::memory_order_release);
  }
  if (!stepper) helpers_.fetch_sub(1);
}

bool KnotTeam::run(const WorldModel& w, WorldData& wd, const double* Q, const double* V, const double* TAU, int T,
                   double* Qend, double* Vend, double* jac) {
  const long nq = w.model.nq, nv = w.model.nv;
  // the knots need the stepper for their states (a rollout) or their contact warm starts
  const bool stepping = Qend || stepKind(w) == StepKind::Constrained;
  double* qe = Qend;
  double* ve = Vend;
  if (stepping && !Qend) {
    qend_.resize(T * nq), vend_.resize(T * nv);
    qe = qend_.data(), ve = vend_.data();
  }
  if (capacity_ < T) {
    warm_.resize(T);
    claimed_.reset(new std::atomic<char>[T]);
    capacity_ = T;
  }
  ends_.resize(T * (nq + nv));
  done_by_.assign(T, 0);
  for (int t = 0; t < T; ++t) claimed_[t].store(0, std::memory_order_relaxed);
  reached_.store(stepping ? 0 : T);
  claims_.store(0);
  helpers_.store(0);
  scan_.store(0);
  stopped_.store(false);
  mismatch_.store(false);
  // one item per thread; item 0, claimed first, is the stepper's, which then helps too
  const auto body = [&](int worker, int begin, int end) {
    for (int i = begin; i < end; ++i) {
      if (i == 0 && stepping) stepThrough(w, wd, Q, V, TAU, T, qe, ve, jac);
      help(w, worker, i == 0, Q, V, TAU, T, stepping, jac);
    }
  };
  if (!team_.tryRunWorkers(team_.size(), 1, body)) return false;
  ++runs_;
  const long byHelpers = std::count(done_by_.begin(), done_by_.end(), 2);
  helper_knots_ += byHelpers;
  stepper_knots_ += T - byHelpers;
  // a knot differentiated apart must end where the stepper's step did (worldStepJacobians takes worldStep's step)
  for (int t = 0; t < T && stepping && !mismatch_.load(); ++t)
    if (done_by_[t] && !(knot_detail::sameRows(&ends_[t * (nq + nv)], qe + t * nq, nq) &&
                          knot_detail::sameRows(&ends_[t * (nq + nv) + nq], ve + t * nv, nv)))
      mismatch_.store(true);
  if (mismatch_.load()) {  // never expected: the sequential loop decides (and throws what it throws)
    ++fallbacks_;
    if (stepping) warm_[0].restore(wd);
    knot_detail::sequentialKnots(w, wd, Q, V, TAU, T, Qend, Vend, jac);
  }
  return true;
}

}  // namespace rigidiff
