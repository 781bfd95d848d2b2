// A small fork-join pool on std::thread (no OpenMP: the library must run
// where libgomp is absent). parallel_for hands out item indices one at a
// time through an atomic counter, so uneven items (causal rows) balance;
// the calling thread works too, as worker 0.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace fa2::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int workers);  // total, including the caller
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int workers() const { return int(threads_.size()) + 1; }

  // body(item, worker) for every item in [0, count); returns when all are done.
  template <class Body>
  void parallel_for(int64_t count, const Body &body) {
    run(count, [](const void *ctx, int64_t item, int worker) {
      (*static_cast<const Body *>(ctx))(item, worker);
    }, &body);
  }

 private:
  using Task = void (*)(const void *ctx, int64_t item, int worker);
  void run(int64_t count, Task task, const void *ctx);
  void drain(int worker);
  void worker_main(int worker);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;  // bumped per parallel_for; workers wait for a change
  int running_ = 0;          // helper threads still inside the current job
  bool stopping_ = false;
  Task task_ = nullptr;
  const void *ctx_ = nullptr;
  int64_t count_ = 0;
  std::atomic<int64_t> next_{0};
};

// FA2_CPU_THREADS when set to a positive number, else the hardware's count.
int default_worker_count();

}  // namespace fa2::cpu
