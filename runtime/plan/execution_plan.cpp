#include "plan/execution_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "plan/arena_planner.hpp"
#include "plan/plan_text.hpp"
#include "attend/error.hpp"
#include "attend/ops/isa.hpp"

namespace attend::runtime {

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::embed_source: return "embed_source";
    case StepKind::embed_target: return "embed_target";
    case StepKind::layer_norm: return "layer_norm";
    case StepKind::linear: return "linear";
    case StepKind::multiply: return "multiply";
    case StepKind::encoder_attention: return "encoder_attention";
    case StepKind::cache_store: return "cache_store";
    case StepKind::self_attention: return "self_attention";
    case StepKind::cross_attention: return "cross_attention";
    case StepKind::cross_kv_projection: return "cross_kv_projection";
    case StepKind::log_softmax: return "log_softmax";
    case StepKind::alignment: return "alignment";
  }
  return "?";
}

std::size_t element_bytes(ElementType t) { return t == ElementType::bf16 ? 2 : 4; }

// Rows of the cross K/V projection per GEMM: the fp32 output of one chunk (256 ×
// layers·2D floats: 6 MiB for Transformer-base) is all that is ever held in fp32 before
// it is scattered into the cache, and M = 256 keeps the GEMM at its full rate.
constexpr std::int64_t kCrossKvChunkRows = 256;

// Ceilings far above any real use, low enough that every size derived from the limits
// (batch × length, rows × columns × 4 bytes) fits in 64 bits: a limit from a flag can
// never overflow the arithmetic below.
constexpr std::int64_t kMaxBatch = std::int64_t{1} << 16;
constexpr std::int64_t kMaxBatchTokens = std::int64_t{1} << 24;
constexpr double kMaxPlanBytes = double(std::int64_t{1} << 40);  // 1 TiB of buffers

void PlanLimits::validate(const ModelConfig& c) const {
  auto check = [](bool ok, const char* what, std::int64_t v, const char* why) {
    if (!ok) throw error_of("plan limits: ", what, " = ", v, " ", why);
  };
  check(max_batch >= 1 && max_batch <= kMaxBatch, "max_batch", max_batch, "must be in [1, 65536]");
  check(max_batch_tokens >= 0 && max_batch_tokens <= kMaxBatchTokens, "max_batch_tokens", max_batch_tokens,
        "must be in [0, 16777216]");
  check(max_source_length >= 1, "max_source_length", max_source_length, "must be ≥ 1");
  check(max_source_length <= c.max_positions, "max_source_length", max_source_length,
        ("exceeds the model's max_positions " + std::to_string(c.max_positions)).c_str());
  check(max_target_length >= 1, "max_target_length", max_target_length, "must be ≥ 1");
  check(max_target_length <= c.max_positions, "max_target_length", max_target_length,
        ("exceeds the model's max_positions " + std::to_string(c.max_positions)).c_str());
  check(beam_size >= 1 && beam_size <= 256, "beam_size", beam_size, "must be in [1, 256]");
  check(batch_tokens() >= max_source_length, "max_batch_tokens", max_batch_tokens, "must hold one longest source");
  check(threads >= 1 && threads <= 1024, "threads", threads, "must be in [1, 1024]");
  // The largest buffers, in double (exact enough, never overflowing): the KV caches, the
  // cross-attention K/V, the logits, the encoder's feed-forward activations.
  const double T = double(batch_tokens()), R = double(decoder_rows()), D = double(c.d_model), A = double(c.attention_width());
  const double bytes = 4 * (2 * double(c.decoder_layers) * double(max_target_length) * R * A +
                            T * double(c.decoder_layers) * 2 * A + 2 * R * double(c.tgt_vocab_size) +
                            T * (double(c.ffn_dim) + 3 * D + 4 * A));
  if (bytes > kMaxPlanBytes)
    throw error_of("plan limits: batches of ", max_batch, " sentences (", batch_tokens(), " padded source tokens), ",
                   max_target_length, " target tokens and beam ", beam_size, " would need about ",
                   static_cast<std::int64_t>(bytes / double(1 << 30)), " GiB of buffers, more than the 1024 GiB a plan may take");
}

