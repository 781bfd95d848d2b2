#include "runner.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "dtype.h"

namespace fa2::bench {
namespace {

// A refused or failed fa2 call, with the library's explanation.
struct CallFailed : std::runtime_error {
  CallFailed(fa2_status_t status, const std::string &why) : std::runtime_error(why), status(status) {}
  fa2_status_t status;
};

void require(fa2_handle_t handle, fa2_status_t status) {
  if (status != FA2_SUCCESS) throw CallFailed(status, fa2_last_error(handle));
}

bool is_unsupported(fa2_status_t status) {
  return status == FA2_ERROR_UNSUPPORTED_HEAD_DIM || status == FA2_ERROR_UNSUPPORTED_DTYPE ||
         status == FA2_ERROR_UNSUPPORTED_FEATURE;
}

constexpr int kSampledRows = 8;  // per tensor: ~1 s of float64 on the largest shapes

}  // namespace

Repetitions repetitions_for(bool host, bool quick) {
  if (host) return quick ? Repetitions{1, 2, 2, 0.0} : Repetitions{1, 3, 5, 0.5};
  return quick ? Repetitions{3, 5, 20, 0.1} : Repetitions{5, 10, 100, 0.5};
}

bool Measurement::failed() const {
  if (unsupported) return false;
  if (!error.empty()) return true;
  for (const auto *checks : {&fwd_checks, &bwd_checks})
    for (const ErrorCheck &c : *checks)
      if (!c.ok()) return true;
  return false;
}

Runner::Runner(fa2_handle_t handle, test::DeviceMemory &memory, fa2_dtype_t dtype,
               Repetitions reps, bool backward, bool check, size_t max_elements, size_t max_rows)
    : handle_(handle), memory_(memory), dtype_(dtype), reps_(reps), backward_(backward),
      check_(check) {
  const size_t bytes = max_elements * dtype_bytes(dtype);
  uint64_t seed = 2024;
  for (Buffer *input : {&q_, &k_, &v_, &dout_}) {
    input->host = random_normal(dtype, max_elements, seed++);
    input->device = memory_.alloc(bytes);
    memory_.to_device(input->device, input->host.data(), bytes);
  }
  for (Buffer *output : {&out_, &dq_, &dk_, &dv_}) {
    output->device = memory_.alloc(bytes);
    output->host.resize(bytes);
  }
  lse_.device = memory_.alloc(max_rows * sizeof(float));
  lse_.host.resize(max_rows * sizeof(float));
  memory_.synchronize();
}

Runner::~Runner() {
  for (Buffer *b : {&q_, &k_, &v_, &dout_, &out_, &dq_, &dk_, &dv_, &lse_}) memory_.release(b->device);
  if (workspace_) memory_.release(workspace_);
}

void *Runner::workspace(size_t bytes) {
  if (bytes > workspace_bytes_) {
    if (workspace_) memory_.release(workspace_);
    workspace_ = nullptr, workspace_bytes_ = 0;  // consistent should alloc throw
    workspace_ = memory_.alloc(bytes);
    workspace_bytes_ = bytes;
  }
  return workspace_;
}

template <class Call>
double Runner::median_ms(Call call) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < reps_.warmup; ++i) require(handle_, call());
  memory_.synchronize();
  std::vector<double> ms;
  const auto begin = Clock::now();
  auto seconds_so_far = [&] { return std::chrono::duration<double>(Clock::now() - begin).count(); };
  while (int(ms.size()) < reps_.min_runs ||
         (int(ms.size()) < reps_.max_runs && seconds_so_far() < reps_.min_seconds)) {
    memory_.synchronize();
    const auto start = Clock::now();
    const fa2_status_t status = call();
    memory_.synchronize();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    require(handle_, status);
  }
  std::sort(ms.begin(), ms.end());
  return ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
}

Measurement Runner::run(const Shape &shape) {
  Measurement m;
  m.shape = shape;
  const fa2_shape_t dims{shape.batch, shape.seqlen, shape.seqlen, shape.heads, shape.heads,
                         shape.head_dim};
  fa2_options_t options = FA2_OPTIONS_INIT;
  options.causal = shape.causal;
  // Contiguous [batch, seqlen, heads, head_dim].
  const int64_t d = shape.head_dim, hd = shape.heads * d, shd = shape.seqlen * hd;
  auto tensor = [&](Buffer &b) { return fa2_tensor_t{b.device, dtype_, shd, hd, d}; };
  const fa2_tensor_t q = tensor(q_), k = tensor(k_), v = tensor(v_), out = tensor(out_),
                     dout = tensor(dout_), dq = tensor(dq_), dk = tensor(dk_), dv = tensor(dv_);
  float *lse = static_cast<float *>(lse_.device);
  try {
    size_t bytes = 0;
    require(handle_, fa2_fwd_workspace_size(handle_, &dims, dtype_, &options, &bytes));
    void *fwd_ws = workspace(bytes);
    m.fwd_ms = median_ms([&] {
      return fa2_fwd(handle_, &dims, &q, &k, &v, &out, lse, &options, fwd_ws, bytes, memory_.stream());
    });
    if (backward_) {
      require(handle_, fa2_bwd_workspace_size(handle_, &dims, dtype_, &options, &bytes));
      void *bwd_ws = workspace(bytes);
      m.bwd_ms = median_ms([&] {
        return fa2_bwd(handle_, &dims, &dout, &q, &k, &v, &out, lse, &dq, &dk, &dv, &options,
                       bwd_ws, bytes, memory_.stream());
      });
    }
    if (check_) check(shape, options, m);
  } catch (const CallFailed &e) {
    m.error = e.what();
    m.unsupported = is_unsupported(e.status);
  } catch (const std::exception &e) {
    m.error = e.what();
  }
  return m;
}

void Runner::check(const Shape &shape, const fa2_options_t &options, Measurement &m) {
  const size_t bytes = size_t(shape.batch) * shape.seqlen * shape.heads * shape.head_dim *
                       dtype_bytes(dtype_);
  const size_t rows = size_t(shape.batch) * shape.heads * shape.seqlen;
  memory_.synchronize();
  memory_.to_host(out_.host.data(), out_.device, bytes);
  memory_.to_host(lse_.host.data(), lse_.device, rows * sizeof(float));
  if (backward_)
    for (Buffer *b : {&dq_, &dk_, &dv_}) memory_.to_host(b->host.data(), b->device, bytes);
  memory_.synchronize();
  const int64_t d = shape.head_dim, hd = shape.heads * d, shd = shape.seqlen * hd;
  auto host = [&](Buffer &b) { return fa2_tensor_t{b.host.data(), dtype_, shd, hd, d}; };
  const HostProblem problem{
      fa2_shape_t{shape.batch, shape.seqlen, shape.seqlen, shape.heads, shape.heads, d},
      options, host(q_), host(k_), host(v_), host(out_), host(dout_), host(dq_), host(dk_),
      host(dv_), reinterpret_cast<const float *>(lse_.host.data())};
  const unsigned seed = unsigned(shape.seqlen * 31 + shape.head_dim * 7 + shape.causal);
  m.fwd_checks = check_forward(problem, kSampledRows, seed);
  if (backward_) m.bwd_checks = check_backward(problem, kSampledRows, seed);
}

}  // namespace fa2::bench
