#include "report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fa2::bench {
namespace {

// TFLOP/s of `flops` in `ms`; < 0 when not measured.
double tflops(double flops, double ms) { return ms > 0 ? flops / ms / 1e9 : -1; }

double fwdbwd_tflops(const Measurement &m) {
  return m.fwd_ms > 0 && m.bwd_ms > 0 ? tflops(m.shape.fwd_flops() + m.shape.bwd_flops(), m.fwd_ms + m.bwd_ms)
                                      : -1;
}

std::string status_of(const Measurement &m) {
  if (m.unsupported) return "unsupported";
  if (!m.error.empty()) return "ERROR";
  if (m.failed()) return "FAIL";
  return m.fwd_checks.empty() ? "unchecked" : "ok";
}

std::string number(double value, const char *format) {
  if (value < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string worst_error(const std::vector<ErrorCheck> &checks) {
  if (checks.empty()) return "-";
  const ErrorCheck &c = worst(checks);
  return c.what + " " + number(c.max_error, "%.1e");
}

std::string json_string(const std::string &s) {
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') quoted += '\\';
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    quoted += c;
  }
  return quoted + "\"";
}

// A number, or null when not measured (every value here is >= 0) or not finite.
std::string json_number(double value) {
  if (value < 0 || !std::isfinite(value)) return "null";
  std::ostringstream s;
  s.precision(9);
  s << value;
  return s.str();
}

void open_or_throw(std::ofstream &file, const std::string &path) {
  file.open(path);
  if (!file) throw std::runtime_error("cannot write " + path);
}

// The table's rate column: TFLOP/s on a GPU, GFLOP/s on the host.
const char *rate_unit(const RunInfo &info) { return info.host ? "GFLOP/s" : "TFLOP/s"; }
double rate(const RunInfo &info, double tflops_value) {
  return tflops_value < 0 ? tflops_value : info.host ? 1e3 * tflops_value : tflops_value;
}

}  // namespace

void print_header(const RunInfo &info) {
  std::printf("fa2_bench: backend %s (device %d), dtype %s; FLOPs fwd 4*b*h*s^2*d (/2 causal), bwd 2.5x fwd;\n"
              "errors: max |fa2 - float64| over sampled rows, the tensor nearest its tolerance\n",
              info.backend.c_str(), info.device, info.dtype.c_str());
  std::printf("%-9s %-7s %-5s %4s %6s %6s %5s %5s | %9s %8s | %9s %8s | %8s | %-13s %-13s %s\n", "",
              "backend", "dtype", "d", "causal", "seqlen", "batch", "heads", "fwd ms", rate_unit(info), "bwd ms", rate_unit(info),
              info.host ? "f+b GF/s" : "f+b TF/s", "fwd max err", "bwd max err", "check");
  std::fflush(stdout);
}

void print_row(const RunInfo &info, const Measurement &m, size_t index, size_t count) {
  const Shape &s = m.shape;
  const std::string progress = "[" + std::to_string(index + 1) + "/" + std::to_string(count) + "]";
  std::printf("%-9s %-7s %-5s %4d %6d %6d %5d %5d | %9s %8s | %9s %8s | %8s | %-13s %-13s %s\n",
              progress.c_str(), info.backend.c_str(), info.dtype.c_str(), s.head_dim, int(s.causal), s.seqlen, s.batch,
              s.heads, number(m.fwd_ms, "%.3f").c_str(),
              number(rate(info, tflops(s.fwd_flops(), m.fwd_ms)), "%.1f").c_str(), number(m.bwd_ms, "%.3f").c_str(),
              number(rate(info, tflops(s.bwd_flops(), m.bwd_ms)), "%.1f").c_str(),
              number(rate(info, fwdbwd_tflops(m)), "%.1f").c_str(), worst_error(m.fwd_checks).c_str(),
              worst_error(m.bwd_checks).c_str(), status_of(m).c_str());
  if (!m.error.empty()) std::printf("          %s\n", m.error.c_str());
  for (const auto *checks : {&m.fwd_checks, &m.bwd_checks})
    for (const ErrorCheck &c : *checks)
      if (!c.ok())
        std::printf("          %s: max error %.3e > tolerance %.3e (naive low precision: %.3e)\n",
                    c.what.c_str(), c.max_error, c.tolerance, c.naive_error);
  std::fflush(stdout);
}

void write_json(const std::string &path, const RunInfo &info, const std::vector<Measurement> &rows) {
  std::ofstream f;
  open_or_throw(f, path);
  f << "{\n \"tool\": \"fa2_bench\",\n \"backend\": " << json_string(info.backend)
    << ",\n \"device\": " << info.device << ",\n \"dtype\": " << json_string(info.dtype);
  f << ",\n \"baselines\": {";
  for (size_t i = 0; i < info.baselines.size(); ++i)
    f << (i ? ", " : "") << json_string(info.baselines[i].first) << ": " << json_number(info.baselines[i].second);
  f << "},\n \"rows\": [";
  for (size_t r = 0; r < rows.size(); ++r) {
    const Measurement &m = rows[r];
    const Shape &s = m.shape;
    f << (r ? ",\n" : "\n") << "  {\"backend\": \"fa2\", \"fa2_backend\": " << json_string(info.backend)
      << ", \"dtype\": " << json_string(info.dtype) << ", \"d\": " << s.head_dim
      << ", \"causal\": " << (s.causal ? "true" : "false") << ", \"s\": " << s.seqlen
      << ", \"b\": " << s.batch << ", \"h\": " << s.heads << ", \"status\": " << json_string(status_of(m))
      << ", \"fwd_ms\": " << json_number(m.fwd_ms) << ", \"bwd_ms\": " << json_number(m.bwd_ms)
      << ", \"fwd_tflops\": " << json_number(tflops(s.fwd_flops(), m.fwd_ms))
      << ", \"bwd_tflops\": " << json_number(tflops(s.bwd_flops(), m.bwd_ms))
      << ", \"fwdbwd_tflops\": " << json_number(fwdbwd_tflops(m));
    if (!m.error.empty()) f << ", \"error\": " << json_string(m.error);
    f << ", \"checks\": [";
    bool first = true;
    for (const auto *checks : {&m.fwd_checks, &m.bwd_checks})
      for (const ErrorCheck &c : *checks) {
        f << (first ? "" : ", ") << "{\"what\": " << json_string(c.what)
          << ", \"max_error\": " << json_number(c.max_error)
          << ", \"naive_error\": " << json_number(c.naive_error)
          << ", \"tolerance\": " << json_number(c.tolerance) << ", \"ok\": " << (c.ok() ? "true" : "false")
          << "}";
        first = false;
      }
    f << "]}";
  }
  f << "\n ]\n}\n";
}

void write_csv(const std::string &path, const RunInfo &info, const std::vector<Measurement> &rows) {
  std::ofstream f;
  open_or_throw(f, path);
  f << "backend,dtype,d,causal,seqlen,batch,heads,fwd_ms,fwd_tflops,bwd_ms,bwd_tflops,fwdbwd_tflops,"
       "fwd_max_error,bwd_max_error,status\n";
  auto field = [](double value) { return value < 0 ? std::string() : json_number(value); };
  auto error_of = [&](const std::vector<ErrorCheck> &checks) {
    return checks.empty() ? std::string() : field(worst(checks).max_error);
  };
  for (const Measurement &m : rows) {
    const Shape &s = m.shape;
    f << info.backend << ',' << info.dtype << ',' << s.head_dim << ',' << int(s.causal) << ','
      << s.seqlen << ',' << s.batch << ',' << s.heads << ',' << field(m.fwd_ms) << ','
      << field(tflops(s.fwd_flops(), m.fwd_ms)) << ',' << field(m.bwd_ms) << ','
      << field(tflops(s.bwd_flops(), m.bwd_ms)) << ',' << field(fwdbwd_tflops(m)) << ','
      << error_of(m.fwd_checks) << ',' << error_of(m.bwd_checks) << ',' << status_of(m) << '\n';
  }
}

}  // namespace fa2::bench