// Emits steps in program order, then derives lifetimes and places buffers.
class PlanBuilder {
 public:
  PlanBuilder(std::shared_ptr<const Model> model, const PlanLimits& limits) : plan_(new ExecutionPlan()) {
    plan_->model_ = std::move(model);
    plan_->limits_ = limits;
  }

  std::shared_ptr<const ExecutionPlan> build() {
    emit_encoder();
    emit_decoder();
    note_decoder_weights();
    place_buffers();
    return std::shared_ptr<const ExecutionPlan>(plan_.release());
  }

 private:
  const Model& m() const { return *plan_->model_; }
  const ModelConfig& c() const { return m().config(); }
  const PlanLimits& limits() const { return plan_->limits_; }

  int buffer(const std::string& name, ElementType type, std::int64_t rows, std::int64_t cols, bool persistent = false) {
    PlanBuffer b;
    b.name = name, b.type = type, b.rows = rows, b.cols = cols, b.persistent = persistent;
    b.bytes = static_cast<std::size_t>(rows * cols) * element_bytes(type);
    b.first_use = b.last_use = -1;
    plan_->buffers_.push_back(b);
    return static_cast<int>(plan_->buffers_.size()) - 1;
  }
  Operand all(int b) const { return {b, 0, plan_->buffers_[b].cols}; }
  Operand cols(int b, std::int64_t col, std::int64_t n) const { return {b, col, n}; }

  std::int64_t rows_of(Phase p) const { return p == Phase::encoder ? limits().batch_tokens() : limits().decoder_rows(); }

  void add(PlanStep s) {
    s.threads = limits().threads;
    const double rows = static_cast<double>(rows_of(s.phase));
    const double D = static_cast<double>(c().d_model), A = static_cast<double>(c().attention_width());
    switch (s.kind) {
      case StepKind::linear:
      case StepKind::cross_kv_projection: {
        const double N = static_cast<double>(s.linear->weight.n()), K = static_cast<double>(s.linear->weight.k());
        s.flops = 2 * rows * N * K;
        s.bytes = 4 * (N * K + rows * (K + N * (s.residual.buffer >= 0 ? 2 : 1)));
        break;
      }
      case StepKind::encoder_attention: {
        const double S = static_cast<double>(limits().max_source_length);
        s.flops = 4 * rows * S * A;
        s.bytes = 4 * rows * 4 * A;
        break;
      }
      case StepKind::self_attention:
      case StepKind::cross_attention: {
        const double L = static_cast<double>(s.kind == StepKind::self_attention ? limits().max_target_length
                                                                                : limits().max_source_length);
        s.flops = 4 * rows * L * A;
        s.bytes = rows * (double(ops::kv_type_bytes(plan_->io_.kv_type)) * 2 * L * A + 4 * 2 * A);
        break;
      }
      case StepKind::alignment: {  // its cost when a decode asks for attention (left out of the totals)
        const double S = static_cast<double>(limits().max_source_length);
        const double heads = static_cast<double>(c().alignment_head_count());
        s.flops = 6 * rows * S * heads * static_cast<double>(c().head_dim());
        s.bytes = 4 * rows * (S * heads * static_cast<double>(c().head_dim()) + S);
        break;
      }
      case StepKind::log_softmax:
        s.flops = 4 * rows * static_cast<double>(s.in.cols);
        s.bytes = 8 * rows * static_cast<double>(s.in.cols);
        break;
      default:
        s.flops = 8 * rows * D;
        s.bytes = 12 * rows * D;
    }
    const int index = static_cast<int>(plan_->steps_.size());
    for (const Operand* o : {&s.in, &s.out, &s.residual, &s.scratch}) touch(o->buffer, index);
    for (int b : implicit_buffers(s.kind)) touch(b, index);
    plan_->steps_.push_back(std::move(s));
  }

