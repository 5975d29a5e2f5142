#include <algorithm>
#include <numeric>
#include <sstream>

#include "attend/ops/attention.hpp"
#include "attend/ops/bf16.hpp"
#include "attend/ops/reference.hpp"
#include "op_cases.hpp"

namespace attend::test {
namespace {

enum class Layout {
  separate,   // Q, K, V each [B, H, seq, d]
  fused_qkv,  // one [B, T, 3·H·d] buffer, as a fused QKV projection writes it (T = S)
  cross,      // Q [B, T, H·d] and one [B, S, 2·H·d] buffer from a fused KV projection
};

// Relative-position terms (ops::RelativePositions): none, T5's per-head bias, Shaw's
// relative keys and values, or all three.
enum class Relative { none, bias, keys_values, all };

struct RelativeState {
  std::vector<float> bias, keys, values;
};

// Random terms for `heads` heads of head_dim d at max distance r, into `out`.
void random_positions(Rng& rng, Relative kind, index_t r, index_t heads, index_t d, RelativeState& st,
                      ops::RelativePositions& out) {
  if (kind == Relative::none) return;
  const index_t nd = 2 * r + 1;
  auto fill = [&](std::vector<float>& v, size_t n) {
    v.resize(n);
    for (float& x : v) x = static_cast<float>(rng.uniform(-1.5, 1.5));
  };
  out.max_distance = r;
  if (kind == Relative::bias || kind == Relative::all) {
    const index_t stride = nd + rng.uniform_int(0, 2);
    fill(st.bias, static_cast<size_t>(heads * stride));
    out.bias = st.bias.data(), out.bias_head_stride = stride;
  }
  if (kind == Relative::keys_values || kind == Relative::all) {
    fill(st.keys, static_cast<size_t>(nd * d));
    fill(st.values, static_cast<size_t>(nd * d));
    out.keys = st.keys.data(), out.values = st.values.data();
  }
}

const char* relative_name(Relative k) {
  switch (k) {
    case Relative::none: return "";
    case Relative::bias: return " rel-bias";
    case Relative::keys_values: return " rel-keys-values";
    case Relative::all: return " rel-bias-keys-values";
  }
  return "";
}

struct AttentionShape {
  index_t B, H, T, S, d;
  bool causal;
  bool lengths;  // random per-batch key lengths (some 0)
  Layout layout;
  Relative relative = Relative::none;
  index_t max_distance = 0;
};

OpCase attention_case(Rng& rng, const AttentionShape& p) {
  struct State {
    Buffer2D q, k, v, out, out_ref;  // k, v unused by the fused layouts
    std::vector<std::int32_t> lengths;
    RelativeState relative;
    ops::AttentionArgs args;
  };
  auto s = std::make_shared<State>();
  const index_t D = p.H * p.d, pad = rng.uniform_int(0, 3);
  ops::AttentionArgs& a = s->args;
  a.batch = p.B, a.heads = p.H, a.q_len = p.T, a.kv_len = p.S, a.head_dim = p.d, a.causal = p.causal;
  auto heads = [](float* base, index_t seq, index_t row_ld, index_t d) {
    return ops::HeadsView<float>{base, seq * row_ld, d, row_ld};
  };
  switch (p.layout) {
    case Layout::separate:
      // [B·H·seq, d] with padded rows: head h of batch b starts at row (b·H + h)·seq.
      s->q = Buffer2D(p.B * p.H * p.T, p.d, pad);
      s->k = Buffer2D(p.B * p.H * p.S, p.d, pad);
      s->v = Buffer2D(p.B * p.H * p.S, p.d, pad);
      a.q = {s->q.data(), p.H * p.T * s->q.ld(), p.T * s->q.ld(), s->q.ld()};
      a.k = {s->k.data(), p.H * p.S * s->k.ld(), p.S * s->k.ld(), s->k.ld()};
      a.v = {s->v.data(), p.H * p.S * s->v.ld(), p.S * s->v.ld(), s->v.ld()};
      break;
    case Layout::fused_qkv: {
      s->q = Buffer2D(p.B * p.T, 3 * D, pad);
      const index_t ld = s->q.ld();
      auto h = heads(s->q.data(), p.T, ld, p.d);
      a.q = h;
      a.k = {h.data + D, h.batch_stride, h.head_stride, h.seq_stride};
      a.v = {h.data + 2 * D, h.batch_stride, h.head_stride, h.seq_stride};
      break;
    }
    case Layout::cross: {
      s->q = Buffer2D(p.B * p.T, D, pad);
      s->k = Buffer2D(p.B * p.S, 2 * D, pad);
      a.q = heads(s->q.data(), p.T, s->q.ld(), p.d);
      auto kv = heads(s->k.data(), p.S, s->k.ld(), p.d);
      a.k = kv;
      a.v = {kv.data + D, kv.batch_stride, kv.head_stride, kv.seq_stride};
      break;
    }
  }
  s->q.fill_random(rng, -1, 1);
  if (s->k.rows()) s->k.fill_random(rng, -1, 1);
  if (s->v.rows()) s->v.fill_random(rng, -1, 1);
  s->out = Buffer2D(p.B * p.T, D, pad);
  s->out_ref = Buffer2D(p.B * p.T, D, pad);
  if (p.lengths) {
    for (index_t b = 0; b < p.B; ++b)
      s->lengths.push_back(static_cast<std::int32_t>(b == 0 ? 0 : rng.uniform_int(1, p.S)));
    std::shuffle(s->lengths.begin(), s->lengths.end(), rng.engine());
    a.kv_lengths = s->lengths.data();
  }
  random_positions(rng, p.relative, p.max_distance, p.H, p.d, s->relative, a.positions);

  std::ostringstream name;
  name << "attention B=" << p.B << " H=" << p.H << " T=" << p.T << " S=" << p.S << " d=" << p.d
       << (p.causal ? " causal" : "") << (p.lengths ? " lengths" : "")
       << (p.layout == Layout::fused_qkv ? " fused-qkv" : p.layout == Layout::cross ? " cross-kv" : "")
       << relative_name(p.relative) << (p.relative != Relative::none ? " R=" + std::to_string(p.max_distance) : "");
  OpCase c;
  c.op = "attention";
  c.name = name.str();
  c.flops = 4.0 * p.B * p.H * p.T * p.S * p.d * (p.causal ? 0.5 : 1.0);
  c.bytes = 4.0 * p.B * p.H * p.d * (2 * p.T + 2 * p.S);
  c.run = [s](int threads) {
    ops::AttentionArgs x = s->args;
    x.out = {s->out.data(), x.q_len * s->out.ld(), x.head_dim, s->out.ld()};
    ops::attention(x, threads);
  };
  c.reference = [s] {
    ops::AttentionArgs x = s->args;
    x.out = {s->out_ref.data(), x.q_len * s->out_ref.ld(), x.head_dim, s->out_ref.ld()};
    ops::reference::attention(x);
  };
  c.outputs = {{&s->out, &s->out_ref}};
  c.state = s;
  return c;
}

enum class RowTable { none, per_row, per_key };

OpCase decode_case(Rng& rng, index_t R, index_t H, index_t d, index_t L, RowTable table,
                   Relative relative = Relative::none, index_t max_distance = 0, bool query_positions = false,
                   ops::KvType cache = ops::KvType::f32) {
  struct State {
    Buffer2D q, k, v, out, out_ref, scale;
    std::vector<std::uint16_t> k_bf16, v_bf16;  // a bf16 cache: k and v rounded, same layout
    RelativeState relative;
    std::vector<std::int32_t> lengths, rows, query_positions;
    ops::DecodeAttentionArgs args;
  };
  auto s = std::make_shared<State>();
  const index_t D = H * d, pad = rng.uniform_int(0, 3);
  const index_t C = table == RowTable::none ? R : R + 3;  // cache rows
  s->q = Buffer2D(R, D, pad);
  s->q.fill_random(rng, -1, 1);
  s->k = Buffer2D(L * C, D, pad);
  s->k.fill_random(rng, -1, 1);
  s->v = Buffer2D(L * C, D, pad);
  s->v.fill_random(rng, -1, 1);
  s->out = Buffer2D(R, D, pad);
  s->out_ref = Buffer2D(R, D, pad);
  for (index_t i = 0; i < R; ++i) s->lengths.push_back(static_cast<std::int32_t>(i == 0 ? 0 : rng.uniform_int(1, L)));
  index_t table_ld = 0;
  if (table == RowTable::per_row) {
    s->rows.resize(C);
    std::iota(s->rows.begin(), s->rows.end(), 0);
    std::shuffle(s->rows.begin(), s->rows.end(), rng.engine());
  } else if (table == RowTable::per_key) {
    table_ld = L;
    for (index_t i = 0; i < R * L; ++i) s->rows.push_back(static_cast<std::int32_t>(rng.uniform_int(0, C - 1)));
  }
  ops::DecodeAttentionArgs& a = s->args;
  a.rows = R, a.heads = H, a.head_dim = d;
  a.q = s->q.data();
  a.q_row_stride = s->q.ld();
  const std::int32_t* rows = s->rows.empty() ? nullptr : s->rows.data();
  a.k = {s->k.data(), C * s->k.ld(), s->k.ld(), d, rows, table_ld};
  a.v = {s->v.data(), C * s->v.ld(), s->v.ld(), d, rows, table_ld};
  if (cache == ops::KvType::bf16) {
    // The whole buffers, padding included: the kernel must read only the elements.
    for (auto [from, to] : {std::pair{&s->k, &s->k_bf16}, std::pair{&s->v, &s->v_bf16}}) {
      const index_t n = from->rows() * from->ld();
      to->resize(static_cast<std::size_t>(n));
      for (index_t e = 0; e < n; ++e) (*to)[e] = ops::bf16_from_float(from->data()[e]);
    }
    a.k.data = s->k_bf16.data(), a.k.type = ops::KvType::bf16;
    a.v.data = s->v_bf16.data(), a.v.type = ops::KvType::bf16;
  }
  a.kv_lengths = s->lengths.data();
  a.out_row_stride = s->out.ld();
  random_positions(rng, relative, max_distance, H, d, s->relative, a.positions);
  if (query_positions) {  // queries placed past their newest key (CTranslate2's one-pass prefix)
    for (index_t i = 0; i < R; ++i) s->query_positions.push_back(s->lengths[i] + static_cast<std::int32_t>(rng.uniform_int(-1, 6)));
    a.query_positions = s->query_positions.data();
  }

  std::ostringstream name;
  name << "attention_decode rows=" << R << " H=" << H << " d=" << d << " L≤" << L
       << (table == RowTable::per_row ? " row-table" : table == RowTable::per_key ? " key-table" : "")
       << relative_name(relative) << (relative != Relative::none ? " R=" + std::to_string(max_distance) : "")
       << (query_positions ? " query-positions" : "") << (cache == ops::KvType::bf16 ? " bf16-cache" : "");
  OpCase c;
  c.op = "attention_decode";
  c.name = name.str();
  c.flops = 4.0 * R * H * L * d;
  c.bytes = 4.0 * R * D * 2 + double(ops::kv_type_bytes(cache)) * R * D * 2 * L;
  c.run = [s](int threads) {
    ops::DecodeAttentionArgs x = s->args;
    x.out = s->out.data();
    ops::attention_decode(x, threads);
  };
  c.reference = [s] {
    ops::DecodeAttentionArgs x = s->args;
    x.out = s->out_ref.data();
    ops::reference::attention_decode(x);
  };
  // Each output is a weighted average of values in [-1, 1] (plus relative values in
  // [-1.5, 1.5]): its rounding error scales with that bound, not with the output, which
  // cancellation can make arbitrarily small (d = 1 with two rows made a normwise error
  // of 1.03e-5 from an ordinary 1e-6 absolute one).
  s->scale = Buffer2D(R, D);
  for (index_t r = 0; r < R; ++r)
    for (index_t e = 0; e < D; ++e) s->scale.at(r, e) = a.positions.values != nullptr ? 2.5f : 1.0f;
  c.outputs = {{&s->out, &s->out_ref, &s->scale}};
  c.state = s;
  return c;
}

}  // namespace

std::vector<OpCase> attention_cases(Rng& rng, CaseScale scale) {
  std::vector<OpCase> out;
  if (scale == CaseScale::perf) {
    for (index_t T : {64, 256, 1024})
      for (bool causal : {false, true}) out.push_back(attention_case(rng, {1, 8, T, T, 64, causal, false, Layout::separate}));
    // all-MiniLM-L6-v2's encoder: 32 sentences of ~54 tokens, 12 heads of 32, fused QKV.
    // Its lengths vary (1024 sentences: 54 tokens on average); at 40 the last tile holds 8.
    out.push_back(attention_case(rng, {32, 12, 54, 54, 32, false, false, Layout::fused_qkv}));
    out.push_back(attention_case(rng, {32, 12, 40, 40, 32, false, false, Layout::fused_qkv}));
    for (index_t L : {16, 128, 1024})
      for (ops::KvType cache : {ops::KvType::f32, ops::KvType::bf16})
        out.push_back(decode_case(rng, 32, 8, 64, L, RowTable::none, Relative::none, 0, false, cache));
    return out;
  }
  const index_t dims[] = {4, 32, 64, 80, 128};
  const std::pair<index_t, index_t> lens[] = {{1, 1}, {5, 1}, {1, 37}, {33, 70}, {64, 64}, {100, 29}, {70, 70}};
  for (index_t d : dims)
    for (auto [T, S] : lens)
      for (bool causal : {false, true}) {
        const Layout layout = T == S && rng.uniform_int(0, 1) ? Layout::fused_qkv
                              : rng.uniform_int(0, 1)         ? Layout::cross
                                                              : Layout::separate;
        out.push_back(attention_case(rng, {rng.uniform_int(1, 3), rng.uniform_int(1, 3), T, S, d, causal,
                                           rng.uniform_int(0, 1) == 1, layout}));
      }
  out.push_back(attention_case(rng, {2, 2, 40, 0, 16, false, false, Layout::separate}));  // no keys at all
  // Decoding keeps heads of up to 8 vectors in registers and wider ones in scratch:
  // cover both sides of that line on every ISA, and partial last vectors.
  // bf16 caches on the same paths: the reference reads the same rounded elements.
  for (index_t d : {1, 4, 17, 32, 64, 80, 128, 200, 256})
    for (RowTable t : {RowTable::none, RowTable::per_row, RowTable::per_key})
      for (ops::KvType cache : {ops::KvType::f32, ops::KvType::bf16})
        out.push_back(decode_case(rng, rng.uniform_int(1, 9), rng.uniform_int(1, 4), d, rng.uniform_int(1, 150), t,
                                  Relative::none, 0, false, cache));
  // Relative positions: T5 bias and Shaw keys/values, in the encoder's full kernel
  // (self-attention, T = S, with and without padding; causal for a decoder run over a
  // prefix) and the decoder's, where the query's position is its cache length − 1.
  // Distances from 0 (every key at one clipped distance) to the keys' stack limit.
  for (Relative rel : {Relative::bias, Relative::keys_values, Relative::all})
    for (index_t d : {4, 16, 64, 80})
      for (index_t r : {index_t{0}, index_t{2}, index_t{16}, ops::kMaxRelativeKeyDistance}) {
        const index_t T = std::vector<index_t>{1, 9, 40, 70}[rng.uniform_int(0, 3)];
        out.push_back(attention_case(rng, {rng.uniform_int(1, 3), rng.uniform_int(1, 3), T, T, d, rng.uniform_int(0, 1) == 1,
                                           rng.uniform_int(0, 1) == 1, rng.uniform_int(0, 1) ? Layout::fused_qkv : Layout::separate,
                                           rel, r}));
        out.push_back(decode_case(rng, rng.uniform_int(1, 9), rng.uniform_int(1, 4), d, rng.uniform_int(1, 150),
                                  RowTable::per_key, rel, r));
      }
  // T5's bias has no distance limit; a query tile shorter than its keys (T < S).
  out.push_back(attention_case(rng, {2, 3, 33, 70, 32, true, false, Layout::separate, Relative::bias, 300}));
  out.push_back(attention_case(rng, {1, 2, 5, 37, 16, false, true, Layout::separate, Relative::all, 7}));
  out.push_back(decode_case(rng, 5, 3, 200, 140, RowTable::per_row, Relative::all, 9));
  for (Relative rel : {Relative::bias, Relative::all})
    out.push_back(decode_case(rng, 7, 2, 16, 40, RowTable::per_key, rel, 5, true));
  for (Relative rel : {Relative::bias, Relative::keys_values})
    out.push_back(decode_case(rng, 5, 3, 24, 60, RowTable::per_row, rel, 7, false, ops::KvType::bf16));
  return out;
}

}  // namespace attend::test
