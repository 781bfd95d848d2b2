// Bad input, on every backend: each mutation of one valid call must return
// exactly its status, write nothing (every output byte still poison) and
// leave a reason in fa2_last_error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "buffers.h"
#include "run_case.h"
#include "session.h"

namespace fa2::test {
namespace {

// The arguments of one fa2_fwd / fa2_bwd call, each one replaceable.
struct Call {
  bool backward = false;
  fa2_handle_t handle = nullptr;
  fa2_shape_t shape{};
  const fa2_shape_t *shape_ptr = &shape;
  fa2_tensor_t tensor[int(Operand::count)]{};
  const fa2_tensor_t *ptr[int(Operand::count)]{};
  float *lse = nullptr;
  fa2_options_t options = FA2_OPTIONS_INIT;
  const fa2_options_t *options_ptr = &options;
  void *workspace = nullptr;
  size_t workspace_bytes = 0;

  fa2_tensor_t &operator[](Operand op) { return tensor[int(op)]; }
  const fa2_tensor_t *at(Operand op) const { return ptr[int(op)]; }
  fa2_status_t invoke() const {
    if (!backward)
      return fa2_fwd(handle, shape_ptr, at(Operand::q), at(Operand::k), at(Operand::v),
                     at(Operand::out), lse, options_ptr, workspace, workspace_bytes, nullptr);
    return fa2_bwd(handle, shape_ptr, at(Operand::dout), at(Operand::q), at(Operand::k),
                   at(Operand::v), at(Operand::out), lse, at(Operand::dq), at(Operand::dk),
                   at(Operand::dv), options_ptr, workspace, workspace_bytes, nullptr);
  }
};

// Returns false when it does not apply to this backend (the test then says so).
using Mutate = bool (*)(Call &);

struct Mutation {
  const char *name;
  bool backward;
  fa2_status_t expected;
  Mutate mutate;
};

constexpr int64_t kHeadDim = 64;

bool any_workspace(Call &c) { return c.workspace_bytes > 0; }

const Mutation kMutations[] = {
    {"null_handle", false, FA2_ERROR_NULL_POINTER, [](Call &c) { c.handle = nullptr; return true; }},
    {"null_shape", false, FA2_ERROR_NULL_POINTER, [](Call &c) { c.shape_ptr = nullptr; return true; }},
    {"null_q_tensor", false, FA2_ERROR_NULL_POINTER, [](Call &c) { c.ptr[int(Operand::q)] = nullptr; return true; }},
    {"null_k_data", false, FA2_ERROR_NULL_POINTER, [](Call &c) { c[Operand::k].data = nullptr; return true; }},
    {"null_out_tensor", false, FA2_ERROR_NULL_POINTER, [](Call &c) { c.ptr[int(Operand::out)] = nullptr; return true; }},
    {"null_lse", false, FA2_ERROR_NULL_POINTER, [](Call &c) { c.lse = nullptr; return true; }},
    {"heads_not_a_multiple", false, FA2_ERROR_SHAPE_MISMATCH, [](Call &c) { c.shape.heads_kv = 4; return true; }},
    {"negative_batch", false, FA2_ERROR_SHAPE_MISMATCH, [](Call &c) { c.shape.batch = -1; return true; }},
    {"negative_input_stride", false, FA2_ERROR_BAD_STRIDE, [](Call &c) { c[Operand::q].stride_head = -kHeadDim; return true; }},
    {"negative_output_stride", false, FA2_ERROR_BAD_STRIDE, [](Call &c) { c[Operand::out].stride_seq *= -1; return true; }},
    {"zero_output_stride", false, FA2_ERROR_BAD_STRIDE, [](Call &c) { c[Operand::out].stride_head = 0; return true; }},
    {"overlapping_output_rows", false, FA2_ERROR_BAD_STRIDE, [](Call &c) { c[Operand::out].stride_seq = kHeadDim; return true; }},
    {"head_dim_zero", false, FA2_ERROR_UNSUPPORTED_HEAD_DIM, [](Call &c) { c.shape.head_dim = 0; return true; }},
    {"head_dim_4096", false, FA2_ERROR_UNSUPPORTED_HEAD_DIM, [](Call &c) { c.shape.head_dim = 4096; return true; }},
    {"unknown_dtype", false, FA2_ERROR_UNSUPPORTED_DTYPE, [](Call &c) {
       for (fa2_tensor_t &t : c.tensor) t.dtype = fa2_dtype_t(7);
       return true;
     }},
    {"mixed_dtypes", false, FA2_ERROR_UNSUPPORTED_DTYPE, [](Call &c) { c[Operand::v].dtype = FA2_DTYPE_BF16; return true; }},
    {"misaligned_q", false, FA2_ERROR_MISALIGNED, [](Call &c) {
       c[Operand::q].data = static_cast<char *>(c[Operand::q].data) + 1;
       return true;
     }},
    {"misaligned_lse", false, FA2_ERROR_MISALIGNED, [](Call &c) {
       c.lse = reinterpret_cast<float *>(reinterpret_cast<char *>(c.lse) + 2);
       return true;
     }},
    {"stride_byte_count_overflow", false, FA2_ERROR_SIZE_OVERFLOW, [](Call &c) {
       c[Operand::k].stride_batch = std::numeric_limits<int64_t>::max() / 2;
       return true;
     }},
    {"seqlen_beyond_2_30", false, FA2_ERROR_SIZE_OVERFLOW, [](Call &c) { c.shape.seqlen_q = int64_t{1} << 31; return true; }},
    {"output_byte_count_overflow", false, FA2_ERROR_SIZE_OVERFLOW, [](Call &c) {
       c.shape.batch = INT32_MAX, c.shape.heads_q = INT32_MAX, c.shape.heads_kv = 1;
       c.shape.seqlen_q = int64_t{1} << 29;
       return true;
     }},
    {"window_left_below_minus_one", false, FA2_ERROR_INVALID_ARGUMENT, [](Call &c) { c.options.window_left = -2; return true; }},
    {"window_right_below_minus_one", false, FA2_ERROR_INVALID_ARGUMENT, [](Call &c) { c.options.window_right = -7; return true; }},
    {"causal_with_window_right", false, FA2_ERROR_INVALID_ARGUMENT, [](Call &c) {
       c.options.causal = 1, c.options.window_right = 3;
       return true;
     }},
    {"nan_scale", false, FA2_ERROR_INVALID_ARGUMENT, [](Call &c) { c.options.softmax_scale = std::nanf(""); return true; }},
    {"negative_scale", false, FA2_ERROR_INVALID_ARGUMENT, [](Call &c) { c.options.softmax_scale = -0.125f; return true; }},
    {"infinite_scale", false, FA2_ERROR_INVALID_ARGUMENT, [](Call &c) { c.options.softmax_scale = INFINITY; return true; }},
    {"options_not_initialised", false, FA2_ERROR_INVALID_ARGUMENT, [](Call &c) { c.options.struct_size = 0; return true; }},
    {"varlen_without_cu_seqlens_k", false, FA2_ERROR_NULL_POINTER, [](Call &c) {
       c.options.cu_seqlens_q = static_cast<const int32_t *>(c[Operand::q].data);
       return true;
     }},
    {"workspace_too_small", false, FA2_ERROR_WORKSPACE_TOO_SMALL, [](Call &c) { return any_workspace(c) && (--c.workspace_bytes, true); }},
    {"workspace_null", false, FA2_ERROR_NULL_POINTER, [](Call &c) { return any_workspace(c) && (c.workspace = nullptr, true); }},
    {"null_dout", true, FA2_ERROR_NULL_POINTER, [](Call &c) { c.ptr[int(Operand::dout)] = nullptr; return true; }},
    {"null_dq_data", true, FA2_ERROR_NULL_POINTER, [](Call &c) { c[Operand::dq].data = nullptr; return true; }},
    {"null_lse", true, FA2_ERROR_NULL_POINTER, [](Call &c) { c.lse = nullptr; return true; }},
    {"overlapping_dk_rows", true, FA2_ERROR_BAD_STRIDE, [](Call &c) { c[Operand::dk].stride_seq = kHeadDim; return true; }},
    {"negative_dv_stride", true, FA2_ERROR_BAD_STRIDE, [](Call &c) { c[Operand::dv].stride_head = -kHeadDim; return true; }},
    {"mixed_dout_dtype", true, FA2_ERROR_UNSUPPORTED_DTYPE, [](Call &c) { c[Operand::dout].dtype = FA2_DTYPE_F32; return true; }},
    {"misaligned_lse", true, FA2_ERROR_MISALIGNED, [](Call &c) {
       c.lse = reinterpret_cast<float *>(reinterpret_cast<char *>(c.lse) + 2);
       return true;
     }},
    {"heads_not_a_multiple", true, FA2_ERROR_SHAPE_MISMATCH, [](Call &c) { c.shape.heads_kv = 4; return true; }},
    {"workspace_too_small", true, FA2_ERROR_WORKSPACE_TOO_SMALL, [](Call &c) { return any_workspace(c) && (--c.workspace_bytes, true); }},
    {"workspace_null", true, FA2_ERROR_NULL_POINTER, [](Call &c) { return any_workspace(c) && (c.workspace = nullptr, true); }},
};

struct BadInput {
  fa2_backend_t backend;
  const Mutation *mutation;
};

// A small valid problem (f16, d 64, GQA, causal), its forward already run
// so that the backward's out and lse are real.
Case valid_case(fa2_backend_t backend) {
  Case c;
  c.backend = backend;
  c.dtype = FA2_DTYPE_F16;
  c.head_dim = int(kHeadDim);
  c.batch = 2, c.seqlen_q = 17, c.seqlen_k = 33, c.heads_q = 6, c.heads_kv = 2;
  c.causal = true;
  return c;
}

class ValidCall {
 public:
  ValidCall(const Session &s, const Case &c, bool backward) : ops_(s.memory(), c) {
    prepare_inputs(ops_, c);
    call.backward = backward;
    call.handle = s.handle();
    call.shape = shape_of(c);
    call.options = options_of(c, ops_);
    for (int i = 0; i < int(Operand::count); ++i) {
      call.tensor[i] = ops_.tensor(Operand(i));
      call.ptr[i] = &call.tensor[i];
    }
    call.lse = ops_.lse_device();
    const auto query = backward ? fa2_bwd_workspace_size : fa2_fwd_workspace_size;
    EXPECT_EQ(query(s.handle(), &call.shape, c.dtype, &call.options, &call.workspace_bytes), FA2_SUCCESS)
        << fa2_last_error(s.handle());
    // One spare byte, so that "too small" is a real shortfall below a valid size.
    workspace_ = std::make_unique<DeviceBuffer>(s.memory(), call.workspace_bytes + 1);
    call.workspace = call.workspace_bytes > 0 ? workspace_->get() : nullptr;
    if (backward) {
      Call forward = call;
      forward.backward = false;
      for (int i = 0; i < int(Operand::count); ++i) forward.ptr[i] = &forward.tensor[i];
      forward.shape_ptr = &forward.shape, forward.options_ptr = &forward.options;
      size_t bytes = 0;
      fa2_fwd_workspace_size(s.handle(), &forward.shape, c.dtype, &forward.options, &bytes);
      DeviceBuffer fwd_workspace(s.memory(), bytes + 1);
      forward.workspace = bytes > 0 ? fwd_workspace.get() : nullptr, forward.workspace_bytes = bytes;
      EXPECT_EQ(forward.invoke(), FA2_SUCCESS) << fa2_last_error(s.handle());
      s.memory().synchronize();
    }
  }
  std::vector<std::vector<uint8_t>> output_images() const { return ops_.output_images(); }
  Call call;  // points into ops_; copy it to mutate it

