#include "plan/encoder_plan.hpp"

#include <algorithm>
#include <sstream>

#include "attend/error.hpp"
#include "attend/ops/cache_sizes.hpp"
#include "attend/ops/isa.hpp"
#include "plan/arena_planner.hpp"
#include "plan/outlier_rows.hpp"
#include "plan/plan_text.hpp"

namespace attend::runtime {
namespace {

// Tokens of the attention sublayer per chunk, per thread (whole sequences, so at least
// the longest one): the GEMMs keep their efficiency, and the [rows, 3d] QKV and the
// context stay small (d = 384: 1.5 MiB at 256 rows).
constexpr std::int64_t kAttentionChunkRowsPerThread = 256;

}  // namespace

// Rows of the feed-forward sublayer per chunk, per thread: as many as keep the chunk of
// the [rows, ffn] fp32 intermediate within 3/4 of a core's L2 from the fc1 GEMM that
// writes it to the fc2 GEMM (and int8's quantizer) that reads it — in multiples of 16,
// between 32 and 128. MiniLM's 1536-wide one: 128 rows (768 KiB) on 1–2 MiB L2s, 64
// (384 KiB) on Zen 3's 512 KiB. There, the standard embedding workload in int8, the
// two chunk sizes alternated in one process (two encoders, 10–12 pairs of passes,
// median speed-up): 64 rows ×1.03–1.07 over 128, 80 (480 KiB) ×1.04, 96 (576 KiB, past
// the L2) ×1.00, 32 ×0.98. Results are the same bits whatever the chunk.
std::int64_t feed_forward_chunk_rows_per_thread(std::int64_t ffn_width) {
  const auto fitting = static_cast<std::int64_t>(ops::l2_cache_bytes() * 3 / 4) / (std::max<std::int64_t>(ffn_width, 1) * 4);
  return std::clamp<std::int64_t>(fitting / 16 * 16, 32, 128);
}

const char* encoder_phase_name(EncoderPhase p) {
  switch (p) {
    case EncoderPhase::body: return "body";
    case EncoderPhase::pooler: return "pooler";
    case EncoderPhase::embedding: return "embedding";
    case EncoderPhase::classifier: return "classifier";
  }
  return "?";
}

const char* encoder_step_kind_name(EncoderStepKind k) {
  switch (k) {
    case EncoderStepKind::embed: return "embed";
    case EncoderStepKind::layer_norm: return "layer_norm";
    case EncoderStepKind::linear: return "linear";
    case EncoderStepKind::attention: return "attention";
    case EncoderStepKind::first_token: return "first_token";
    case EncoderStepKind::pool: return "pool";
    case EncoderStepKind::tanh: return "tanh";
    case EncoderStepKind::normalize: return "normalize";
    case EncoderStepKind::outlier_rows: return "outlier_rows";
  }
  return "?";
}

void EncoderLimits::validate(const EncoderConfig& c) const {
  auto check = [](bool ok, const char* what, std::int64_t v, const std::string& why) {
    if (!ok) throw error_of("encoder limits: ", what, " = ", v, " ", why);
  };
  check(max_batch >= 1 && max_batch <= (1 << 16), "max_batch", max_batch, "must be in [1, 65536]");
  check(max_length >= 1, "max_length", max_length, "must be ≥ 1");
  check(max_length <= c.max_positions(), "max_length", max_length,
        "exceeds the model's " + std::to_string(c.max_positions()) + " positions");
  check(max_tokens >= max_length && max_tokens <= (1 << 24), "max_tokens", max_tokens,
        "must hold one longest sequence (" + std::to_string(max_length) + ") and be ≤ 16777216");
  check(threads >= 1 && threads <= 1024, "threads", threads, "must be in [1, 1024]");
}

class EncoderPlanBuilder {
 public:
  EncoderPlanBuilder(std::shared_ptr<const EncoderModel> model, const EncoderLimits& limits) : plan_(new EncoderPlan()) {
    plan_->model_ = std::move(model);
    plan_->limits_ = limits;
  }

