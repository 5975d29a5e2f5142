#include "server/response_json.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <thread>

#include "server/encoder_service.hpp"
#include "server/translation_service.hpp"

namespace attend::server {

void append_float(std::string& out, float v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, ec == std::errc() ? end : buffer);
}

void append_floats(std::string& out, std::span<const float> values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    append_float(out, values[i]);
  }
  out += ']';
}

std::string base64_floats(std::span<const float> values) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(values.size() * sizeof(float), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto n = (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                   (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                   static_cast<unsigned char>(bytes[i + 2]);
    out += alphabet[(n >> 18) & 63], out += alphabet[(n >> 12) & 63], out += alphabet[(n >> 6) & 63], out += alphabet[n & 63];
  }
  if (const std::size_t left = bytes.size() - i; left > 0) {
    std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (left == 2) n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += alphabet[(n >> 18) & 63], out += alphabet[(n >> 12) & 63];
    out += left == 2 ? alphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

void append_string(std::string& out, const std::string& text) {
  out += nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::ordered_json model_info_json(const ModelService& model, const ServerOptions& options) {
  nlohmann::ordered_json j;
  j["model_id"] = model.directory();
  j["model_sha"] = nullptr;
  j["served_model_name"] = model.name();
  j["ready"] = model.ready();
  if (const auto* e = dynamic_cast<const EncoderService*>(&model); e && e->ready()) {
    const EncoderInfo& i = e->info();
    j["model_dtype"] = e->compute_type();
    if (i.labels.empty()) {
      j["model_type"] = {{"embedding", {{"pooling", i.pooling}}}};
    } else {
      nlohmann::ordered_json id2label, label2id;
      for (std::size_t k = 0; k < i.labels.size(); ++k) {
        id2label[std::to_string(k)] = i.labels[k];
        label2id[i.labels[k]] = k;
      }
      j["model_type"] = {{e->kind(), {{"id2label", id2label}, {"label2id", label2id}}}};
    }
    j["max_input_length"] = i.max_length;
    j["embedding_dimension"] = i.embedding_dim;
    j["normalize"] = e->default_normalize() == -1 ? i.normalize : e->default_normalize() == 1;
  } else if (const auto* t = dynamic_cast<const TranslationService*>(&model); t && t->ready()) {
    j["model_dtype"] = t->model().info().compute_type;
    j["model_type"] = {{"translation", {{"max_target_length", t->translator().options().max_target_length},
                                        {"max_beam_size", t->translator().options().max_beam_size}}}};
    j["max_input_length"] = t->translator().max_source_length();
  }
  j["max_concurrent_requests"] = options.max_concurrent_requests;
  j["max_batch_tokens"] = options.max_batch_tokens;
  j["max_batch_requests"] = options.max_batch_requests > 0 ? nlohmann::ordered_json(options.max_batch_requests) : nullptr;
  j["max_client_batch_size"] = options.max_client_batch_size;
  j["auto_truncate"] = options.auto_truncate;
  j["tokenization_workers"] = options.http_threads;
  // attend's own: batches the model runs at once (lanes), and the threads of each.
  j["batches_at_once"] = model.lanes();
  j["threads_per_batch"] = model.threads_per_lane();
  j["version"] = version();
  j["sha"] = nullptr;
  j["docker_label"] = nullptr;
  return j;
}

}  // namespace attend::server
