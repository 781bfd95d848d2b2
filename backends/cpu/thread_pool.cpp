#include "thread_pool.h"

#include <cstdlib>

namespace fa2::cpu {

int default_worker_count() {
  if (const char *env = std::getenv("FA2_CPU_THREADS")) {
    const long n = std::strtol(env, nullptr, 10);
    if (n > 0) return int(n < 1024 ? n : 1024);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? int(hw) : 1;
}

ThreadPool::ThreadPool(int workers) {
  for (int w = 1; w < workers; ++w) threads_.emplace_back([this, w] { worker_main(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : threads_) t.join();
}

void ThreadPool::drain(int worker) {
  for (int64_t item = next_.fetch_add(1); item < count_; item = next_.fetch_add(1))
    task_(ctx_, item, worker);
}

void ThreadPool::run(int64_t count, Task task, const void *ctx) {
  if (count <= 0) return;
  if (threads_.empty() || count == 1) {
    for (int64_t item = 0; item < count; ++item) task(ctx, item, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = task, ctx_ = ctx, count_ = count;
    next_.store(0);
    running_ = int(threads_.size());
    ++generation_;
  }
  wake_.notify_all();
  drain(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return running_ == 0; });
}

void ThreadPool::worker_main(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    drain(worker);
    std::lock_guard<std::mutex> lock(mutex_);
    if (--running_ == 0) done_.notify_one();
  }
}

}  // namespace fa2::cpu