  std::shared_ptr<const EncoderPlan> build() {
    emit_body();
    emit_heads();
    place_buffers();
    return std::shared_ptr<const EncoderPlan>(plan_.release());
  }

 private:
  const EncoderModel& m() const { return *plan_->model_; }
  const EncoderConfig& c() const { return m().config(); }
  const EncoderLimits& limits() const { return plan_->limits_; }

  int buffer(const std::string& name, ElementType type, std::int64_t rows, std::int64_t cols, bool output = false,
             bool chunk = false) {
    plan_->chunk_buffers_.push_back(chunk);
    PlanBuffer b;
    b.name = name, b.type = type, b.rows = rows, b.cols = cols, b.persistent = output;
    b.bytes = static_cast<std::size_t>(rows * cols) * element_bytes(type);
    b.first_use = b.last_use = -1;
    plan_->buffers_.push_back(b);
    return static_cast<int>(plan_->buffers_.size()) - 1;
  }
  Operand all(int b) const { return {b, 0, plan_->buffers_[b].cols}; }
  Operand cols(int b, std::int64_t col, std::int64_t n) const { return {b, col, n}; }
  std::int64_t rows_of(EncoderPhase p) const { return p == EncoderPhase::body ? limits().max_tokens : limits().max_batch; }

  EncoderStep step(EncoderStepKind kind, EncoderPhase phase, std::string name, Operand in, Operand out) const {
    EncoderStep s;
    s.kind = kind, s.phase = phase, s.name = std::move(name), s.in = in, s.out = out;
    return s;
  }

  void add(EncoderStep s) {
    s.threads = limits().threads;
    const double rows = static_cast<double>(rows_of(s.phase)), D = static_cast<double>(c().d_model);
    const double width = s.out.buffer >= 0 ? static_cast<double>(s.out.cols) : D;
    switch (s.kind) {
      case EncoderStepKind::linear: {
        const double N = static_cast<double>(s.linear->weight.n()), K = static_cast<double>(s.linear->weight.k());
        s.flops = 2 * rows * N * K;
        s.bytes = static_cast<double>(s.linear->weight.bytes()) + 4 * rows * (K + N * (s.residual.buffer >= 0 ? 2 : 1));
        break;
      }
      case EncoderStepKind::attention:  // every token against a whole longest sequence: an upper bound
        s.flops = 4 * rows * static_cast<double>(limits().max_length) * D;
        s.bytes = 4 * rows * 4 * D;
        break;
      case EncoderStepKind::outlier_rows:  // a max and a sum of magnitudes per value
        s.flops = 2 * rows * D;
        s.bytes = 4 * rows * D;
        break;
      case EncoderStepKind::pool:
        s.flops = static_cast<double>(limits().max_tokens) * D;
        s.bytes = 4 * static_cast<double>(limits().max_tokens) * D;
        break;
      default:
        s.flops = 8 * rows * width;
        s.bytes = 12 * rows * width;
    }
    const int index = static_cast<int>(plan_->steps_.size());
    for (const Operand* o : {&s.in, &s.out, &s.residual}) touch(o->buffer, index);
    for (int b : implicit_buffers(s)) touch(b, index);
    plan_->steps_.push_back(std::move(s));
  }

  std::vector<int> implicit_buffers(const EncoderStep& s) const {
    const auto& io = plan_->io_;
    switch (s.kind) {
      case EncoderStepKind::embed: return {io.tokens, io.positions, io.types};
      case EncoderStepKind::linear: return {s.outliers};
      case EncoderStepKind::layer_norm:
      case EncoderStepKind::outlier_rows: return {s.magnitudes};
      case EncoderStepKind::attention:
      case EncoderStepKind::first_token:
      case EncoderStepKind::pool: return {io.starts};
      default: return {};
    }
  }

  void touch(int b, int step) {
    if (b < 0) return;
    PlanBuffer& buf = plan_->buffers_[b];
    if (buf.first_use < 0) buf.first_use = step;
    buf.last_use = std::max(buf.last_use, step);
  }

