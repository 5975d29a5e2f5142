// POST /rerank and POST /predict (TEI's): a cross-encoder's relevance of texts to a
// query, and a classifier's labels.
#include <algorithm>
#include <numeric>

#include "server/response_json.hpp"
#include "server/router.hpp"

namespace attend::server {
namespace {

// A text or a pair, as /predict takes them.
struct Sequence {
  std::string first, second;
  bool pair = false;
};

// TEI's PredictInput: "text", ["a", "b"] (a pair), or a batch [["a"], ["a", "b"], …].
std::vector<Sequence> predict_inputs(const json& body, bool& single) {
  const auto it = body.find("inputs");
  if (it == body.end() || it->is_null())
    throw bad_request("field 'inputs' is required: a text, a pair [text, text], or a list of them");
  const json& v = *it;
  auto sequence = [](const json& item, const std::string& where) {
    if (!item.is_array() || item.empty() || item.size() > 2)
      throw bad_request(where + ": must be [text] or a pair [text, text], got " + kind_of(item));
    for (const json& s : item)
      if (!s.is_string()) throw bad_request(where + ": must hold strings, got " + kind_of(s));
    return item.size() == 2 ? Sequence{item[0].get<std::string>(), item[1].get<std::string>(), true}
                            : Sequence{item[0].get<std::string>(), {}, false};
  };
  single = true;
  if (v.is_string()) return {{v.get<std::string>(), {}, false}};
  if (!v.is_array()) throw bad_request("field 'inputs': must be a text, a pair [text, text], or a list of them, got " + kind_of(v));
  if (v.empty()) throw empty_input("field 'inputs' is empty: give at least one input");
  if (v[0].is_string()) return {sequence(v, "field 'inputs'")};
  single = false;
  std::vector<Sequence> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(sequence(v[i], "field 'inputs', item " + std::to_string(i)));
  return out;
}

void append_predictions(std::string& s, const Classification& c, const std::vector<std::string>& labels, bool raw) {
  const std::vector<float>& values = raw ? c.logits : c.scores;
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] > values[b]; });
  s += '[';
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k > 0) s += ',';
    s += "{\"score\":";
    append_float(s, values[order[k]]);
    s += ",\"label\":";
    append_string(s, order[k] < labels.size() ? labels[order[k]] : std::to_string(order[k]));
    s += '}';
  }
  s += ']';
}

}  // namespace

void Router::rerank(const CallPtr& call) {
  const json body = parse_object(call->request.body);
  EncoderService& model = encoder_for(call, body, Capability::rerank);
  const std::string query = required_string(body, "query");
  const std::vector<std::string> texts = string_list(body, "texts");
  if (static_cast<std::int64_t>(texts.size()) > options_.max_client_batch_size)
    throw too_large("field 'texts' has " + std::to_string(texts.size()) + " texts, more than the server's " +
                    "--max-client-batch-size " + std::to_string(options_.max_client_batch_size));
  const bool truncate = truncate_of(body), from_left = from_left_of(body);
  const bool raw = optional_bool(body, "raw_scores").value_or(false);
  const bool return_text = optional_bool(body, "return_text").value_or(false);

  auto& queue = model.queue();
  queue.announce();
  auto job = std::make_shared<EncoderJob>();
  try {
    job->task = EncoderJob::Task::classify;
    job->group = "classify";
    for (std::size_t i = 0; i < texts.size(); ++i) {
      EncodedInput e = model.encode_pair(query, texts[i], truncate, from_left, "field 'texts', text " + std::to_string(i));
      call->tokens += static_cast<std::int64_t>(e.ids.size());
      job->ids.push_back(std::move(e.ids));
      job->types.push_back(std::move(e.types));
    }
    job->tokens = call->tokens;
  } catch (...) {
    queue.withdraw();
    throw;
  }
  call->sequences = static_cast<std::int64_t>(texts.size());
  job->done = [this, call, raw, return_text, texts](EncoderOutcome&& out) {
    call->timing = out.timing;
    if (!out.error.empty()) return fail(call, ApiError(500, "Backend", out.error));
    std::vector<float> scores;
    for (const Classification& c : out.classes) scores.push_back(raw ? c.logits.at(0) : c.scores.at(0));
    std::vector<std::size_t> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
    std::string s = "[";
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (k > 0) s += ',';
      s += "{\"index\":" + std::to_string(order[k]);
      if (return_text) {
        s += ",\"text\":";
        append_string(s, texts[order[k]]);
      }
      s += ",\"score\":";
      append_float(s, scores[order[k]]);
      s += '}';
    }
    s += ']';
    reply_json(call, std::move(s));
  };
  submit(call, model, std::move(job));
}

void Router::predict(const CallPtr& call) {
  const json body = parse_object(call->request.body);
  EncoderService& model = encoder_for(call, body, Capability::classify);
  bool single = true;
  const std::vector<Sequence> inputs = predict_inputs(body, single);
  if (static_cast<std::int64_t>(inputs.size()) > options_.max_client_batch_size)
    throw too_large("field 'inputs' has " + std::to_string(inputs.size()) + " inputs, more than the server's " +
                    "--max-client-batch-size " + std::to_string(options_.max_client_batch_size));
  const bool truncate = truncate_of(body), from_left = from_left_of(body);
  const bool raw = optional_bool(body, "raw_scores").value_or(false);

  auto& queue = model.queue();
  queue.announce();
  auto job = std::make_shared<EncoderJob>();
  try {
    job->task = EncoderJob::Task::classify;
    job->group = "classify";
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::string what = single ? "field 'inputs'" : "field 'inputs', item " + std::to_string(i);
      EncodedInput e = inputs[i].pair ? model.encode_pair(inputs[i].first, inputs[i].second, truncate, from_left, what)
                                      : model.encode(inputs[i].first, truncate, from_left, what);
      call->tokens += static_cast<std::int64_t>(e.ids.size());
      job->ids.push_back(std::move(e.ids));
      job->types.push_back(std::move(e.types));
    }
    job->tokens = call->tokens;
  } catch (...) {
    queue.withdraw();
    throw;
  }
  call->sequences = static_cast<std::int64_t>(inputs.size());
  job->done = [this, call, raw, single, labels = model.info().labels](EncoderOutcome&& out) {
    call->timing = out.timing;
    if (!out.error.empty()) return fail(call, ApiError(500, "Backend", out.error));
    std::string s;
    if (single) {
      append_predictions(s, out.classes.at(0), labels, raw);
    } else {
      s = "[";
      for (std::size_t i = 0; i < out.classes.size(); ++i) {
        if (i > 0) s += ',';
        append_predictions(s, out.classes[i], labels, raw);
      }
      s += ']';
    }
    reply_json(call, std::move(s));
  };
  submit(call, model, std::move(job));
}

}  // namespace attend::server
