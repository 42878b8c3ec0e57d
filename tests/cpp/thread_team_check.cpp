// The thread team of the projective world's per-element loops and of a trajectory's knots
// (world/thread_team.hpp): every item of every loop runs exactly once, whatever the loop's size; a loop started
// from inside a running loop, or on a team another thread is using, is refused (the caller then runs it alone);
// loops from several threads on one team all complete; a loop's worker indices are in [0, size) and never in
// use by two threads at once; teams are made and destroyed without hanging. Prints "ok" when all hold.
// Built and run by test_thread_team.py.
#include <atomic>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "rigidiff/world/thread_team.hpp"

using rigidiff::ThreadTeam;

namespace {

int failures = 0;

void check(bool ok, const char* what, int detail) {
  if (!ok && failures++ < 10) std::printf("FAILED: %s (%d)\n", what, detail);
}

// runs one loop of n items on the team (alone when refused) and checks each item ran once
void countedLoop(ThreadTeam& team, int n) {
  std::vector<std::atomic<int>> hits(n);
  for (auto& h : hits) h.store(0);
  const std::function<void(int, int)> body = [&](int begin, int end) {
    for (int i = begin; i < end; ++i) hits[i].fetch_add(1);
  };
  if (!team.tryRun(n, body)) body(0, n);
  for (int i = 0; i < n; ++i) check(hits[i].load() == 1, "an item ran other than once", i);
}

}  // namespace

int main() {
  for (int threads : {1, 2, 3, 8}) {
    ThreadTeam team(threads);
    check(team.size() == threads, "size", threads);
    for (int round = 0; round < 300; ++round) countedLoop(team, (round * 37) % 1000);  // 0, 37, ... items
  }
  {  // a loop started inside a loop is refused, and the outer one still completes
    ThreadTeam team(4);
    std::atomic<int> refused{0}, items{0};
    const std::function<void(int, int)> inner = [](int, int) {};
    const std::function<void(int, int)> outer = [&](int begin, int end) {
      if (!team.tryRun(10, inner)) refused.fetch_add(1);
      items.fetch_add(end - begin);
    };
    check(team.tryRun(500, outer), "an idle team refused a loop", 0);
    check(items.load() == 500, "outer loop items", items.load());
    check(refused.load() > 0, "a nested loop was accepted", refused.load());
  }
  {  // four threads share one team: each loop completes, run by the team or alone
    ThreadTeam team(3);
    std::vector<std::thread> users;
    for (int u = 0; u < 4; ++u)
      users.emplace_back([&team, u] {
        for (int round = 0; round < 200; ++round) countedLoop(team, 100 + 13 * u + round);
      });
    for (std::thread& t : users) t.join();
  }
  for (int threads : {1, 2, 3, 8}) {  // worker indices: in range, one thread each at a time
    ThreadTeam team(threads);
    std::vector<std::atomic<int>> inside(threads);
    for (auto& w : inside) w.store(0);
    std::atomic<int> items{0}, bad{0};
    const auto body = [&](int worker, int begin, int end) {
      if (worker < 0 || worker >= threads || inside[worker].fetch_add(1) != 0) bad.fetch_add(1);
      for (int i = begin; i < end; ++i) items.fetch_add(1);
      if (worker >= 0 && worker < threads) inside[worker].fetch_sub(1);
    };
    for (int round = 0; round < 200; ++round) {
      items.store(0);
      check(team.tryRunWorkers(50 + round, round % 3, body), "an idle team refused a loop", round);
      check(items.load() == 50 + round, "worker loop items", items.load());
    }
    check(bad.load() == 0, "a worker index out of range or on two threads at once", bad.load());
  }
  for (int k = 0; k < 200; ++k) {  // made and destroyed, used or not
    ThreadTeam team(1 + k % 4);
    if (k % 2) countedLoop(team, 64);
  }
  if (failures) return 1;
  std::printf("ok\n");
  return 0;
}