  int row_group(std::int64_t rows, bool whole_sequences) {
    plan_->groups_.push_back({rows, whole_sequences});
    return static_cast<int>(plan_->groups_.size()) - 1;
  }

  void norm(EncoderPhase p, const std::string& name, const LayerNormWeights& w, Operand in, Operand out, std::int64_t layer) {
    EncoderStep s = step(EncoderStepKind::layer_norm, p, name, in, out);
    s.norm = &w, s.layer = layer;
    add(s);
  }
  void linear(EncoderPhase p, const std::string& name, const Linear& l, Operand in, Operand out, std::int64_t layer = -1,
              bool residual = false, ops::Activation act = ops::Activation::none, int group = -1, int outliers = -1) {
    EncoderStep s = step(EncoderStepKind::linear, p, name, in, out);
    s.linear = &l, s.layer = layer, s.activation = act, s.group = group, s.outliers = outliers;
    if (residual) s.residual = out;  // out = in·Wᵀ + b + out
    add(s);
  }
  // x = LN(x + body(x)) post-LN (BERT), x += body(LN(x)) pre-LN: `body` reads the operand
  // it is given and ends with a residual linear into x, whose epilogue adds the residual.
  template <class Body>
  void sublayer(const std::string& norm_name, const LayerNormWeights& w, int x, int normed, std::int64_t layer,
                const Body& body) {
    const bool pre = c().norm_placement == NormPlacement::pre;
    if (pre) norm(EncoderPhase::body, norm_name, w, all(x), all(normed), layer);
    body(all(pre ? normed : x));
    if (!pre) norm(EncoderPhase::body, norm_name, w, all(x), all(x), layer);
  }

