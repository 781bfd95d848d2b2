// fa2_bench: the project's main job. Times fa2's forward and backward on the
// FlashAttention-2 paper's grid on the best backend present, checks every
// result against float64 on sampled rows, and exits non-zero when a call
// fails or a check is out of tolerance. See --help.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu_baselines.h"
#include "dtype.h"
#include "grid.h"
#include "options.h"
#include "report.h"
#include "runner.h"

namespace fa2::bench {
namespace {

struct HandleCloser {
  void operator()(fa2_handle_t handle) const { fa2_destroy(handle); }
};

// A backend ready to run: its handle and where its operands live.
struct Target {
  fa2_backend_t backend;
  std::unique_ptr<fa2_handle_s, HandleCloser> handle;
  std::unique_ptr<test::DeviceMemory> memory;
};

std::optional<Target> open_backend(fa2_backend_t backend, std::string &why) {
  int built = 0;
  fa2_backend_built(backend, &built);
  if (!built) return why = "not in this build", std::nullopt;
  Target target;
  target.backend = backend;
  target.memory = test::memory_for(backend);
  if (!target.memory->present()) return why = target.memory->why_absent(), std::nullopt;
  fa2_handle_t handle = nullptr;
  const fa2_status_t status = fa2_create(&handle, backend, target.memory->device());
  if (status != FA2_SUCCESS) return why = fa2_status_string(status), std::nullopt;
  target.handle.reset(handle);
  return target;
}

// The requested backend, or the first present of cuda > hip > kokkos > cpu.
Target select_backend(const Options &options) {
  std::vector<fa2_backend_t> candidates{FA2_BACKEND_CUDA, FA2_BACKEND_HIP, FA2_BACKEND_KOKKOS, FA2_BACKEND_CPU};
  if (options.backend) candidates = {*options.backend};
  std::string refusals;
  for (fa2_backend_t backend : candidates) {
    std::string why;
    if (auto target = open_backend(backend, why)) return std::move(*target);
    refusals += std::string(" ") + fa2_backend_name(backend) + ": " + why + ";";
  }
  throw std::runtime_error("no usable backend:" + refusals);
}

// Issue 2's CPU comparison, on the CPU backend whichever backend the grid runs on.
std::vector<std::pair<std::string, double>> cpu_baselines(const Target &target) {
  if (target.backend == FA2_BACKEND_CPU) return measure_cpu_baselines(target.handle.get(), *target.memory);
  std::string why;
  if (auto cpu = open_backend(FA2_BACKEND_CPU, why)) return measure_cpu_baselines(cpu->handle.get(), *cpu->memory);
  std::printf("CPU baselines skipped: cpu backend %s\n", why.c_str());
  return {};
}

int run(const Options &options) {
  Target target = select_backend(options);
  // Kokkos as Debian builds it (Serial/OpenMP) runs on the host.
  const bool host = target.backend == FA2_BACKEND_CPU || target.backend == FA2_BACKEND_KOKKOS;
  const fa2_dtype_t dtype = options.dtype.value_or(host ? FA2_DTYPE_F32 : FA2_DTYPE_BF16);
  const std::vector<Shape> grid = make_grid(options, host);
  RunInfo info{fa2_backend_name(target.backend), dtype_name(dtype), target.memory->device(), host, {}};

  if (options.cpu_baselines) info.baselines = cpu_baselines(target);

  size_t max_elements = 0, max_rows = 0;
  for (const Shape &s : grid) {
    max_rows = std::max(max_rows, size_t(s.batch) * s.heads * s.seqlen);
    max_elements = std::max(max_elements, size_t(s.batch) * s.heads * s.seqlen * s.head_dim);
  }
  print_header(info);
  Runner runner(target.handle.get(), *target.memory, dtype, repetitions_for(host, options.quick),
                options.backward, options.check, max_elements, max_rows);
  std::vector<Measurement> results;
  for (const Shape &shape : grid) {
    results.push_back(runner.run(shape));
    print_row(info, results.back(), results.size() - 1, grid.size());
  }

  if (!options.json_path.empty()) write_json(options.json_path, info, results);
  if (!options.csv_path.empty()) write_csv(options.csv_path, info, results);
  const auto failed = std::count_if(results.begin(), results.end(), [](const Measurement &m) { return m.failed(); });
  const auto unsupported = std::count_if(results.begin(), results.end(), [](const Measurement &m) { return m.unsupported; });
  std::printf("%zu shapes: %zu passed, %zu failed, %zu unsupported by the backend\n", results.size(),
              size_t(results.size() - failed - unsupported), size_t(failed), size_t(unsupported));
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace fa2::bench

int main(int argc, char **argv) {
  fa2::bench::Options options;
  try {
    options = fa2::bench::parse_options(argc, argv);
  } catch (const std::invalid_argument &e) {
    std::fprintf(stderr, "fa2_bench: %s\n", e.what());
    return 2;
  }
  try {
    return fa2::bench::run(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "fa2_bench: %s\n", e.what());
    return 2;
  }
}
