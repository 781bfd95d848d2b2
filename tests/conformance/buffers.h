// Operands of one call: host byte images of every buffer, their device
// copies, and where each tensor sits inside them. Everything outside a
// tensor's shape (gaps, unused lse entries) holds NaN "poison", so a kernel
// that reads padding produces NaN and one that writes it is caught.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "case.h"
#include "device_memory.h"
#include "fa2/fa2.h"

namespace fa2::test {

int dtype_bytes(fa2_dtype_t dtype);
double read_element(const std::vector<uint8_t> &bytes, fa2_dtype_t dtype, int64_t index);
void write_element(std::vector<uint8_t> &bytes, fa2_dtype_t dtype, int64_t index, double value);
// Fills with the dtype's quiet NaN.
void poison(std::vector<uint8_t> &bytes, fa2_dtype_t dtype);

// One device allocation, released on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer(DeviceMemory &memory, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  void *get() const { return ptr_; }
  void upload(const std::vector<uint8_t> &host);
  std::vector<uint8_t> download() const;

 private:
  DeviceMemory &memory_;
  size_t bytes_;
  void *ptr_;
};

// A buffer's host image and its device copy.
struct Buffer {
  fa2_dtype_t dtype;
  std::vector<uint8_t> host;
  DeviceBuffer device;
  Buffer(DeviceMemory &memory, fa2_dtype_t element_type, int64_t elements);
};

enum class Operand { q, k, v, out, dout, dq, dk, dv, count };
const char *operand_name(Operand op);
bool is_key_side(Operand op);  // k, v, dk, dv: heads_kv and the key lengths
bool is_output(Operand op);

// Where one tensor sits: a buffer and strides in elements.
struct Placement {
  int buffer = 0;
  int64_t offset = 0;
  int64_t stride_batch = 0, stride_seq = 0, stride_head = 0;
};

// The buffers and placements of a whole call (forward and backward), all
// operands in device memory, plus lse and the device copies of cu_seqlens.
class Operands {
 public:
  Operands(DeviceMemory &memory, const Case &c);
  const ref::Problem &problem() const { return problem_; }
  // Writes packed reference-layout values into the tensor (rounded to dtype).
  void set(Operand op, const std::vector<double> &packed);
  // Reads the tensor from the HOST image (call download() first for outputs).
  std::vector<double> get(Operand op) const;
  void upload_all();
  void download_outputs();
  fa2_tensor_t tensor(Operand op) const;
  float *lse_device() const { return static_cast<float *>(lse_.device.get()); }
  std::vector<double> lse() const;  // host image, [batch, heads_q, max seqlen_q]
  const int32_t *cu_q_device() const;
  const int32_t *cu_k_device() const;
  // Every element of tensor `op` (its packed index and its buffer index).
  template <class F>
  void for_each_element(Operand op, F f) const;
  // Host images of every output buffer and lse, for "nothing was written".
  std::vector<std::vector<uint8_t>> output_images() const;
  // Expects each output element inside its shape finite, every other byte of
  // the output buffers (gaps, lse past a sequence) still poison.
  void expect_written_exactly(bool backward) const;

 private:
  const Case &case_;
  ref::Problem problem_;
  std::deque<Buffer> buffers_;  // Buffers do not move
  Placement placement_[int(Operand::count)];
  Buffer lse_;
  std::vector<std::unique_ptr<DeviceBuffer>> cu_seqlens_;
};

template <class F>
void Operands::for_each_element(Operand op, F f) const {
  const ref::Problem &p = problem_;
  const bool key = is_key_side(op);
  const std::vector<int> &cu = key ? p.cu_k : p.cu_q;
  const int heads = key ? p.heads_kv : p.heads_q, d = p.head_dim;
  const Placement &pl = placement_[int(op)];
  for (int b = 0; b < p.batch(); ++b)
    for (int i = 0; i < cu[b + 1] - cu[b]; ++i)
      for (int h = 0; h < heads; ++h) {
        const int64_t row =
            case_.varlen() ? (cu[b] + i) * pl.stride_seq : b * pl.stride_batch + i * pl.stride_seq;
        const int64_t at = pl.offset + row + h * pl.stride_head;
        const size_t packed = (size_t(cu[b] + i) * heads + h) * d;
        for (int c = 0; c < d; ++c) f(packed + c, at + c);
      }
}

}  // namespace fa2::test