  void emit_body() {
    const EncoderPhase P = EncoderPhase::body;
    const std::int64_t T = limits().max_tokens, B = limits().max_batch, D = c().d_model, F = c().ffn_dim;
    auto& io = plan_->io_;
    io.tokens = buffer("input.tokens", ElementType::i32, T, 1);
    io.positions = buffer("input.positions", ElementType::i32, T, 1);
    io.types = buffer("input.types", ElementType::i32, T, 1);
    io.starts = buffer("input.starts", ElementType::i32, B + 1, 1);
    const int x = buffer("encoder.x", ElementType::f32, T, D);
    const bool pre = c().norm_placement == NormPlacement::pre;
    const int h = pre ? buffer("encoder.normed", ElementType::f32, T, D) : -1;
    const std::int64_t attention_rows = std::min(T, std::max(limits().max_length, kAttentionChunkRowsPerThread * limits().threads));
    const std::int64_t ffn_rows = std::min(T, feed_forward_chunk_rows_per_thread(F) * limits().threads);
    const int qkv = buffer("encoder.qkv", ElementType::f32, attention_rows, 3 * D, false, /*chunk=*/true);
    const int ctx = buffer("encoder.context", ElementType::f32, attention_rows, D, false, /*chunk=*/true);
    const int ffn = buffer("encoder.ffn", ElementType::f32, ffn_rows, F, false, /*chunk=*/true);
    // int8: the rows the attention's and the feed-forward's GEMMs carry in two terms.
    const bool s8 = m().compute_type().gemm_weights == ops::WeightType::s8;
    const int attn_outliers = s8 ? buffer("encoder.outliers.attn", ElementType::i32, T + 1, 1) : -1;
    const int ffn_outliers = s8 ? buffer("encoder.outliers.ffn", ElementType::i32, T + 1, 1) : -1;
    // The rows of a sublayer's input (a LayerNorm's output, from the residual stream)
    // that get int8's second term; the attention's output, a mix of value rows, has none.
    // The LayerNorm that has just written `in` measures its rows as it writes them (a
    // pass over the batch of its own, reading them back from L2 or L3, was 1.5% of an
    // int8 embedding).
    int magnitudes = -1;
    auto find_outliers = [&](Operand in, int list, std::int64_t layer) {
      if (list < 0) return;
      EncoderStep s = step(EncoderStepKind::outlier_rows, P, tensor_names::encoder_layer(layer) + "outlier_rows", in, all(list));
      s.layer = layer;
      EncoderStep& writer = plan_->steps_.back();
      if (writer.kind == EncoderStepKind::layer_norm && writer.out.buffer == in.buffer && writer.out.col == in.col &&
          writer.out.cols == in.cols) {
        if (magnitudes < 0) magnitudes = buffer("encoder.row_magnitudes", ElementType::f32, T, 2);  // (max, sum)
        writer.magnitudes = s.magnitudes = magnitudes;
        touch(magnitudes, static_cast<int>(plan_->steps_.size()) - 1);
      }
      add(s);
    };

    add(step(EncoderStepKind::embed, P, "encoder.embed", all(io.tokens), all(x)));
    norm(P, "encoder.layernorm_embedding", m().embedding_norm, all(x), all(x), -1);
    for (std::int64_t l = 0; l < c().layers; ++l) {
      const EncoderLayer& w = m().layers[l];
      const std::string p = tensor_names::encoder_layer(l);
      sublayer(p + "self_attn_layer_norm", w.self_attn_norm, x, h, l, [&](Operand in) {
        find_outliers(in, attn_outliers, l);
        const int group = row_group(attention_rows, /*whole_sequences=*/true);
        linear(P, p + "self_attn.qkv_proj", w.qkv, in, all(qkv), l, false, ops::Activation::none, group, attn_outliers);
        EncoderStep a = step(EncoderStepKind::attention, P, p + "self_attn", all(qkv), all(ctx));
        a.layer = l, a.group = group;
        add(a);
        linear(P, p + "self_attn.out_proj", w.out, all(ctx), all(x), l, true, ops::Activation::none, group);
      });
      sublayer(p + "final_layer_norm", w.ffn_norm, x, h, l, [&](Operand in) {
        const int group = row_group(ffn_rows, false);
        find_outliers(in, ffn_outliers, l);
        linear(P, p + "fc1", w.fc1, in, all(ffn), l, false, c().activation, group, ffn_outliers);
        linear(P, p + "fc2", w.fc2, all(ffn), all(x), l, true, ops::Activation::none, group, ffn_outliers);
      });
    }
    io.hidden = x;
    if (c().final_norm) {
      norm(P, "encoder.layer_norm", m().final_norm, all(x), all(h), -1);
      io.hidden = h;
    }
    plan_->buffers_[io.hidden].persistent = true;  // read after the phase
  }