  // Buffers a step kind reads besides its operands.
  std::vector<int> implicit_buffers(StepKind k) const {
    const auto& io = plan_->io_;
    switch (k) {
      case StepKind::embed_source: return {io.source_positions};
      case StepKind::encoder_attention: return {io.source_lengths};
      case StepKind::embed_target: return {io.target_positions, io.zero_embedding};
      case StepKind::cache_store: return {io.self_keys, io.self_values};
      case StepKind::self_attention: return {io.self_keys, io.self_values, io.self_rows, io.self_lengths, io.query_positions};
      case StepKind::cross_attention:
      case StepKind::alignment: return {io.cross_kv, io.cross_rows, io.cross_lengths};
      default: return {};
    }
  }

  void touch(int b, int step) {
    if (b < 0) return;
    PlanBuffer& buf = plan_->buffers_[b];
    if (buf.first_use < 0) buf.first_use = step;
    buf.last_use = std::max(buf.last_use, step);
  }

  PlanStep step(StepKind kind, Phase phase, std::string name, Operand in, Operand out) {
    PlanStep s;
    s.kind = kind, s.phase = phase, s.name = std::move(name), s.in = in, s.out = out;
    return s;
  }
  void norm(Phase p, const std::string& name, const LayerNormWeights& w, Operand in, Operand out, std::int64_t layer) {
    PlanStep s = step(StepKind::layer_norm, p, name, in, out);
    s.norm = &w, s.layer = layer;
    add(s);
  }
  void linear(Phase p, const std::string& name, const Linear& l, Operand in, Operand out, std::int64_t layer,
              bool residual = false, ops::Activation act = ops::Activation::none) {
    PlanStep s = step(StepKind::linear, p, name, in, out);
    s.linear = &l, s.layer = layer, s.activation = act;
    if (residual) s.residual = out;  // out = in·Wᵀ + b + out
    add(s);
  }

  // One residual sublayer: x += body(LN(x)) when pre-LN, x = LN(x + body(x)) when
  // post-LN. `body` gets the operand to read and must end with a residual linear into x.
  template <class Body>
  void sublayer(Phase p, const std::string& norm_name, const LayerNormWeights& w, int x, int normed, std::int64_t layer,
                const Body& body) {
    const bool pre = c().norm_placement == NormPlacement::pre;
    if (pre) norm(p, norm_name, w, all(x), all(normed), layer);
    body(all(pre ? normed : x));
    if (!pre) norm(p, norm_name, w, all(x), all(x), layer);
  }

  // Gated (GLU) layers: hidden = act(fc1(x)) ⊙ fc1_noact(x), the gate in `gate`.
  void feed_forward(Phase p, const std::string& prefix, const Linear& fc1, const Linear& fc1_noact, const Linear& fc2,
                    const LayerNormWeights& w, int x, int normed, int hidden, int gate, std::int64_t layer) {
    sublayer(p, prefix + "final_layer_norm", w, x, normed, layer, [&](Operand in) {
      linear(p, prefix + "fc1", fc1, in, all(hidden), layer, false, c().activation);
      if (c().ffn_gated) {
        linear(p, prefix + "fc1_noact", fc1_noact, in, all(gate), layer);
        PlanStep g = step(StepKind::multiply, p, prefix + "ffn_gate", all(gate), all(hidden));
        g.layer = layer;
        add(g);
      }
      linear(p, prefix + "fc2", fc2, all(hidden), all(x), layer, true);
    });
  }

