#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "dtype.h"

namespace fa2::bench {
namespace {

const char *kUsage =
    "usage: fa2_bench [options]\n"
    "Times fa2 forward and backward on the FlashAttention-2 paper's grid (16k tokens,\n"
    "hidden 2048, head dims 64/128/256, causal off/on, seqlen 512..16k; the small grid has\n"
    "2k tokens, head dims 64/128, seqlen 256..2048) and checks sampled rows against float64.\n"
    "  --backend cpu|cuda|hip|kokkos   default: the best one present (cuda > hip > kokkos > cpu);\n"
    "                                  the device is the test support's (CUDA_VISIBLE_DEVICES picks)\n"
    "  --dtype bf16|f16|f32            default: bf16 for cuda and hip, f32 for cpu and kokkos\n"
    "  --grid paper|small              default: the paper's for cuda and hip, the small one for\n"
    "                                  cpu and kokkos (Debian's Kokkos runs on the host)\n"
    "  --quick                         a few shapes, fewer repetitions\n"
    "  --seqlens A,B,..  --head-dims A,B,..  --causal 0,1   restrict the grid\n"
    "  --tokens N  --hidden N          batch = tokens / seqlen, heads = hidden / head_dim\n"
    "  --fwd-only                      skip the backward\n"
    "  --no-check                      skip the float64 check\n"
    "  --cpu-baselines                 also measure OpenBLAS sgemm and a naive attention\n"
    "                                  (CPU backend) and compare fa2's forward with them\n"
    "  --json FILE  --csv FILE         write the results\n"
    "Exit status: 0 when every call succeeded and every check passed.\n";

int parse_int(const std::string &flag, const std::string &text) {
  size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != text.size() || value < 0)
    throw std::invalid_argument(flag + ": '" + text + "' is not a non-negative integer");
  return value;
}

std::vector<int> parse_list(const std::string &flag, const std::string &text) {
  std::vector<int> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) values.push_back(parse_int(flag, item));
  if (values.empty()) throw std::invalid_argument(flag + " needs a comma-separated list");
  return values;
}

}  // namespace

bool parse_backend(const std::string &name, fa2_backend_t &backend) {
  for (int b = 0; b < FA2_NUM_BACKENDS; ++b)
    if (name == fa2_backend_name(fa2_backend_t(b))) return backend = fa2_backend_t(b), true;
  return false;
}

Options parse_options(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (flag == "--backend") {
      const std::string name = value();
      fa2_backend_t backend;
      if (!parse_backend(name, backend)) throw std::invalid_argument("unknown backend '" + name + "'");
      options.backend = backend;
    } else if (flag == "--dtype") {
      const std::string name = value();
      fa2_dtype_t dtype;
      if (!parse_dtype(name, dtype)) throw std::invalid_argument("unknown dtype '" + name + "'");
      options.dtype = dtype;
    } else if (flag == "--grid") {
      const std::string name = value();
      if (name != "paper" && name != "small") throw std::invalid_argument("--grid takes paper or small");
      options.small_grid = name == "small";
    } else if (flag == "--quick") {
      options.quick = true;
    } else if (flag == "--no-check") {
      options.check = false;
    } else if (flag == "--fwd-only") {
      options.backward = false;
    } else if (flag == "--cpu-baselines") {
      options.cpu_baselines = true;
    } else if (flag == "--seqlens") {
      options.seqlens = parse_list(flag, value());
    } else if (flag == "--head-dims") {
      options.head_dims = parse_list(flag, value());
    } else if (flag == "--causal") {
      options.causal = parse_list(flag, value());
    } else if (flag == "--tokens") {
      options.tokens = parse_int(flag, value());
    } else if (flag == "--hidden") {
      options.hidden = parse_int(flag, value());
    } else if (flag == "--json") {
      options.json_path = value();
    } else if (flag == "--csv") {
      options.csv_path = value();
    } else {
      throw std::invalid_argument("unknown option '" + flag + "' (see --help)");
    }
  }
  return options;
}

}  // namespace fa2::bench