  void emit_heads() {
    const std::int64_t B = limits().max_batch, D = c().d_model;
    auto& io = plan_->io_;
    const int hidden = io.hidden;
    const bool needs_first = c().pooler || c().classifier == ClassifierHead::dense_tanh || c().classifier == ClassifierHead::dense_relu;
    const int first = needs_first ? buffer("heads.first_token", ElementType::f32, B, D) : -1;
    auto first_token = [&](EncoderPhase p) {
      add(step(EncoderStepKind::first_token, p, std::string(encoder_phase_name(p)) + ".first_token", all(hidden), all(first)));
    };
    if (c().pooler) {
      const EncoderPhase P = EncoderPhase::pooler;
      io.pooler = buffer("pooler.output", ElementType::f32, B, D, true);
      first_token(P);
      linear(P, "pooler.dense", m().pooler, all(first), all(io.pooler));
      add(step(EncoderStepKind::tanh, P, "pooler.tanh", {}, all(io.pooler)));
    }
    {
      const EncoderPhase P = EncoderPhase::embedding;
      int out = buffer("embedding.pooled", ElementType::f32, B, c().pooled_dim(), c().dense.empty());
      for (size_t i = 0; i < c().pooling.size(); ++i) {
        EncoderStep s = step(EncoderStepKind::pool, P, std::string("embedding.pool.") + pooling_name(c().pooling[i]),
                             all(hidden), cols(out, static_cast<std::int64_t>(i) * D, D));
        s.pooling = c().pooling[i];
        add(s);
      }
      for (size_t i = 0; i < c().dense.size(); ++i) {
        const bool last = i + 1 == c().dense.size();
        const int next = buffer("embedding.dense." + std::to_string(i), ElementType::f32, B, c().dense[i].out_features, last);
        linear(P, "dense." + std::to_string(i), m().dense[i], all(out), all(next));
        if (c().dense[i].tanh) add(step(EncoderStepKind::tanh, P, "dense." + std::to_string(i) + ".tanh", {}, all(next)));
        out = next;
      }
      // Run when the model has a Normalize module or a call asks (EncoderShape::normalize).
      add(step(EncoderStepKind::normalize, P, "embedding.normalize", {}, all(out)));
      io.embedding = out;
    }
    if (c().classifier != ClassifierHead::none) {
      const EncoderPhase P = EncoderPhase::classifier;
      io.logits = buffer("classifier.logits", ElementType::f32, B, c().num_labels, true);
      if (c().classifier == ClassifierHead::pooled) {
        linear(P, "classifier.out_proj", m().classifier_out, all(io.pooler), all(io.logits));
      } else {
        const int dense = buffer("classifier.hidden", ElementType::f32, B, D);
        first_token(P);
        const bool relu = c().classifier == ClassifierHead::dense_relu;
        linear(P, "classifier.dense", m().classifier_dense, all(first), all(dense), -1, false,
               relu ? ops::Activation::relu : ops::Activation::none);
        if (!relu) add(step(EncoderStepKind::tanh, P, "classifier.tanh", {}, all(dense)));
        linear(P, "classifier.out_proj", m().classifier_out, all(dense), all(io.logits));
      }
    }
  }

  void place_buffers() {
    const int last = static_cast<int>(plan_->steps_.size()) - 1;
    const auto& io = plan_->io_;
    std::vector<ArenaRequest> requests;
    for (size_t i = 0; i < plan_->buffers_.size(); ++i) {
      PlanBuffer& b = plan_->buffers_[i];
      if (b.first_use < 0) throw error_of("internal: encoder plan buffer ", b.name, " is never used");
      const int id = static_cast<int>(i);
      if (id == io.tokens || id == io.positions || id == io.types || id == io.starts) b.first_use = 0;
      if (id == io.starts || b.persistent) b.last_use = last;  // read by the heads, or after the plan
      requests.push_back({b.bytes, b.first_use, b.last_use});
    }
    const ArenaLayout layout = plan_arena(requests);
    for (size_t i = 0; i < plan_->buffers_.size(); ++i) plan_->buffers_[i].offset = layout.offsets[i];
    plan_->arena_bytes_ = layout.arena_bytes;
    plan_->buffers_bytes_ = layout.requested_bytes;
  }

