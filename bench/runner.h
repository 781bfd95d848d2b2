// Runs one shape of the grid: operands allocated once for the whole grid
// (every shape of the paper's grid has the same number of elements), fwd and
// bwd timed with host clocks around calls bracketed by synchronize(), then
// results copied back and checked on sampled rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device_memory.h"
#include "accuracy.h"
#include "grid.h"

namespace fa2::bench {

// How many times a call runs: warm-up, then at least min_runs and until
// min_seconds have passed (at most max_runs); the median counts.
struct Repetitions {
  int warmup, min_runs, max_runs;
  double min_seconds;
};
Repetitions repetitions_for(bool host, bool quick);

struct Measurement {
  Shape shape;
  std::string error;  // empty, or why the shape has no result
  bool unsupported = false;  // the backend refused the shape (not a failure)
  double fwd_ms = -1, bwd_ms = -1;  // < 0: not measured
  std::vector<ErrorCheck> fwd_checks, bwd_checks;
  bool failed() const;  // an error, or a check out of tolerance
};

class Runner {
 public:
  Runner(fa2_handle_t handle, test::DeviceMemory &memory, fa2_dtype_t dtype, Repetitions reps,
         bool backward, bool check, size_t max_elements, size_t max_rows);
  ~Runner();
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;

  Measurement run(const Shape &shape);

 private:
  struct Buffer {
    void *device = nullptr;
    std::vector<uint8_t> host;  // inputs: the random values; outputs: copied back
  };
  void *workspace(size_t bytes);
  template <class Call>
  double median_ms(Call call);
  void check(const Shape &shape, const fa2_options_t &options, Measurement &m);

  fa2_handle_t handle_;
  test::DeviceMemory &memory_;
  fa2_dtype_t dtype_;
  Repetitions reps_;
  bool backward_, check_;
  Buffer q_, k_, v_, dout_, out_, dq_, dk_, dv_, lse_;
  void *workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace fa2::bench
