// POST /tokenize and POST /decode (TEI's): a model's tokenizer, without the model. Both
// answer on the HTTP thread (no queue: there is nothing to batch).
#include "server/response_json.hpp"
#include "server/router.hpp"

namespace attend::server {

void Router::tokenize(const CallPtr& call) {
  const json body = parse_object(call->request.body);
  EncoderService& model = encoder_for(call, body, Capability::tokenize);
  const std::vector<std::string> texts = string_list(body, "inputs");
  if (static_cast<std::int64_t>(texts.size()) > options_.max_client_batch_size)
    throw too_large("field 'inputs' has " + std::to_string(texts.size()) + " texts, more than the server's " +
                    "--max-client-batch-size " + std::to_string(options_.max_client_batch_size));
  const bool special_tokens = optional_bool(body, "add_special_tokens").value_or(true);
  std::string prompt;
  if (const auto name = optional_string(body, "prompt_name")) {
    const auto it = model.prompts().find(*name);
    if (it == model.prompts().end()) throw bad_request("field 'prompt_name': '" + *name + "' is not one of the model's prompts");
    prompt = it->second;
  }
  // TEI's SimpleToken: id, text, special, and start/stop — the character offsets, which
  // attend's tokenizer does not track: null, as TEI's schema allows.
  std::string s = "[";
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::vector<bool> special;
    const EncodedInput e = model.tokens_of(prompt + texts[i], special_tokens, special);
    call->sequences += 1, call->tokens += static_cast<std::int64_t>(e.ids.size());
    s += i > 0 ? ",[" : "[";
    for (std::size_t k = 0; k < e.ids.size(); ++k) {
      if (k > 0) s += ',';
      s += "{\"id\":" + std::to_string(e.ids[k]) + ",\"text\":";
      append_string(s, e.tokens[k]);
      s += special[k] ? ",\"special\":true" : ",\"special\":false";
      s += ",\"start\":null,\"stop\":null}";
    }
    s += ']';
  }
  s += ']';
  reply_json(call, std::move(s));
}

void Router::decode(const CallPtr& call) {
  const json body = parse_object(call->request.body);
  EncoderService& model = encoder_for(call, body, Capability::tokenize);
  const auto it = body.find("ids");
  if (it == body.end() || it->is_null()) throw bad_request("field 'ids' is required: token ids, or a list of them");
  // TEI's InputIds: [ids…] or [[ids…], …].
  std::vector<std::vector<std::int32_t>> sequences;
  const bool batch = it->is_array() && !it->empty() && it->at(0).is_array();
  const json wrapped = batch ? *it : json::array({*it});
  if (!it->is_array()) throw bad_request("field 'ids': must be token ids or a list of them, got " + kind_of(*it));
  for (std::size_t i = 0; i < wrapped.size(); ++i)
    sequences.push_back(token_ids(wrapped[i], batch ? "field 'ids', item " + std::to_string(i) : "field 'ids'"));
  if (batch && static_cast<std::int64_t>(sequences.size()) > options_.max_client_batch_size)
    throw too_large("field 'ids' has " + std::to_string(sequences.size()) + " lists, more than the server's " +
                    "--max-client-batch-size " + std::to_string(options_.max_client_batch_size));
  const bool skip_special = optional_bool(body, "skip_special_tokens").value_or(true);
  std::string s = "[";
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    if (i > 0) s += ',';
    append_string(s, model.decode(sequences[i], skip_special, batch ? "ids " + std::to_string(i) : "ids"));
    call->sequences += 1, call->tokens += static_cast<std::int64_t>(sequences[i].size());
  }
  s += ']';
  reply_json(call, std::move(s));
}

}  // namespace attend::server