  std::unique_ptr<EncoderPlan> plan_;
};

std::shared_ptr<const EncoderPlan> EncoderPlan::compile(std::shared_ptr<const EncoderModel> model, const EncoderLimits& limits) {
  limits.validate(model->config());
  return EncoderPlanBuilder(std::move(model), limits).build();
}

std::string EncoderPlan::describe() const {
  const EncoderConfig& c = model_->config();
  std::ostringstream o;
  char line[512];
  o << "model: " << (c.name.empty() ? c.architecture : c.name) << " (" << c.architecture << ") — encoder only, d_model "
    << c.d_model << ", " << c.num_heads << " heads, ffn " << c.ffn_dim << ", " << c.layers << " layers, vocab "
    << c.vocab_size << ", " << norm_placement_name(c.norm_placement) << "-LN, " << ops::activation_name(c.activation)
    << ", " << model_->compute_type().name << ", kernels " << ops::isa_name(model_->isa()) << "\n";
  o << "limits: " << limits_.max_batch << " sequences, " << limits_.max_tokens
    << " tokens per batch, packed (no padding), a sequence ≤ " << limits_.max_length << " tokens, " << limits_.threads
    << " thread(s)\n";
  if (groups_.size() >= 2)
    o << "sublayers in chunks: attention (QKV, attention, out_proj) on whole sequences of ≤ " << groups_[0].rows
      << " tokens, feed-forward (fc1, fc2) on " << groups_[1].rows << " rows at a time\n";
  o << "arena: " << human_bytes(double(arena_bytes_)) << " for " << buffers_.size() << " buffers totalling "
    << human_bytes(double(buffers_bytes_)) << " (liveness sharing saves "
    << (buffers_bytes_ ? static_cast<int>(100.0 - 100.0 * double(arena_bytes_) / double(buffers_bytes_)) : 0) << "%)\n\n";
  o << "buffers (offsets in the arena; live = first..last step):\n";
  std::snprintf(line, sizeof line, "  %-3s %-24s %-5s %-18s %12s %12s  %s\n", "#", "name", "type", "shape", "bytes", "offset", "live");
  o << line;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const PlanBuffer& b = buffers_[i];
    std::string shape = "[";  // (appended: GCC 12 warns falsely on "[" + std::to_string(…))
    shape.append(std::to_string(b.rows)).append(", ").append(std::to_string(b.cols)).append("]");
    std::snprintf(line, sizeof line, "  %-3zu %-24s %-5s %-18s %12s %12zu  %d..%d\n", i, b.name.c_str(),
                  b.type == ElementType::f32 ? "f32" : "i32", shape.c_str(), human_bytes(double(b.bytes)).c_str(), b.offset,
                  b.first_use, b.last_use);
    o << line;
  }
  auto operand = [&](const Operand& op) -> std::string {
    if (op.buffer < 0) return "-";
    const PlanBuffer& b = buffers_[op.buffer];
    std::string s = b.name;
    if (op.col != 0 || op.cols != b.cols) s += "[:, " + std::to_string(op.col) + ":" + std::to_string(op.col + op.cols) + "]";
    return s;
  };
  for (const EncoderPhase phase : {EncoderPhase::body, EncoderPhase::pooler, EncoderPhase::embedding, EncoderPhase::classifier}) {
    double flops = 0, bytes = 0;
    bool any = false;
    for (const EncoderStep& s : steps_) any = any || s.phase == phase;
    if (!any) continue;
    o << "\n" << encoder_phase_name(phase)
      << (phase == EncoderPhase::body ? " (rows = the batch's tokens, packed ≤ " + std::to_string(limits_.max_tokens) + "):\n"
                                      : " (rows = sequences ≤ " + std::to_string(limits_.max_batch) + "):\n");
    std::snprintf(line, sizeof line, "  %-3s %-40s %-18s %-28s %-28s %9s %10s\n", "#", "step", "kernel", "in", "out", "FLOPs",
                  "bytes");
    o << line;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const EncoderStep& s = steps_[i];
      if (s.phase != phase) continue;
      std::string kernel = encoder_step_kind_name(s.kind);
      if (s.kind == EncoderStepKind::linear) {
        kernel = "gemm " + std::to_string(s.linear->weight.n()) + "x" + std::to_string(s.linear->weight.k());
        if (s.activation != ops::Activation::none) kernel += "+" + std::string(ops::activation_name(s.activation));
        if (s.residual.buffer >= 0) kernel += "+res";
      } else if (s.kind == EncoderStepKind::pool) {
        kernel = std::string("pool ") + pooling_name(s.pooling);
      } else if (s.kind == EncoderStepKind::attention) {
        kernel = "attention/seq";
      }
      std::snprintf(line, sizeof line, "  %-3zu %-40s %-18s %-28s %-28s %9s %10s\n", i, s.name.c_str(), kernel.c_str(),
                    operand(s.in).c_str(), operand(s.out).c_str(), human_count(s.flops).c_str(), human_bytes(s.bytes).c_str());
      o << line;
      flops += s.flops, bytes += s.bytes;
    }
    o << "  total: " << human_count(flops) << " FLOPs, " << human_bytes(bytes) << " per batch at the limits\n";
  }
  return o.str();
}

}  // namespace attend::runtime
