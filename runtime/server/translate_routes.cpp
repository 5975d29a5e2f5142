// POST /translate: LibreTranslate's request ({"q", "source", "target"} → translatedText)
// and attend's richer one ({"text", and any decoding option of `attend translate` by its
// field name} → hypotheses with scores and attention); GET /languages, LibreTranslate's.
#include <algorithm>
#include <map>
#include <set>
#include <type_traits>

#include "server/response_json.hpp"
#include "server/router.hpp"

namespace attend::server {
namespace {

// Every scalar decoding option the body gives, by its name (attend/options.h), checked
// against its range; messages name the field.
void read_decoding_options(const json& body, TranslationOptions& o) {
  for (const OptionSpec& spec : kTranslationOptionSpecs) {
    const std::string name(spec.name);
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) continue;
    const json& v = *it;
    auto refuse = [&](const std::string& got) {
      return bad_request("field '" + name + "': must be " + spec.range() + ", got " + got);
    };
    double value = 0;
    if (spec.kind == OptionSpec::Kind::flag) {
      if (!v.is_boolean()) throw refuse(kind_of(v));
      value = v.get<bool>() ? 1 : 0;
    } else if (spec.kind == OptionSpec::Kind::real) {
      if (!v.is_number()) throw refuse(kind_of(v));
      value = v.get<double>();
    } else {
      if (!v.is_number_integer() && !v.is_number_unsigned()) throw refuse(kind_of(v));
      value = v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>()) : static_cast<double>(v.get<std::int64_t>());
    }
    if (!spec.accepts(value)) throw refuse(v.dump());
#define ATTEND_SET_OPTION(kind, field, ...)                                                    \
  if (name == #field) {                                                                        \
    if constexpr (std::is_same_v<decltype(o.field), bool>) o.field = value != 0;              \
    else if constexpr (std::is_same_v<decltype(o.field), std::uint64_t>) o.field = v.get<std::uint64_t>(); \
    else o.field = static_cast<decltype(o.field)>(value);                                     \
  }
    ATTEND_TRANSLATION_OPTIONS(ATTEND_SET_OPTION)
#undef ATTEND_SET_OPTION
  }
  // The lists: suppressed sequences ([[token, …], …]) and end tokens (a token or a list).
  if (const auto it = body.find("suppress_sequences"); it != body.end() && !it->is_null()) {
    if (!it->is_array()) throw bad_request("field 'suppress_sequences': must be a list of lists of target tokens, got " + kind_of(*it));
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& s = (*it)[i];
      if (!s.is_array() || s.empty() || !std::all_of(s.begin(), s.end(), [](const json& t) { return t.is_string(); }))
        throw bad_request("field 'suppress_sequences', item " + std::to_string(i) + ": must be a non-empty list of target tokens");
      o.suppress_sequences.push_back(s.get<std::vector<std::string>>());
    }
  }
  if (const auto it = body.find("end_token"); it != body.end() && !it->is_null()) {
    if (it->is_string()) o.end_token = std::vector<std::string>{it->get<std::string>()};
    else if (it->is_array() && std::all_of(it->begin(), it->end(), [](const json& t) { return t.is_string(); }))
      o.end_token = it->get<std::vector<std::string>>();
    else throw bad_request("field 'end_token': must be a target token or a list of them, got " + kind_of(*it));
  }
}

// As `attend translate` reads a line of text: blank → an empty source (an empty
// translation), otherwise SentencePiece, cut to the translator's source limit.
std::vector<std::int32_t> source_ids(const TranslationService& service, const std::string& text, bool truncate,
                                     const std::string& what) {
  if (is_blank_text(text)) return {};
  const Model& model = service.model();
  std::vector<std::int32_t> ids = model.encode_text(text);
  if (model.is_empty_source(ids)) return {};
  const std::int64_t limit = service.translator().max_source_length();
  if (static_cast<std::int64_t>(ids.size()) > limit) {
    if (!truncate)
      throw too_long(what + " has " + std::to_string(ids.size()) + " tokens, more than the model's limit of " +
                     std::to_string(limit) + " (send \"truncate\": true to cut it)");
    model.truncate_source(ids, limit);
  }
  return ids;
}

// Pre-tokenized input ("tokens": [["▁a", "b"], …], or one list), as `attend translate
// --input-format tokens` reads it: the model's vocabulary, BOS/EOS as it adds them.
std::vector<std::vector<std::string>> token_lists(const json& body, bool& single) {
  const json& v = body["tokens"];
  auto list = [](const json& item, const std::string& where) {
    if (!item.is_array() || !std::all_of(item.begin(), item.end(), [](const json& t) { return t.is_string(); }))
      throw bad_request(where + ": must be a list of source tokens, got " + kind_of(item));
    return item.get<std::vector<std::string>>();
  };
  if (!v.is_array() || v.empty()) throw bad_request("field 'tokens': must be a list of token lists (or one list), got " + kind_of(v));
  single = v[0].is_string();
  if (single) return {list(v, "field 'tokens'")};
  std::vector<std::vector<std::string>> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(list(v[i], "field 'tokens', item " + std::to_string(i)));
  return out;
}

