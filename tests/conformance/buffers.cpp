#include "buffers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/numeric.h"

namespace fa2::test {
namespace {

// Poisoned elements between padded heads / rows / batches and after every
// buffer. 8 elements keep 16-byte stride alignment for every dtype.
constexpr int64_t kPad = 8;
constexpr int64_t kGuard = 64;

const char *const kOperandNames[] = {"q", "k", "v", "out", "dout", "dq", "dk", "dv"};

}  // namespace

int dtype_bytes(fa2_dtype_t dtype) { return dtype == FA2_DTYPE_F32 ? 4 : 2; }

double read_element(const std::vector<uint8_t> &bytes, fa2_dtype_t dtype, int64_t index) {
  if (dtype == FA2_DTYPE_F32) {
    float x;
    std::memcpy(&x, &bytes[size_t(index) * 4], 4);
    return x;
  }
  uint16_t h;
  std::memcpy(&h, &bytes[size_t(index) * 2], 2);
  return dtype == FA2_DTYPE_F16 ? core::f16_to_float(h) : core::bf16_to_float(h);
}

void write_element(std::vector<uint8_t> &bytes, fa2_dtype_t dtype, int64_t index, double value) {
  if (dtype == FA2_DTYPE_F32) {
    const float x = float(value);
    std::memcpy(&bytes[size_t(index) * 4], &x, 4);
    return;
  }
  const uint16_t h =
      dtype == FA2_DTYPE_F16 ? core::float_to_f16(float(value)) : core::float_to_bf16(float(value));
  std::memcpy(&bytes[size_t(index) * 2], &h, 2);
}

void poison(std::vector<uint8_t> &bytes, fa2_dtype_t dtype) {
  const int64_t n = int64_t(bytes.size()) / dtype_bytes(dtype);
  for (int64_t e = 0; e < n; ++e) write_element(bytes, dtype, e, ref::kNaN);
}

DeviceBuffer::DeviceBuffer(DeviceMemory &memory, size_t bytes)
    : memory_(memory), bytes_(bytes), ptr_(memory.alloc(bytes > 0 ? bytes : 1)) {}

DeviceBuffer::~DeviceBuffer() { memory_.release(ptr_); }

void DeviceBuffer::upload(const std::vector<uint8_t> &host) {
  memory_.to_device(ptr_, host.data(), bytes_);
  memory_.synchronize();
}

std::vector<uint8_t> DeviceBuffer::download() const {
  std::vector<uint8_t> host(bytes_);
  memory_.synchronize();
  memory_.to_host(host.data(), ptr_, bytes_);
  return host;
}

Buffer::Buffer(DeviceMemory &memory, fa2_dtype_t element_type, int64_t elements)
    : dtype(element_type),
      host(size_t(elements) * dtype_bytes(element_type)),
      device(memory, host.size()) {
  poison(host, dtype);
}

const char *operand_name(Operand op) { return kOperandNames[int(op)]; }
bool is_key_side(Operand op) {
  return op == Operand::k || op == Operand::v || op == Operand::dk || op == Operand::dv;
}
bool is_output(Operand op) {
  return op == Operand::out || op == Operand::dq || op == Operand::dk || op == Operand::dv;
}

namespace {

// Stored extent of a tensor: varlen tensors are one long sequence of tokens.
struct Extent {
  int64_t batch, seqlen, heads;
};

Extent extent_of(const Case &c, const ref::Problem &p, Operand op) {
  const bool key = is_key_side(op);
  const int64_t heads = key ? p.heads_kv : p.heads_q;
  if (c.varlen()) return {1, key ? p.total_k() : p.total_q(), heads};
  return {c.batch, key ? c.seqlen_k : c.seqlen_q, heads};
}

// Strides of a tensor alone in its buffer; returns the elements it spans.
int64_t standalone(const Extent &e, int64_t d, int64_t pad, bool head_major, Placement &pl) {
  if (head_major) {
    pl.stride_seq = d + pad;
    pl.stride_head = e.seqlen * pl.stride_seq + pad;
    pl.stride_batch = e.heads * pl.stride_head + pad;
  } else {
    pl.stride_head = d + pad;
    pl.stride_seq = e.heads * pl.stride_head + pad;
    pl.stride_batch = e.seqlen * pl.stride_seq + pad;
  }
  return e.batch * pl.stride_batch;
}

}  // namespace

Operands::Operands(DeviceMemory &memory, const Case &c)
    : case_(c),
      problem_(c.problem()),
      lse_(memory, FA2_DTYPE_F32, int64_t(problem_.lse_elements()) + kGuard) {
  const int64_t d = c.head_dim;
  const fa2_dtype_t dtype = c.dtype;
  int first = 0;
  if (c.layout == Layout::packed_qkv) {
    // One buffer, rows of [q heads | k heads | v heads]; needs seqlen_q == seqlen_k.
    const Extent e = extent_of(c, problem_, Operand::q);
    const int64_t row = (problem_.heads_q + 2 * problem_.heads_kv) * d;
    const int64_t offsets[3] = {0, problem_.heads_q * d,
                                (problem_.heads_q + problem_.heads_kv) * d};
    for (int i = 0; i < 3; ++i) placement_[i] = Placement{0, offsets[i], e.seqlen * row, row, d};
    buffers_.emplace_back(memory, dtype, e.batch * e.seqlen * row + kGuard);
    first = 3;
  }
  for (int i = first; i < int(Operand::count); ++i) {
    const Operand op = Operand(i);
    const bool head_major = c.layout == Layout::head_major ||
                            (c.layout == Layout::transposed_dout && op == Operand::dout);
    const int64_t pad = c.layout == Layout::padded ? kPad : 0;
    Placement &pl = placement_[i];
    pl.buffer = int(buffers_.size());
    const int64_t elements = standalone(extent_of(c, problem_, op), d, pad, head_major, pl);
    buffers_.emplace_back(memory, dtype, elements + kGuard);
  }
  if (c.varlen())
    for (const std::vector<int> *cu : {&problem_.cu_q, &problem_.cu_k}) {
      cu_seqlens_.push_back(std::make_unique<DeviceBuffer>(memory, cu->size() * sizeof(int32_t)));
      std::vector<uint8_t> bytes(cu->size() * sizeof(int32_t));
      std::memcpy(bytes.data(), cu->data(), bytes.size());  // int and int32_t agree here
      cu_seqlens_.back()->upload(bytes);
    }
}

void Operands::set(Operand op, const std::vector<double> &packed) {
  Buffer &buf = buffers_[placement_[int(op)].buffer];
  for_each_element(
      op, [&](size_t from, int64_t to) { write_element(buf.host, buf.dtype, to, packed[from]); });
}

std::vector<double> Operands::get(Operand op) const {
  const Buffer &buf = buffers_[placement_[int(op)].buffer];
  std::vector<double> packed(is_key_side(op) ? problem_.k_elements() : problem_.q_elements());
  for_each_element(
      op, [&](size_t to, int64_t from) { packed[to] = read_element(buf.host, buf.dtype, from); });
  return packed;
}

void Operands::upload_all() {
  for (Buffer &b : buffers_) b.device.upload(b.host);
  lse_.device.upload(lse_.host);
}

void Operands::download_outputs() {
  for (Operand op : {Operand::out, Operand::dq, Operand::dk, Operand::dv}) {
    Buffer &b = buffers_[placement_[int(op)].buffer];
    b.host = b.device.download();
  }
  lse_.host = lse_.device.download();
}

fa2_tensor_t Operands::tensor(Operand op) const {
  const Placement &pl = placement_[int(op)];
  const Buffer &b = buffers_[pl.buffer];
  void *data = static_cast<uint8_t *>(b.device.get()) + pl.offset * dtype_bytes(b.dtype);
  return fa2_tensor_t{data, b.dtype, pl.stride_batch, pl.stride_seq, pl.stride_head};
}

std::vector<double> Operands::lse() const {
  std::vector<double> values(problem_.lse_elements());
  for (size_t e = 0; e < values.size(); ++e) values[e] = read_element(lse_.host, FA2_DTYPE_F32, e);
  return values;
}

const int32_t *Operands::cu_q_device() const {
  return cu_seqlens_.empty() ? nullptr : static_cast<const int32_t *>(cu_seqlens_[0]->get());
}
const int32_t *Operands::cu_k_device() const {
  return cu_seqlens_.empty() ? nullptr : static_cast<const int32_t *>(cu_seqlens_[1]->get());
}

std::vector<std::vector<uint8_t>> Operands::output_images() const {
  std::vector<std::vector<uint8_t>> images;
  for (Operand op : {Operand::out, Operand::dq, Operand::dk, Operand::dv})
    images.push_back(buffers_[placement_[int(op)].buffer].device.download());
  images.push_back(lse_.device.download());
  return images;
}

void Operands::expect_written_exactly(bool backward) const {
  std::vector<Operand> outputs{Operand::out};
  if (backward) outputs.insert(outputs.end(), {Operand::dq, Operand::dk, Operand::dv});
  for (Operand op : outputs) {
    const Buffer &buf = buffers_[placement_[int(op)].buffer];
    std::vector<char> inside(buf.host.size() / dtype_bytes(buf.dtype), 0);
    for_each_element(op, [&](size_t, int64_t at) { inside[at] = 1; });
    int64_t unwritten = 0, clobbered = 0;
    for (size_t e = 0; e < inside.size(); ++e) {
      const double x = read_element(buf.host, buf.dtype, int64_t(e));
      unwritten += inside[e] && !std::isfinite(x);
      clobbered += !inside[e] && !std::isnan(x);
    }
    EXPECT_EQ(unwritten, 0) << operand_name(op) << ": elements inside the shape not finite";
    EXPECT_EQ(clobbered, 0) << operand_name(op) << ": padding / guard elements overwritten";
  }
  // lse: -inf is a legal value (a fully masked row); NaN means unwritten.
  const ref::Problem &p = problem_;
  int64_t unwritten = 0, clobbered = 0;
  for (int b = 0; b < p.batch(); ++b)
    for (int h = 0; h < p.heads_q; ++h)
      for (int i = 0; i < p.max_seqlen_q(); ++i) {
        const double x = read_element(lse_.host, FA2_DTYPE_F32, int64_t(p.lse_at(b, h, i)));
        if (i < p.seqlen_q(b))
          unwritten += std::isnan(x) || x == INFINITY;
        else
          clobbered += !std::isnan(x);
      }
  for (int64_t e = int64_t(p.lse_elements()); e < int64_t(p.lse_elements()) + kGuard; ++e)
    clobbered += !std::isnan(read_element(lse_.host, FA2_DTYPE_F32, e));
  EXPECT_EQ(unwritten, 0) << "lse: entries of a row not written (NaN or +inf)";
  EXPECT_EQ(clobbered, 0) << "lse: entries past a sequence's length or the guard overwritten";
}

}  // namespace fa2::test
