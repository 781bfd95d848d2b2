// Bad input, on every backend: each mutation of one valid call must return
// exactly its status, write nothing (every output byte still poison) and
// leave a reason in fa2_last_error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

using Mutate = void (*)(Call &);

struct Mutation {
  const char *name;
  bool backward;
  fa2_status_t expected;
  Mutate mutate;
  bool needs_workspace = false;  // only meaningful when the call needs a workspace
};

constexpr int64_t kHeadDim = 64;
constexpr fa2_status_t kNull = FA2_ERROR_NULL_POINTER, kShape = FA2_ERROR_SHAPE_MISMATCH,
                       kStride = FA2_ERROR_BAD_STRIDE, kDim = FA2_ERROR_UNSUPPORTED_HEAD_DIM,
                       kDtype = FA2_ERROR_UNSUPPORTED_DTYPE, kAlign = FA2_ERROR_MISALIGNED,
                       kSize = FA2_ERROR_SIZE_OVERFLOW, kInvalid = FA2_ERROR_INVALID_ARGUMENT,
                       kWorkspace = FA2_ERROR_WORKSPACE_TOO_SMALL;

void misalign_lse(Call &c) { c.lse = reinterpret_cast<float *>(reinterpret_cast<char *>(c.lse) + 2); }
void shrink_workspace(Call &c) { --c.workspace_bytes; }
void drop_workspace(Call &c) { c.workspace = nullptr; }
// One byte in: the buffer has a spare byte, so only the alignment is wrong.
void misalign_workspace(Call &c) { c.workspace = static_cast<char *>(c.workspace) + 1; }

// clang-format off
const Mutation kMutations[] = {
    {"null_handle", false, kNull, [](Call &c) { c.handle = nullptr; }},
    {"null_shape", false, kNull, [](Call &c) { c.shape_ptr = nullptr; }},
    {"null_q_tensor", false, kNull, [](Call &c) { c.ptr[int(Operand::q)] = nullptr; }},
    {"null_k_data", false, kNull, [](Call &c) { c[Operand::k].data = nullptr; }},
    {"null_out_tensor", false, kNull, [](Call &c) { c.ptr[int(Operand::out)] = nullptr; }},
    {"null_lse", false, kNull, [](Call &c) { c.lse = nullptr; }},
    {"heads_not_a_multiple", false, kShape, [](Call &c) { c.shape.heads_kv = 4; }},
    {"negative_batch", false, kShape, [](Call &c) { c.shape.batch = -1; }},
    {"negative_input_stride", false, kStride, [](Call &c) { c[Operand::q].stride_head = -kHeadDim; }},
    {"negative_output_stride", false, kStride, [](Call &c) { c[Operand::out].stride_seq *= -1; }},
    {"zero_output_stride", false, kStride, [](Call &c) { c[Operand::out].stride_head = 0; }},
    {"overlapping_output_rows", false, kStride, [](Call &c) { c[Operand::out].stride_seq = kHeadDim; }},
    {"head_dim_zero", false, kDim, [](Call &c) { c.shape.head_dim = 0; }},
    {"head_dim_4096", false, kDim, [](Call &c) { c.shape.head_dim = 4096; }},
    {"unknown_dtype", false, kDtype, [](Call &c) { for (fa2_tensor_t &t : c.tensor) t.dtype = fa2_dtype_t(7); }},
    {"mixed_dtypes", false, kDtype, [](Call &c) { c[Operand::v].dtype = FA2_DTYPE_BF16; }},
    {"misaligned_q", false, kAlign, [](Call &c) { c[Operand::q].data = static_cast<char *>(c[Operand::q].data) + 1; }},
    {"misaligned_lse", false, kAlign, misalign_lse},
    {"stride_byte_count_overflow", false, kSize, [](Call &c) { c[Operand::k].stride_batch = INT64_MAX / 2; }},
    {"seqlen_beyond_2_30", false, kSize, [](Call &c) { c.shape.seqlen_q = int64_t{1} << 31; }},
    {"output_byte_count_overflow", false, kSize, [](Call &c) {
       c.shape = fa2_shape_t{INT32_MAX, int64_t{1} << 29, 1, INT32_MAX, 1, kHeadDim}; }},
    {"window_left_below_minus_one", false, kInvalid, [](Call &c) { c.options.window_left = -2; }},
    {"window_right_below_minus_one", false, kInvalid, [](Call &c) { c.options.window_right = -7; }},
    {"causal_with_window_right", false, kInvalid, [](Call &c) { c.options.causal = 1, c.options.window_right = 3; }},
    {"nan_scale", false, kInvalid, [](Call &c) { c.options.softmax_scale = std::nanf(""); }},
    {"negative_scale", false, kInvalid, [](Call &c) { c.options.softmax_scale = -0.125f; }},
    {"infinite_scale", false, kInvalid, [](Call &c) { c.options.softmax_scale = INFINITY; }},
    {"options_not_initialised", false, kInvalid, [](Call &c) { c.options.struct_size = 0; }},
    {"varlen_without_cu_seqlens_k", false, kNull, [](Call &c) {
       c.options.cu_seqlens_q = static_cast<const int32_t *>(c[Operand::q].data); }},
    {"workspace_too_small", false, kWorkspace, shrink_workspace, true},
    {"workspace_null", false, kNull, drop_workspace, true},
    {"workspace_misaligned", false, kAlign, misalign_workspace, true},
    {"null_dout", true, kNull, [](Call &c) { c.ptr[int(Operand::dout)] = nullptr; }},
    {"null_dq_data", true, kNull, [](Call &c) { c[Operand::dq].data = nullptr; }},
    {"null_lse", true, kNull, [](Call &c) { c.lse = nullptr; }},
    {"overlapping_dk_rows", true, kStride, [](Call &c) { c[Operand::dk].stride_seq = kHeadDim; }},
    {"negative_dv_stride", true, kStride, [](Call &c) { c[Operand::dv].stride_head = -kHeadDim; }},
    {"mixed_dout_dtype", true, kDtype, [](Call &c) { c[Operand::dout].dtype = FA2_DTYPE_F32; }},
    {"misaligned_lse", true, kAlign, misalign_lse},
    {"heads_not_a_multiple", true, kShape, [](Call &c) { c.shape.heads_kv = 4; }},
    {"workspace_too_small", true, kWorkspace, shrink_workspace, true},
    {"workspace_null", true, kNull, drop_workspace, true},
    {"workspace_misaligned", true, kAlign, misalign_workspace, true},
};
// clang-format on