  void emit_encoder() {
    const Phase P = Phase::encoder;
    const std::int64_t T = limits().batch_tokens(), D = c().d_model, A = c().attention_width(), F = c().ffn_dim,
                       L = c().decoder_layers;
    auto& io = plan_->io_;
    io.source_tokens = buffer("source.tokens", ElementType::i32, T, 1);
    io.source_positions = buffer("source.positions", ElementType::i32, T, 1);
    io.source_lengths = buffer("source.lengths", ElementType::i32, limits().max_batch, 1);
    const int x = buffer("encoder.x", ElementType::f32, T, D);
    // Post-LN layers normalise in place; a separate normed copy serves pre-LN and the final norm.
    const bool normed = c().norm_placement == NormPlacement::pre || c().encoder_final_norm;
    const int h = normed ? buffer("encoder.normed", ElementType::f32, T, D) : -1;
    const int qkv = buffer("encoder.qkv", ElementType::f32, T, 3 * A);
    const int ctx = buffer("encoder.context", ElementType::f32, T, A);
    const int ffn = buffer("encoder.ffn", ElementType::f32, T, F);
    const int gate = c().ffn_gated ? buffer("encoder.ffn_gate", ElementType::f32, T, F) : -1;
    io.kv_type = m().compute_type().kv_cache;
    const ElementType kv = io.kv_type == ops::KvType::bf16 ? ElementType::bf16 : ElementType::f32;
    io.cross_kv = buffer("cross.kv", kv, T, L * 2 * A, true);
    const int chunk = buffer("cross.kv_chunk", ElementType::f32, std::min(T, kCrossKvChunkRows), L * 2 * A);

    add(step(StepKind::embed_source, P, "encoder.embed", all(io.source_tokens), all(x)));
    if (c().layernorm_embedding) norm(P, "encoder.layernorm_embedding", m().source_embedding_norm, all(x), all(x), -1);
    for (std::int64_t l = 0; l < c().encoder_layers; ++l) {
      const EncoderLayer& w = m().encoder[l];
      const std::string p = tensor_names::encoder_layer(l);
      sublayer(P, p + "self_attn_layer_norm", w.self_attn_norm, x, h, l, [&](Operand in) {
        linear(P, p + "self_attn.qkv_proj", w.qkv, in, all(qkv), l);
        PlanStep a = step(StepKind::encoder_attention, P, p + "self_attn", all(qkv), all(ctx));
        a.layer = l;
        add(a);
        linear(P, p + "self_attn.out_proj", w.out, all(ctx), all(x), l, true);
      });
      feed_forward(P, p, w.fc1, w.fc1_noact, w.fc2, w.ffn_norm, x, h, ffn, gate, l);
    }
    int memory = x;
    if (c().encoder_final_norm) {
      norm(P, "encoder.layer_norm", m().encoder_norm, all(x), all(h), -1);
      memory = h;
    }
    PlanStep kv_proj = step(StepKind::cross_kv_projection, P, "decoder.cross_attn.kv_proj (all layers)", all(memory), all(io.cross_kv));
    kv_proj.linear = &m().cross_kv, kv_proj.scratch = all(chunk);
    add(kv_proj);
  }

