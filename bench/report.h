// What a run prints and writes: the table (one line per shape, printed as
// each shape finishes, so a long run shows its progress), JSON and CSV.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runner.h"

namespace fa2::bench {

struct RunInfo {
  std::string backend, dtype;
  int device = 0;
  bool host = false;  // the table shows GFLOP/s instead of TFLOP/s
  std::vector<std::pair<std::string, double>> baselines;  // name -> value (--cpu-baselines)
};

void print_header(const RunInfo &info);
void print_row(const RunInfo &info, const Measurement &m, size_t index, size_t count);

// Both throw std::runtime_error when the file cannot be written.
void write_json(const std::string &path, const RunInfo &info, const std::vector<Measurement> &rows);
void write_csv(const std::string &path, const RunInfo &info, const std::vector<Measurement> &rows);

}  // namespace fa2::bench
