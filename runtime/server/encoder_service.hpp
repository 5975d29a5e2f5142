// An encoder-only model served: embeddings (/v1/embeddings, /embed), classification
// (/predict) and reranking (/rerank, a cross-encoder). Inputs are tokenized on the HTTP
// thread (so that a text over the model's limit is refused before it queues) and batched
// across requests: one Encoder::embed_ids or classify_ids call per batch — the calls
// `attend embed` and `attend classify` make, so a request's vectors are the CLI's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attend/server.hpp"
#include "server/model_service.hpp"

namespace attend::runtime {
class HfTokenizer;
struct Encoding;
struct TokenizeOptions;
}

namespace attend::server {

// A text (or pair) as the model reads it.
struct EncodedInput {
  std::vector<std::int32_t> ids, types;
  std::vector<std::string> tokens;
};

struct EncoderOutcome {
  std::vector<std::vector<float>> embeddings;
  std::vector<Classification> classes;
  std::string error;  // the engine failed (500)
  JobTiming timing;
};

struct EncoderJob : Job {
  enum class Task { embed, classify } task = Task::embed;
  int normalize = -1;  // embed: EmbedOptions::normalize
  std::vector<std::vector<std::int32_t>> ids, types;
  std::function<void(EncoderOutcome&&)> done;  // on an HTTP thread
};

class EncoderService final : public ModelService {
 public:
  EncoderService(const ServedModel& spec, const runtime::RequestBatchLimits& limits);
  ~EncoderService() override;

  std::string kind() const override;
  const EncoderInfo& info() const { return info_; }
  const Encoder& encoder() const { return *encoder_; }
  int default_normalize() const { return normalize_; }
  std::string compute_type() const { return compute_type_; }
  bool has_tokenizer() const { return tokenizer_ != nullptr; }
  // sentence-transformers' prompts (config_sentence_transformers.json): name → text.
  const std::map<std::string, std::string>& prompts() const { return prompts_; }
  const std::string& default_prompt_name() const { return default_prompt_name_; }

  // A text through the model's tokenizer: cut to the model's max_length when `truncate`
  // (from the start when `from_left`), else a 422 naming `what` if it is longer.
  EncodedInput encode(const std::string& text, bool truncate, bool from_left, const std::string& what) const;
  EncodedInput encode_pair(const std::string& a, const std::string& b, bool truncate, bool from_left,
                           const std::string& what) const;
  // Token ids as given: each checked against the vocabulary (400), cut or refused (422)
  // as a text is.
  EncodedInput check_ids(std::vector<std::int32_t> ids, bool truncate, bool from_left, const std::string& what) const;
  // The tokens of a text without truncation (TEI's /tokenize), with or without the
  // special tokens; `special` marks those the post-processor added.
  EncodedInput tokens_of(const std::string& text, bool add_special_tokens, std::vector<bool>& special) const;
  // Ids back to text through the tokenizer's decoder (TEI's /decode); an id it lacks is
  // a 400 naming `what`.
  std::string decode(const std::vector<std::int32_t>& ids, bool skip_special_tokens, const std::string& what) const;

  // Queues a job — cut, when it has several inputs and the model several lanes, into a
  // part per lane of about equal tokens (queued together), so that a lone request of 32
  // texts computes on every lane rather than one; its caller hears once, when every
  // part is done, with the results in order.
  bool submit(std::shared_ptr<Job> job) override;

 private:
  void load() override;
  void run_batch(const std::vector<std::shared_ptr<Job>>& jobs, int lane, int threads) override;
  EncodedInput encoded(runtime::Encoding&& e, bool truncate, const std::string& what) const;
  void tokenize_options(bool truncate, bool from_left, runtime::TokenizeOptions& o) const;

  ServedModel spec_;
  std::optional<Encoder> encoder_;
  const runtime::HfTokenizer* tokenizer_ = nullptr;
  EncoderInfo info_;
  int normalize_ = -1;
  std::string compute_type_;
  std::set<std::int32_t> special_ids_;  // the ids the post-processor adds
  std::map<std::string, std::string> prompts_;
  std::string default_prompt_name_;
};

}  // namespace attend::server