 private:
  Operands ops_;
  std::unique_ptr<DeviceBuffer> workspace_;
};

using RefusesBadInput = OnBackend<BadInput>;

TEST_P(RefusesBadInput, WithItsStatusAndWritesNothing) {
  const Mutation &m = *GetParam().mutation;
  ValidCall valid(session_, valid_case(GetParam().backend), m.backward);
  Call call = valid.call;
  for (int i = 0; i < int(Operand::count); ++i)
    if (call.ptr[i] != nullptr) call.ptr[i] = &call.tensor[i];
  call.shape_ptr = &call.shape, call.options_ptr = &call.options;
  if (!m.mutate(call)) GTEST_SKIP() << "this backend needs no workspace for the call: nothing to get wrong";
  const auto before = valid.output_images();
  const fa2_status_t status = call.invoke();
  session_.memory().synchronize();
  EXPECT_EQ(status, m.expected) << "got \"" << fa2_status_string(status) << "\", expected \""
                                << fa2_status_string(m.expected) << "\"; "
                                << fa2_last_error(call.handle);
  EXPECT_TRUE(valid.output_images() == before) << "a refused call wrote to an output";
  EXPECT_STRNE(fa2_last_error(call.handle), "") << "no reason given";
}

std::vector<BadInput> bad_inputs() {
  std::vector<BadInput> all;
  for (fa2_backend_t backend : built_backends())
    for (const Mutation &m : kMutations) all.push_back({backend, &m});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Api, RefusesBadInput, ::testing::ValuesIn(bad_inputs()),
                         [](const ::testing::TestParamInfo<BadInput> &info) {
                           return std::string(fa2_backend_name(info.param.backend)) +
                                  (info.param.mutation->backward ? "_bwd_" : "_fwd_") +
                                  info.param.mutation->name;
                         });

// The unmutated calls succeed, so each refusal above is the mutation's doing.
struct OnlyBackend {
  fa2_backend_t backend;
};
using ValidCallSucceeds = OnBackend<OnlyBackend>;

TEST_P(ValidCallSucceeds, ForwardAndBackward) {
  for (bool backward : {false, true}) {
    ValidCall valid(session_, valid_case(GetParam().backend), backward);
    EXPECT_EQ(valid.call.invoke(), FA2_SUCCESS) << fa2_last_error(session_.handle());
  }
}

std::vector<OnlyBackend> backends() {
  std::vector<OnlyBackend> all;
  for (fa2_backend_t b : built_backends()) all.push_back({b});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Api, ValidCallSucceeds, ::testing::ValuesIn(backends()),
                         [](const ::testing::TestParamInfo<OnlyBackend> &info) {
                           return std::string(fa2_backend_name(info.param.backend));
                         });

}  // namespace
}  // namespace fa2::test
