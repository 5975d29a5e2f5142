// POST /v1/embeddings (OpenAI's, TEI's alias /embeddings) and POST /embed (TEI's).
#include <cmath>

#include "server/response_json.hpp"
#include "server/router.hpp"

namespace attend::server {
namespace {

// What both routes ask, read from their fields.
struct EmbedRequest {
  std::vector<TextOrIds> inputs;
  bool truncate = true, from_left = false;
  int normalize = -1;
  std::int64_t dimensions = 0;  // 0: all
  std::string prompt;           // prepended to every text
};

// The model's inputs, tokenized here (on the HTTP thread) so that one over the limit
// is refused before it queues; `tokens` counts them for "usage".
std::shared_ptr<EncoderJob> embedding_job(const EncoderService& model, const EmbedRequest& r, const char* field,
                                          std::int64_t& tokens) {
  auto job = std::make_shared<EncoderJob>();
  job->task = EncoderJob::Task::embed;
  job->normalize = r.normalize;
  job->group = "embed " + std::to_string(r.normalize);
  for (std::size_t i = 0; i < r.inputs.size(); ++i) {
    const std::string what = std::string("field '") + field + "', input " + std::to_string(i);
    EncodedInput e = r.inputs[i].is_ids ? model.check_ids(r.inputs[i].ids, r.truncate, r.from_left, what)
                                        : model.encode(r.prompt + r.inputs[i].text, r.truncate, r.from_left, what);
    tokens += static_cast<std::int64_t>(e.ids.size());
    job->ids.push_back(std::move(e.ids));
  }
  job->tokens = tokens;
  return job;
}

// Matryoshka: the first `dimensions` values, L2-normalised again when the vector was.
void cut(std::vector<float>& v, std::int64_t dimensions, bool normalized) {
  if (dimensions <= 0 || dimensions >= static_cast<std::int64_t>(v.size())) return;
  v.resize(static_cast<std::size_t>(dimensions));
  if (!normalized) return;
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  const double norm = std::sqrt(sum);
  if (norm > 0)
    for (float& x : v) x = static_cast<float>(x / norm);
}

std::int64_t dimensions_of(const json& body, const EncoderService& model) {
  return optional_integer(body, "dimensions", 1, model.info().embedding_dim).value_or(0);
}

}  // namespace

void Router::openai_embeddings(const CallPtr& call) {
  const json body = parse_object(call->request.body);
  EncoderService& model = encoder_for(call, body, Capability::embed);
  EmbedRequest r;
  r.inputs = texts_or_ids(body, "input");
  if (static_cast<std::int64_t>(r.inputs.size()) > options_.max_client_batch_size)
    throw too_large("field 'input' has " + std::to_string(r.inputs.size()) + " inputs, more than the server's " +
                    "--max-client-batch-size " + std::to_string(options_.max_client_batch_size));
  const std::string format = optional_string(body, "encoding_format").value_or("float");
  if (format != "float" && format != "base64")
    throw bad_request("field 'encoding_format': must be \"float\" or \"base64\", got \"" + format + "\"");
  r.truncate = options_.auto_truncate;
  r.normalize = model.default_normalize();
  r.dimensions = dimensions_of(body, model);
  optional_string(body, "user");  // accepted (OpenAI's end-user id), checked for its type only

  auto& queue = model.queue();
  queue.announce();
  std::shared_ptr<EncoderJob> job;
  try {
    job = embedding_job(model, r, "input", call->tokens);
  } catch (...) {
    queue.withdraw();
    throw;
  }
  call->sequences = static_cast<std::int64_t>(r.inputs.size());
  const bool normalized = r.normalize == 1 || (r.normalize == -1 && model.info().normalize);
  job->done = [this, call, r, normalized, base64 = format == "base64", name = model.name()](EncoderOutcome&& out) {
    call->timing = out.timing;
    if (!out.error.empty()) return fail(call, ApiError(500, "Backend", out.error));
    std::string s = "{\"object\":\"list\",\"data\":[";
    for (std::size_t i = 0; i < out.embeddings.size(); ++i) {
      cut(out.embeddings[i], r.dimensions, normalized);
      s += i > 0 ? ",{" : "{";
      s += "\"object\":\"embedding\",\"embedding\":";
      if (base64) {
        s += '"';
        s += base64_floats(out.embeddings[i]);
        s += '"';
      } else {
        append_floats(s, out.embeddings[i]);
      }
      s += ",\"index\":" + std::to_string(i) + "}";
    }
    s += "],\"model\":";
    append_string(s, name);
    const std::string tokens = std::to_string(call->tokens);
    s += ",\"usage\":{\"prompt_tokens\":" + tokens + ",\"total_tokens\":" + tokens + "}}";
    reply_json(call, std::move(s));
  };
  submit(call, model, std::move(job));
}

void Router::tei_embed(const CallPtr& call) {
  const json body = parse_object(call->request.body);
  EncoderService& model = encoder_for(call, body, Capability::embed);
  EmbedRequest r;
  r.inputs = texts_or_ids(body, "inputs");
  if (static_cast<std::int64_t>(r.inputs.size()) > options_.max_client_batch_size)
    throw too_large("field 'inputs' has " + std::to_string(r.inputs.size()) + " inputs, more than the server's " +
                    "--max-client-batch-size " + std::to_string(options_.max_client_batch_size));
  r.truncate = truncate_of(body);
  r.from_left = from_left_of(body);
  r.normalize = optional_bool(body, "normalize").value_or(true) ? 1 : 0;  // TEI's default: normalised
  r.dimensions = dimensions_of(body, model);
  if (const auto prompt = optional_string(body, "prompt_name")) {
    const auto it = model.prompts().find(*prompt);
    if (it == model.prompts().end()) {
      std::string names;
      for (const auto& [name, text] : model.prompts()) names += (names.empty() ? "" : ", ") + name;
      throw bad_request("field 'prompt_name': '" + *prompt + "' is not one of the model's prompts (" +
                        (names.empty() ? "it has none" : names) + ")");
    }
    r.prompt = it->second;
  }

  auto& queue = model.queue();
  queue.announce();
  std::shared_ptr<EncoderJob> job;
  try {
    job = embedding_job(model, r, "inputs", call->tokens);
  } catch (...) {
    queue.withdraw();
    throw;
  }
  call->sequences = static_cast<std::int64_t>(r.inputs.size());
  job->done = [this, call, dimensions = r.dimensions, normalized = r.normalize == 1](EncoderOutcome&& out) {
    call->timing = out.timing;
    if (!out.error.empty()) return fail(call, ApiError(500, "Backend", out.error));
    std::string s = "[";
    for (std::size_t i = 0; i < out.embeddings.size(); ++i) {
      cut(out.embeddings[i], dimensions, normalized);
      if (i > 0) s += ',';
      append_floats(s, out.embeddings[i]);
    }
    s += ']';
    reply_json(call, std::move(s));
  };
  submit(call, model, std::move(job));
}

}  // namespace attend::server
