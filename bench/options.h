// Command line of fa2_bench.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fa2/fa2.h"

namespace fa2::bench {

struct Options {
  std::optional<fa2_backend_t> backend;  // unset: the best one present
  std::optional<fa2_dtype_t> dtype;      // unset: bf16 on a GPU, f32 on the host
  std::optional<bool> small_grid;        // unset: small for cpu and kokkos, the paper's for cuda and hip
  bool quick = false;
  bool check = true;      // compare sampled rows with the float64 reference
  bool backward = true;   // time (and check) the backward as well
  bool cpu_baselines = false;
  // Grid overrides; empty / 0 means the backend's default grid.
  std::vector<int> seqlens, head_dims, causal;
  int tokens = 0;  // batch * seqlen
  int hidden = 0;  // heads * head_dim
  std::string json_path, csv_path;
};

// Throws std::invalid_argument with a message for the user; prints the
// usage and exits 0 on --help.
Options parse_options(int argc, char **argv);

bool parse_backend(const std::string &name, fa2_backend_t &backend);

}  // namespace fa2::bench