  void emit_decoder() {
    const Phase P = Phase::decoder;
    const std::int64_t R = limits().decoder_rows(), T = limits().max_target_length;
    const std::int64_t D = c().d_model, A = c().attention_width(), F = c().ffn_dim, L = c().decoder_layers,
                       V = c().tgt_vocab_size;
    auto& io = plan_->io_;
    io.target_tokens = buffer("target.tokens", ElementType::i32, R, 1, true);
    io.target_positions = buffer("target.positions", ElementType::i32, R, 1, true);
    io.query_positions = buffer("target.query_positions", ElementType::i32, R, 1, true);
    io.zero_embedding = buffer("target.zero_embedding", ElementType::i32, R, 1, true);
    io.self_rows = buffer("self.row_table", ElementType::i32, R, T, true);
    io.self_lengths = buffer("self.lengths", ElementType::i32, R, 1, true);
    io.cross_rows = buffer("cross.rows", ElementType::i32, R, 1, true);
    io.cross_lengths = buffer("cross.lengths", ElementType::i32, R, 1, true);
    const ElementType kv = io.kv_type == ops::KvType::bf16 ? ElementType::bf16 : ElementType::f32;
    io.self_keys = buffer("self.keys", kv, L * T * R, A, true);
    io.self_values = buffer("self.values", kv, L * T * R, A, true);
    const int y = buffer("decoder.x", ElementType::f32, R, D);
    const bool normed = c().norm_placement == NormPlacement::pre || c().decoder_final_norm;
    const int g = normed ? buffer("decoder.normed", ElementType::f32, R, D) : -1;
    const int qkv = buffer("decoder.qkv", ElementType::f32, R, 3 * A);
    const int ctx = buffer("decoder.context", ElementType::f32, R, A);
    const int q = buffer("decoder.cross_q", ElementType::f32, R, A);
    const int ffn = buffer("decoder.ffn", ElementType::f32, R, F);
    const int gate = c().ffn_gated ? buffer("decoder.ffn_gate", ElementType::f32, R, F) : -1;
    io.logits = buffer("decoder.logits", ElementType::f32, R, V, true);  // readable after the step
    io.log_probs = buffer("decoder.log_probs", ElementType::f32, R, V, true);
    io.alignment = buffer("decoder.alignment", ElementType::f32, R, limits().max_source_length, true);

    add(step(StepKind::embed_target, P, "decoder.embed", all(io.target_tokens), all(y)));
    if (c().layernorm_embedding) norm(P, "decoder.layernorm_embedding", m().target_embedding_norm, all(y), all(y), -1);
    for (std::int64_t l = 0; l < L; ++l) {
      const DecoderLayer& w = m().decoder[l];
      const std::string p = tensor_names::decoder_layer(l);
      sublayer(P, p + "self_attn_layer_norm", w.self_attn_norm, y, g, l, [&](Operand in) {
        linear(P, p + "self_attn.qkv_proj", w.qkv, in, all(qkv), l);
        PlanStep store = step(StepKind::cache_store, P, p + "self_attn.cache_store", cols(qkv, A, 2 * A), Operand{});
        store.layer = l;
        add(store);
        PlanStep sa = step(StepKind::self_attention, P, p + "self_attn", cols(qkv, 0, A), all(ctx));
        sa.layer = l;
        add(sa);
        linear(P, p + "self_attn.out_proj", w.self_out, all(ctx), all(y), l, true);
      });
      sublayer(P, p + "cross_attn_layer_norm", w.cross_attn_norm, y, g, l, [&](Operand in) {
        linear(P, p + "cross_attn.q_proj", w.cross_q, in, all(q), l);
        PlanStep ca = step(StepKind::cross_attention, P, p + "cross_attn", all(q), all(ctx));
        ca.layer = l;
        add(ca);
        if (l == c().alignment_layer_index()) {  // return_attention's probabilities, computed only when asked
          PlanStep al = step(StepKind::alignment, P, p + "cross_attn.alignment", all(q), all(io.alignment));
          al.layer = l;
          add(al);
        }
        linear(P, p + "cross_attn.out_proj", w.cross_out, all(ctx), all(y), l, true);
      });
      feed_forward(P, p, w.fc1, w.fc1_noact, w.fc2, w.ffn_norm, y, g, ffn, gate, l);
    }
    int last = y;
    if (c().decoder_final_norm) {
      norm(P, "decoder.layer_norm", m().decoder_norm, all(y), all(g), -1);
      last = g;
    }
    linear(P, "output_projection", m().output, all(last), all(io.logits), -1);
    plan_->steps_.back().alpha = c().decoder_output_scale;  // (s·x)·Wᵀ = s·(x·Wᵀ)
    add(step(StepKind::log_softmax, P, "decoder.log_softmax", all(io.logits), all(io.log_probs)));
  }

