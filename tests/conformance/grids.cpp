#include "grids.h"

#include <algorithm>
#include <utility>

namespace fa2::test::grids {
namespace {

const fa2_dtype_t kLowPrecision[] = {FA2_DTYPE_F16, FA2_DTYPE_BF16};
const fa2_dtype_t kAllDtypes[] = {FA2_DTYPE_F16, FA2_DTYPE_BF16, FA2_DTYPE_F32};

Case make(fa2_dtype_t dtype, int head_dim, int batch, int seqlen_q, int seqlen_k, int heads_q,
          int heads_kv, bool causal, bool backward = true) {
  Case c;
  c.dtype = dtype;
  c.head_dim = head_dim;
  c.batch = batch;
  c.seqlen_q = seqlen_q;
  c.seqlen_k = seqlen_k;
  c.heads_q = heads_q;
  c.heads_kv = heads_kv;
  c.causal = causal;
  c.backward = backward;
  return c;
}

Case with_window(Case c, int left, int right) {
  c.window_left = left;
  c.window_right = right;
  return c;
}

Case with_layout(Case c, Layout layout) {
  c.layout = layout;
  return c;
}

// Varlen: one length per sequence; the shape's lengths are the maxima.
Case make_varlen(fa2_dtype_t dtype, std::vector<int> lens_q, std::vector<int> lens_k, bool causal) {
  Case c = make(dtype, 64, int(lens_q.size()), *std::max_element(lens_q.begin(), lens_q.end()),
                *std::max_element(lens_k.begin(), lens_k.end()), 6, 2, causal);
  c.lens_q = std::move(lens_q);
  c.lens_k = std::move(lens_k);
  return c;
}

using Lengths = std::pair<int, int>;
const Lengths kSmallPairs[] = {{1, 1},     {1, 239},   {3, 799},  {7, 113},
                               {113, 203}, {127, 512}, {512, 256}};
const Lengths kBigPairs[] = {{1023, 1024}, {2048, 2048}};

}  // namespace

std::vector<Case> head_dims() {
  std::vector<Case> cases;
  for (int d : {32, 40, 59, 64, 80, 96, 111, 128, 160, 192, 224, 256})
    for (fa2_dtype_t dtype : kAllDtypes)
      for (bool causal : {false, true}) cases.push_back(make(dtype, d, 2, 113, 203, 3, 1, causal));
  return on_every_backend(cases);
}

std::vector<Case> seqlens() {
  std::vector<Case> cases;
  const int head_config[3][2] = {{6, 6}, {6, 2}, {6, 1}};
  int n = 0;
  for (bool causal : {false, true})
    for (const auto &[lq, lk] : kSmallPairs) {
      const int *h = head_config[n % 3];
      const fa2_dtype_t dtype = kLowPrecision[n++ % 2];
      cases.push_back(make(dtype, n % 2 ? 64 : 128, 2, lq, lk, h[0], h[1], causal));
      if (causal && lq != lk) cases.push_back(make(dtype, 64, 2, lk, lq, h[0], h[1], causal));
    }
  for (bool causal : {false, true})
    for (const auto &[lq, lk] : kBigPairs) {
      cases.push_back(make(FA2_DTYPE_F16, 64, 1, lq, lk, 2, 1, causal));
      if (causal && lq != lk) cases.push_back(make(FA2_DTYPE_F16, 64, 1, lk, lq, 2, 1, causal));
    }
  return on_every_backend(cases);
}

std::vector<Case> heads() {
  std::vector<Case> cases;
  for (int heads_kv : {6, 2, 1})
    for (fa2_dtype_t dtype : kAllDtypes)
      for (bool causal : {false, true})
        cases.push_back(make(dtype, 64, 2, 97, 131, 6, heads_kv, causal));
  return on_every_backend(cases);
}

std::vector<Case> windows() {
  std::vector<Case> cases;
  const std::pair<int, int> sides[] = {{0, 0}, {16, 0}, {32, 8}, {-1, 5}, {7, -1}, {100, 50}};
  const Lengths pairs[] = {{113, 203}, {203, 113}, {128, 128}};
  int n = 0;
  for (const auto &[lq, lk] : pairs) {
    for (const auto &[left, right] : sides)
      cases.push_back(
          with_window(make(kLowPrecision[n++ % 2], 64, 2, lq, lk, 6, 2, false), left, right));
    for (int left : {0, 16, 64})
      cases.push_back(
          with_window(make(kLowPrecision[n++ % 2], 64, 2, lq, lk, 6, 2, true), left, -1));
  }
  return on_every_backend(cases);
}

std::vector<Case> varlen() {
  const std::pair<std::vector<int>, std::vector<int>> batches[] = {
      {{1, 1, 1}, {1, 1, 1}},  // cu_seqlens_k = [0, 1, 2, 3]: a past NaN report
      {{0, 1, 17, 113, 7}, {5, 0, 31, 203, 129}},
      {{127, 0, 64}, {0, 33, 255}},
  };
  std::vector<Case> cases;
  int n = 0;
  for (const auto &[lens_q, lens_k] : batches)
    for (bool causal : {false, true}) {
      cases.push_back(make_varlen(kLowPrecision[n++ % 2], lens_q, lens_k, causal));
      cases.push_back(
          with_window(make_varlen(FA2_DTYPE_F32, lens_q, lens_k, causal), 9, causal ? -1 : 3));
    }
  // 144 query tiles of 128 rows, more than an H100 / H200 has SMs, with
  // empty and one-row sequences between them: persistent GPU forwards
  // (the Hopper path's) walk several tiles a CTA.
  std::vector<int> many_q, many_k;
  for (int cycle = 0; cycle < 6; ++cycle) {
    many_q.insert(many_q.end(), {129, 0, 1, 130, 7});
    many_k.insert(many_k.end(), {129, 0, 9, 130, 70});
  }
  for (int head_dim : {128, 256})
    for (bool causal : {false, true}) {
      Case c = make_varlen(kLowPrecision[n++ % 2], many_q, many_k, causal);
      c.head_dim = head_dim;
      c.heads_q = 4;
      c.heads_kv = 2;
      cases.push_back(c);
    }
  return on_every_backend(cases);
}

std::vector<Case> layouts() {
  std::vector<Case> cases;
  for (bool causal : {false, true})
    for (fa2_dtype_t dtype : kAllDtypes) {
      for (Layout l : {Layout::padded, Layout::head_major, Layout::transposed_dout})
        cases.push_back(with_layout(make(dtype, 64, 2, 113, 203, 6, 2, causal), l));
      cases.push_back(with_layout(make(dtype, 64, 2, 97, 97, 6, 2, causal), Layout::packed_qkv));
    }
  Case packed_varlen = make_varlen(FA2_DTYPE_F16, {33, 0, 100}, {33, 0, 100}, true);
  cases.push_back(with_layout(packed_varlen, Layout::packed_qkv));
  Case padded_varlen = make_varlen(FA2_DTYPE_BF16, {0, 1, 17, 113, 7}, {5, 0, 31, 203, 129}, false);
  cases.push_back(with_layout(padded_varlen, Layout::padded));
  cases.push_back(with_layout(padded_varlen, Layout::head_major));
  return on_every_backend(cases);
}

std::vector<Case> scales() {
  std::vector<Case> cases;
  for (float scale : {0.5f, 0.05f})
    for (fa2_dtype_t dtype : kLowPrecision) {
      Case c = make(dtype, 64, 2, 113, 203, 6, 2, dtype == FA2_DTYPE_F16);
      c.softmax_scale = scale;
      cases.push_back(c);
    }
  return on_every_backend(cases);
}

// Decoding shapes: one or a few query rows against thousands of keys, few
// (batch, head) pairs. On a GPU they fold a group's query heads into rows
// (one row, no window cutting it) and split the keys over CTAs; the lse
// they leave feeds the backward as any other.
std::vector<Case> decode() {
  std::vector<Case> cases{
      make(FA2_DTYPE_BF16, 128, 2, 1, 4099, 8, 2, false),  // folds 4 heads, splits
      make(FA2_DTYPE_F16, 128, 2, 1, 4099, 8, 2, true),    // causal: the one row sees all
      make(FA2_DTYPE_F16, 64, 3, 1, 1000, 6, 1, true),     // MQA, 6 heads fold
      make(FA2_DTYPE_BF16, 64, 1, 1, 2048, 4, 4, false),   // MHA: split only
      make(FA2_DTYPE_F16, 40, 1, 1, 3001, 4, 2, false),    // a padded head dim
      make(FA2_DTYPE_BF16, 256, 1, 1, 2500, 8, 1, false),  // 8 rows of 16 a warp
      make(FA2_DTYPE_F16, 192, 1, 3, 1700, 2, 1, true),    // three rows, causal: 6 folded
      make(FA2_DTYPE_BF16, 96, 2, 7, 5000, 4, 2, true),
      make(FA2_DTYPE_F16, 32, 1, 64, 1500, 2, 1, true),    // 128 rows: unfolded, 64 a head
      // drafted tokens: causal over folded positions
      make(FA2_DTYPE_BF16, 128, 2, 4, 4099, 32, 8, true),  // 4 x 4 rows: one item a KV head
      make(FA2_DTYPE_F16, 64, 3, 5, 2000, 8, 1, true),     // items end inside a head's rows
      make(FA2_DTYPE_BF16, 256, 1, 8, 1500, 8, 1, false),  // 64 rows: the most folded
      make(FA2_DTYPE_F16, 64, 1, 6, 3, 4, 2, true),        // positions 0-2 see no key
      // more than 16 rows: items of two 16-row slabs
      make(FA2_DTYPE_BF16, 128, 2, 8, 4099, 32, 8, true),  // 8 x 4 rows: one item a KV head
      make(FA2_DTYPE_F16, 128, 1, 17, 3000, 2, 2, false),  // unfolded: the second slab one row
      with_window(make(FA2_DTYPE_BF16, 96, 1, 9, 2500, 6, 3, true), 300, -1),  // 18 rows
      make_varlen(FA2_DTYPE_F16, {20, 0, 33}, {2000, 50, 1500}, true),
      make(FA2_DTYPE_BF16, 128, 8, 8, 1000, 32, 8, true),  // enough items: unsplit on a GPU
      with_window(make(FA2_DTYPE_F16, 128, 2, 3, 3000, 4, 2, true), 512, -1),
      with_layout(make(FA2_DTYPE_BF16, 96, 2, 2, 1111, 6, 3, true), Layout::head_major),
      make(FA2_DTYPE_F32, 64, 2, 1, 777, 4, 2, false),
      with_window(make(FA2_DTYPE_F16, 128, 2, 1, 3000, 4, 2, false), 512, -1),  // cuts key 0
      with_layout(make(FA2_DTYPE_BF16, 64, 2, 1, 1111, 6, 2, false), Layout::head_major),
      with_layout(make(FA2_DTYPE_F16, 128, 1, 1, 2222, 4, 1, true), Layout::padded),
      // varlen: empty query and key sequences among long ones
      make_varlen(FA2_DTYPE_BF16, {1, 0, 1, 1, 5}, {3000, 17, 0, 1200, 2048}, false),
      make_varlen(FA2_DTYPE_F16, {1, 1, 2}, {4096, 1, 999}, true),
  };
  return on_every_backend(cases);
}

std::vector<Case> fully_masked() {
  std::vector<Case> cases{
      with_window(make(FA2_DTYPE_F16, 64, 2, 64, 16, 6, 2, false), 0, 0),  // rows < 48 see nothing
      make(FA2_DTYPE_BF16, 64, 2, 113, 7, 6, 1, true),  // causal, bottom-right: rows < 106
      with_window(make(FA2_DTYPE_F16, 128, 1, 200, 72, 2, 2, true), 4, -1),
      with_window(make(FA2_DTYPE_F32, 64, 2, 192, 64, 6, 6, false), 3, 0),
      make_varlen(FA2_DTYPE_F16, {5, 17, 1}, {0, 9, 0}, false),  // seqlen_k = 0
  };
  return on_every_backend(cases);
}

std::vector<Case> baseline() {
  std::vector<Case> cases;
  for (fa2_dtype_t dtype : kLowPrecision)
    for (int d : {64, 128}) cases.push_back(make(dtype, d, 1, 33, 47, 2, 1, true));
  return on_every_backend(cases);
}

std::vector<Case> determinism() {
  std::vector<Case> cases{
      make(FA2_DTYPE_F16, 64, 1, 1023, 1024, 2, 1, true, false),
      make(FA2_DTYPE_BF16, 128, 2, 113, 203, 6, 2, false, false),
      with_window(make(FA2_DTYPE_F32, 64, 2, 127, 512, 6, 6, false, false), 32, 32),
      make_varlen(FA2_DTYPE_F16, {0, 1, 17, 113, 7}, {5, 0, 31, 203, 129}, true),
  };
  return on_every_backend(cases);
}

}  // namespace fa2::test::grids