struct BadInput {
  fa2_backend_t backend;
  const Mutation *mutation;
};

std::string name_of(const BadInput &b) {
  return std::string(fa2_backend_name(b.backend)) + (b.mutation->backward ? "_bwd_" : "_fwd_") +
         b.mutation->name;
}
void PrintTo(const BadInput &b, std::ostream *os) { *os << name_of(b); }

// A small valid problem (f16, d 64, GQA, causal), its forward already run
// so that the backward's out and lse are real. Few query rows against
// enough keys that a GPU splits the forward over them (a decoding-like
// call): its forward then needs a workspace, and the workspace refusals run.
Case valid_case(fa2_backend_t backend) {
  Case c;
  c.backend = backend;
  c.dtype = FA2_DTYPE_F16;
  c.head_dim = int(kHeadDim);
  c.batch = 2, c.seqlen_q = 17, c.seqlen_k = 300, c.heads_q = 6, c.heads_kv = 2;
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
    EXPECT_EQ(query(s.handle(), &call.shape, c.dtype, &call.options, &call.workspace_bytes),
              FA2_SUCCESS)
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
      forward.workspace = bytes > 0 ? fwd_workspace.get() : nullptr,
      forward.workspace_bytes = bytes;
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
  if (m.needs_workspace && call.workspace_bytes == 0)
    GTEST_SKIP() << "this backend needs no workspace for this call: nothing to get wrong";
  m.mutate(call);
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
                           return name_of(info.param);
                         });

// The unmutated calls succeed, so each refusal above is the mutation's doing.
struct OnlyBackend {
  fa2_backend_t backend;
};
void PrintTo(const OnlyBackend &b, std::ostream *os) { *os << fa2_backend_name(b.backend); }
using ValidCallSucceeds = OnBackend<OnlyBackend>;

TEST_P(ValidCallSucceeds, ForwardAndBackward) {
  for (bool backward : {false, true}) {
    ValidCall valid(session_, valid_case(GetParam().backend), backward);
    EXPECT_EQ(valid.call.invoke(), FA2_SUCCESS) << fa2_last_error(session_.handle());
  }
}

TEST_P(ValidCallSucceeds, ButNotAWorkspaceQueryWithoutAnAnswer) {
  const Case c = valid_case(GetParam().backend);
  const fa2_shape_t shape = shape_of(c);
  for (auto query : {fa2_fwd_workspace_size, fa2_bwd_workspace_size}) {
    EXPECT_EQ(query(session_.handle(), &shape, c.dtype, nullptr, nullptr), FA2_ERROR_NULL_POINTER);
    EXPECT_STRNE(fa2_last_error(session_.handle()), "");
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