  void note_decoder_weights() {
    for (const PlanStep& s : plan_->steps_)
      if (s.phase == Phase::decoder && s.linear != nullptr)
        plan_->decoder_weight_bytes_ = std::max(plan_->decoder_weight_bytes_, ops::weight_type_bytes(s.linear->weight.type()));
  }

  void place_buffers() {
    auto& steps = plan_->steps_;
    const int first_decoder = static_cast<int>(std::find_if(steps.begin(), steps.end(), [](const PlanStep& s) {
                                                 return s.phase == Phase::decoder;
                                               }) - steps.begin());
    const int last = static_cast<int>(steps.size()) - 1;
    // Threads that split the decoder's rows run its steps out of step with each other:
    // one thread's step j may run while another's step i < j does, so no two buffers a
    // decoder step uses may share bytes.
    const bool rows_split = plan_->decoder_row_threads(limits().decoder_rows()) > 1;
    std::vector<ArenaRequest> requests;
    for (PlanBuffer& b : plan_->buffers_) {
      if (b.first_use < 0) throw error_of("internal: plan buffer ", b.name, " is never used");
      // Inputs the driver fills are alive from their phase's first step.
      if (b.name.rfind("source.", 0) == 0) b.first_use = 0;
      if (b.persistent) {
        b.first_use = std::min(b.first_use, first_decoder);
        b.last_use = last;
      }
      if (rows_split && b.last_use >= first_decoder) {
        b.first_use = std::min(b.first_use, first_decoder);
        b.last_use = last;
      }
      requests.push_back({b.bytes, b.first_use, b.last_use});
    }
    const ArenaLayout layout = plan_arena(requests);
    for (size_t i = 0; i < plan_->buffers_.size(); ++i) plan_->buffers_[i].offset = layout.offsets[i];
    plan_->arena_bytes_ = layout.arena_bytes;
    plan_->buffers_bytes_ = layout.requested_bytes;
  }

  std::unique_ptr<ExecutionPlan> plan_;
};

int ExecutionPlan::decoder_row_threads(std::int64_t rows) const {
  const int threads = limits_.threads;
  const std::int64_t rows_per_thread = kRowsPerWeightByte * static_cast<std::int64_t>(decoder_weight_bytes_);
  return threads > 1 && rows >= threads * rows_per_thread ? threads : 1;
}

std::shared_ptr<const ExecutionPlan> ExecutionPlan::compile(std::shared_ptr<const Model> model, const PlanLimits& limits) {
  limits.validate(model->config());
  return PlanBuilder(std::move(model), limits).build();
}