std::vector<std::int32_t> token_source_ids(const TranslationService& service, const std::vector<std::string>& tokens,
                                           bool truncate, const std::string& what) {
  if (tokens.empty()) return {};
  const Model& model = service.model();
  std::vector<std::int32_t> ids = model.encode_tokens(tokens);
  if (model.is_empty_source(ids)) return {};
  const std::int64_t limit = service.translator().max_source_length();
  if (static_cast<std::int64_t>(ids.size()) > limit) {
    if (!truncate)
      throw too_long(what + " has " + std::to_string(ids.size()) + " tokens, more than the model's limit of " +
                     std::to_string(limit) + " (send \"truncate\": true to cut it)");
    model.truncate_source(ids, limit);
  }
  return ids;
}

std::string hypothesis_text(const Model& model, const TranslationOptions& o, const Hypothesis& h) {
  if (o.replace_unknowns && !h.tokens.empty()) return model.decode_pieces(h.tokens);
  return model.decode_text(h.ids);
}

}  // namespace

void Router::translate(const CallPtr& call) {
  const json body = parse_object(call->request.body);
  if (!authorized(call->request, &body))
    throw ApiError(401, "Unauthorized", "missing or wrong API key (Authorization: Bearer KEY, or \"api_key\" in the body)");
  TranslationService& service = translator_for(call, body);
  const Model& model = service.model();
  const bool libre = body.contains("q");
  const bool tokens_in = !libre && body.contains("tokens") && !body.contains("text");
  const char* field = libre ? "q" : tokens_in ? "tokens" : "text";
  if (tokens_in ? !model.has_vocabulary() : !model.has_text_tokenizer())
    throw ApiError(424, "Validation", "model '" + service.name() + "' has no " +
                                          (tokens_in ? "vocabulary files to read tokens" : "SentencePiece model to read text") +
                                          (tokens_in ? "" : (model.has_vocabulary() ? ": send \"tokens\"" : "")));
  bool single = false;
  std::vector<std::string> texts;
  std::vector<std::vector<std::string>> token_input;
  if (tokens_in) token_input = token_lists(body, single);
  else texts = string_list(body, field, &single);
  const std::size_t inputs = tokens_in ? token_input.size() : texts.size();
  if (static_cast<std::int64_t>(inputs) > options_.max_client_batch_size)
    throw too_large(std::string("field '") + field + "' has " + std::to_string(inputs) +
                    " inputs, more than the server's --max-client-batch-size " + std::to_string(options_.max_client_batch_size));

  TranslationOptions o;
  std::int64_t alternatives = 0;
  bool return_scores = false;
  if (libre) {
    const std::string format = optional_string(body, "format").value_or("text");
    if (format != "text") throw bad_request("field 'format': \"" + format + "\" is not supported (attend translates \"text\")");
    optional_string(body, "source"), optional_string(body, "target");  // they chose the model
    alternatives = optional_integer(body, "alternatives", 0, service.translator().options().max_beam_size - 1).value_or(0);
    if (alternatives > 0) o.beam_size = o.num_hypotheses = 1 + alternatives;  // the other hypotheses of the beam
  } else {
    read_decoding_options(body, o);
    return_scores = optional_bool(body, "return_scores").value_or(false);
    if (o.return_attention_heads) throw bad_request("field 'return_attention_heads': not served over HTTP (use return_attention)");
  }
  service.translator().validate(o);
  const bool truncate = truncate_of(body);

  // Forced target prefixes: one for all ("target_prefix": "…") or one per text.
  std::vector<std::string> prefix_texts;
  if (!libre && body.contains("target_prefix") && !body["target_prefix"].is_null()) {
    bool one = false;
    prefix_texts = string_list(body, "target_prefix", &one);
    if (tokens_in) throw bad_request("field 'target_prefix': give text prefixes with text input");
    if (one) prefix_texts.assign(texts.size(), prefix_texts.front());
    if (prefix_texts.size() != texts.size())
      throw bad_request("field 'target_prefix': " + std::to_string(prefix_texts.size()) + " prefixes for " +
                        std::to_string(texts.size()) + " texts");
  }
  const std::int64_t max_target = service.translator().options().max_target_length;
  const std::int64_t max_length = o.max_length > 0 ? std::min(o.max_length, max_target) : max_target;

  auto& queue = service.queue();
  queue.announce();
  auto job = std::make_shared<TranslationJob>();
  try {
    for (std::size_t i = 0; i < inputs; ++i) {
      const std::string what = std::string("field '") + field + "'" + (single ? "" : ", item " + std::to_string(i));
      job->sources.push_back(tokens_in ? token_source_ids(service, token_input[i], truncate, what)
                                       : source_ids(service, texts[i], truncate, what));
      call->tokens += static_cast<std::int64_t>(job->sources.back().size());
      if (prefix_texts.empty()) continue;
      std::vector<std::int32_t> prefix =
          is_blank_text(prefix_texts[i]) ? std::vector<std::int32_t>{} : model.encode_text(prefix_texts[i], Model::Side::target);
      if (o.prefix_bias_beta == 0 && static_cast<std::int64_t>(prefix.size()) > max_length)
        throw too_long("field 'target_prefix', prefix " + std::to_string(i) + " has " + std::to_string(prefix.size()) +
                       " tokens, more than the " + std::to_string(max_length) + " a translation may have");
      job->prefixes.push_back(std::move(prefix));
    }
    job->options = o;
    job->group = service.group_of(o, !prefix_texts.empty());
    job->tokens = std::max<std::int64_t>(1, call->tokens);
  } catch (...) {
    queue.withdraw();
    throw;
  }
  call->sequences = static_cast<std::int64_t>(inputs);
  job->done = [this, call, &service, o, libre, single, alternatives, return_scores](TranslationOutcome&& out) {
    call->timing = out.timing;
    if (!out.error.empty()) return fail(call, ApiError(500, "Backend", out.error));
    const Model& model = service.model();
    if (libre) {
      nlohmann::ordered_json j, translated = nlohmann::ordered_json::array(), others = nlohmann::ordered_json::array();
      for (const TranslationResult& r : out.results) {
        translated.push_back(hypothesis_text(model, o, r.hypotheses.at(0)));
        nlohmann::ordered_json alt = nlohmann::ordered_json::array();
        for (std::size_t k = 1; k < r.hypotheses.size(); ++k) alt.push_back(hypothesis_text(model, o, r.hypotheses[k]));
        others.push_back(std::move(alt));
      }
      j["translatedText"] = single ? translated.at(0) : translated;
      if (alternatives > 0) j["alternatives"] = single ? others.at(0) : others;
      return reply_json(call, j.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    // Text where the model has SentencePiece, tokens where it has vocabularies.
    const bool text_out = model.has_text_tokenizer(), tokens_out = model.has_vocabulary();
    auto hypothesis = [&](std::string& s, const Hypothesis& h, bool non_finite) {
      if (text_out) {
        s += "\"text\":";
        append_string(s, non_finite ? std::string() : hypothesis_text(model, o, h));
      }
      if (tokens_out) {
        s += text_out ? ",\"tokens\":[" : "\"tokens\":[";
        const auto tokens = o.replace_unknowns && !h.tokens.empty() ? h.tokens : model.decode_tokens(h.ids);
        for (std::size_t t = 0; t < tokens.size() && !non_finite; ++t) {
          if (t > 0) s += ',';
          append_string(s, tokens[t]);
        }
        s += ']';
      }
    };
    std::string s = "{\"model\":";
    append_string(s, service.name());
    s += ",\"translations\":[";
    std::int64_t generated = 0;
    for (std::size_t i = 0; i < out.results.size(); ++i) {
      const TranslationResult& r = out.results[i];
      s += i > 0 ? ",{" : "{";
      hypothesis(s, r.hypotheses.at(0), r.non_finite);
      if (r.non_finite) s += ",\"non_finite\":true";
      s += ",\"hypotheses\":[";
      for (std::size_t k = 0; k < r.hypotheses.size(); ++k) {
        const Hypothesis& h = r.hypotheses[k];
        generated += static_cast<std::int64_t>(h.ids.size());
        s += k > 0 ? ",{" : "{";
        hypothesis(s, h, r.non_finite);
        if (return_scores) {
          s += ",\"score\":";
          append_float(s, h.score);
          s += ",\"log_prob\":";
          append_float(s, h.log_prob);
        }
        if (o.return_attention) {
          s += ",\"attention\":[";
          for (std::size_t row = 0; row < h.attention.size(); ++row) {
            if (row > 0) s += ',';
            append_floats(s, h.attention[row]);
          }
          s += ']';
        }
        s += '}';
      }
      s += "]}";
    }
    s += "],\"usage\":{\"source_tokens\":" + std::to_string(call->tokens) + ",\"generated_tokens\":" +
         std::to_string(generated) + "}}";
    reply_json(call, std::move(s));
  };
  submit(call, service, std::move(job));
}

void Router::languages(const CallPtr& call) {
  // LibreTranslate's list, from the translation models named SOURCE-TARGET.
  std::map<std::string, std::set<std::string>> targets;
  for (const auto& m : models_) {
    if (!dynamic_cast<const TranslationService*>(m.get())) continue;
    const auto dash = m->name().find('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == m->name().size()) continue;
    targets[m->name().substr(0, dash)].insert(m->name().substr(dash + 1));
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& [code, to] : targets)
    j.push_back({{"code", code}, {"name", code}, {"targets", std::vector<std::string>(to.begin(), to.end())}});
  reply_json(call, j.dump());
}

}  // namespace attend::server