std::string ExecutionPlan::describe() const {
  const ModelConfig& c = model_->config();
  std::ostringstream o;
  char line[512];
  o << "model: " << (c.name.empty() ? "(unnamed)" : c.name) << " — d_model " << c.d_model << ", " << c.num_heads
    << " heads";
  if (c.attention_width() != c.d_model) o << " × " << c.head_dim() << " (attention " << c.attention_width() << ")";
  o << ", ffn " << c.ffn_dim << ", " << c.encoder_layers << "+" << c.decoder_layers << " layers, vocab "
    << c.src_vocab_size << "/" << c.tgt_vocab_size << ", " << norm_placement_name(c.norm_placement) << "-LN, "
    << ops::activation_name(c.activation) << ", kernels " << ops::isa_name(model_->isa()) << "\n";
  o << "limits: batch " << limits_.max_batch << ", source ≤ " << limits_.max_source_length << " tokens, "
    << limits_.batch_tokens() << " padded source tokens per batch, target ≤ " << limits_.max_target_length
    << " tokens, beam " << limits_.beam_size << ", " << limits_.threads << " thread(s)\n";
  o << "arena: " << human_bytes(double(arena_bytes_)) << " for " << buffers_.size() << " buffers totalling "
    << human_bytes(double(buffers_bytes_)) << " (liveness sharing saves "
    << (buffers_bytes_ ? static_cast<int>(100.0 - 100.0 * double(arena_bytes_) / double(buffers_bytes_)) : 0) << "%)\n\n";

  o << "buffers (offsets in the arena; live = first..last step):\n";
  std::snprintf(line, sizeof line, "  %-3s %-22s %-5s %-18s %12s %12s  %s\n", "#", "name", "type", "shape", "bytes", "offset",
                "live");
  o << line;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const PlanBuffer& b = buffers_[i];
    std::string shape = "[";
    shape.append(std::to_string(b.rows)).append(", ").append(std::to_string(b.cols)).append("]");
    std::snprintf(line, sizeof line, "  %-3zu %-22s %-5s %-18s %12s %12zu  %d..%d%s\n", i, b.name.c_str(),
                  b.type == ElementType::f32 ? "f32" : b.type == ElementType::bf16 ? "bf16" : "i32", shape.c_str(), human_bytes(double(b.bytes)).c_str(), b.offset,
                  b.first_use, b.last_use, b.persistent ? " (carried across decoder steps)" : "");
    o << line;
  }

  auto operand = [&](const Operand& op) -> std::string {
    if (op.buffer < 0) return "-";
    const PlanBuffer& b = buffers_[op.buffer];
    std::string s = b.name;
    if (op.col != 0 || op.cols != b.cols) s += "[:, " + std::to_string(op.col) + ":" + std::to_string(op.col + op.cols) + "]";
    return s + "@" + std::to_string(b.offset + static_cast<std::size_t>(op.col) * element_bytes(b.type));
  };
  double totals[2][2] = {};
  for (const Phase phase : {Phase::encoder, Phase::decoder}) {
    o << (phase == Phase::encoder ? "\nencoder phase (once per batch; rows = the batch's source tokens, unpadded ≤ "
                                  : "\ndecoder phase (once per generated token; rows = live hypotheses ≤ ")
      << (phase == Phase::encoder ? limits_.batch_tokens() : limits_.decoder_rows()) << "):\n";
    std::snprintf(line, sizeof line, "  %-3s %-44s %-18s %-34s %-30s %9s %10s %3s\n", "#", "step", "kernel", "in", "out",
                  "FLOPs", "bytes", "thr");
    o << line;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const PlanStep& s = steps_[i];
      if (s.phase != phase) continue;
      std::string kernel = step_kind_name(s.kind);
      if (s.kind == StepKind::linear || s.kind == StepKind::cross_kv_projection) {
        kernel = "gemm ";
        kernel.append(std::to_string(s.linear->weight.n())).append("x").append(std::to_string(s.linear->weight.k()));
        if (s.kind == StepKind::cross_kv_projection) kernel += io_.kv_type == ops::KvType::bf16 ? "→kv bf16" : "→kv";
        if (s.activation != ops::Activation::none) kernel += "+" + std::string(ops::activation_name(s.activation));
        if (s.residual.buffer >= 0) kernel += "+res";
      }
      std::snprintf(line, sizeof line, "  %-3zu %-44s %-18s %-34s %-30s %9s %10s %3d\n", i, s.name.c_str(), kernel.c_str(),
                    operand(s.in).c_str(), operand(s.out).c_str(), human_count(s.flops).c_str(),
                    human_bytes(s.bytes).c_str(), s.threads);
      o << line;
      if (s.kind == StepKind::alignment) continue;  // runs only for return_attention and coverage
      totals[int(phase)][0] += s.flops;
      totals[int(phase)][1] += s.bytes;
    }
    o << "  total: " << human_count(totals[int(phase)][0]) << " FLOPs, " << human_bytes(totals[int(phase)][1])
      << (phase == Phase::encoder ? " per batch at the limits\n" : " per decoder step at the limits\n");
  }
  return o.str();
}

}  // namespace attend::runtime
