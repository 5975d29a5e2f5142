#include "text/hf/vocab_files.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "attend/error.hpp"
#include "formats/json_file.hpp"
#include "text/hf/models.hpp"
#include "text/hf/normalizers.hpp"
#include "text/hf/post_processors.hpp"
#include "text/hf/pre_tokenizers.hpp"
#include "text/hf/sentencepiece_model.hpp"

namespace attend::runtime::hf {
namespace fs = std::filesystem;
namespace {

using json = nlohmann::json;

enum class TokenizerClass { bert, xlm_roberta, camembert };

// tokenizer_config.json, or an empty one.
struct TokenizerConfig {
  std::optional<JsonFile> file;
  bool has(const char* key) const { return file && file->has(key); }
  bool flag(const char* key, bool otherwise) const { return file ? file->flag_or(key, otherwise) : otherwise; }
  std::string path() const { return file ? file->path() : std::string("tokenizer_config.json"); }
};

// A special token of the config ("unk_token": "[UNK]", or an AddedToken object), or the
// class's default, with the flags transformers gives it.
AddedToken special_token(const TokenizerConfig& config, const char* key, const std::string& otherwise,
                         bool lstrip = false) {
  AddedToken t;
  t.content = otherwise, t.special = true, t.normalized = false, t.lstrip = lstrip;
  if (!config.has(key)) return t;
  const json& v = config.file->value()[key];
  if (v.is_string()) {
    t.content = v.get<std::string>();
  } else if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    t.content = v["content"].get<std::string>();
    t.lstrip = v.value("lstrip", t.lstrip), t.rstrip = v.value("rstrip", false);
    t.single_word = v.value("single_word", false), t.normalized = v.value("normalized", false);
  } else {
    config.file->bad(key, "must be a token string or {\"content\": …}");
  }
  return t;
}

AddedToken added_token(const JsonFile& file, const std::string& key, const json& v) {
  if (!v.is_object() || !v.contains("content") || !v["content"].is_string())
    file.bad(key, "needs {\"content\": …} entries");
  AddedToken t;
  t.content = v["content"].get<std::string>();
  for (const char* flag : {"lstrip", "rstrip", "single_word", "normalized", "special"})
    if (v.contains(flag) && !v[flag].is_boolean()) file.bad(key, std::string("has a '") + flag + "' that is not true or false");
  t.lstrip = v.value("lstrip", false), t.rstrip = v.value("rstrip", false), t.single_word = v.value("single_word", false);
  t.special = v.value("special", false), t.normalized = v.value("normalized", !t.special);
  return t;
}

// The added tokens in the order transformers adds them (a token the vocabulary lacks
// gets the next free id in this order): tokenizer_config.json's added_tokens_decoder by
// id, the special tokens (bos, eos, unk, sep, pad, cls, mask: those the class has), the
// model's own special pieces, then extra_special_tokens (or additional_special_tokens).
// The first mention of a content sets its flags.
std::vector<AddedToken> added_tokens(const TokenizerConfig& config, const std::vector<AddedToken>& specials,
                                     const std::vector<AddedToken>& pieces) {
  std::vector<AddedToken> out;
  const JsonFile* f = config.file ? &*config.file : nullptr;
  if (f && f->has("added_tokens_decoder")) {
    const json& decoder = f->value()["added_tokens_decoder"];
    if (!decoder.is_object()) f->bad("added_tokens_decoder", "must be an object {\"id\": {\"content\": …}}");
    std::map<long long, AddedToken> by_id;
    for (const auto& [key, v] : decoder.items()) {
      long long id = -1;
      try {
        id = std::stoll(key);
      } catch (const std::exception&) {
      }
      if (id < 0) f->bad("added_tokens_decoder", "has key '" + key + "', not a token id");
      by_id[id] = added_token(*f, "added_tokens_decoder", v);
    }
    for (auto& [id, t] : by_id) out.push_back(std::move(t));
  }
  out.insert(out.end(), specials.begin(), specials.end());
  out.insert(out.end(), pieces.begin(), pieces.end());
  const char* extra = f && f->has("extra_special_tokens") ? "extra_special_tokens" : "additional_special_tokens";
  if (f && f->has(extra)) {
    const json& list = f->value()[extra];
    if (!list.is_array() && !list.is_object()) f->bad(extra, "must be a list of tokens");
    for (const auto& [key, v] : list.items()) {
      AddedToken t;
      if (v.is_string()) t.content = v.get<std::string>(), t.normalized = false;
      else t = added_token(*f, extra, v);
      t.special = true;
      out.push_back(std::move(t));
    }
  }
  std::vector<AddedToken> unique;
  for (const AddedToken& t : out)
    if (std::none_of(unique.begin(), unique.end(), [&](const AddedToken& u) { return u.content == t.content; }))
      unique.push_back(t);
  return unique;
}

std::unique_ptr<TemplateProcessing> template_processing(const std::vector<std::pair<std::string, int>>& single,
                                                         const std::vector<std::pair<std::string, int>>& pair,
                                                         const HfTokenizer::Pipeline& p) {
  auto t = std::make_unique<TemplateProcessing>();
  for (const auto* pieces : {&single, &pair}) {
    auto& out = pieces == &single ? t->single : t->pair;
    for (const auto& [name, type] : *pieces) {
      TemplateProcessing::Piece piece{};
      piece.type_id = type;
      if (name == "$A" || name == "$B") {
        piece.is_sequence = true, piece.second = name == "$B";
      } else {
        piece.is_sequence = false, piece.special = name;
        const std::int32_t added = p.added.find(name);
        const std::int32_t id = added >= 0 ? added : p.model->token_to_id(name);
        if (id < 0) throw error_of(p.file, ": the special token '", name, "' is not in the vocabulary");
        t->special_tokens[name] = {{id}, {name}};
      }
      out.push_back(std::move(piece));
    }
  }
  return t;
}

TokenizerClass tokenizer_class(const TokenizerConfig& config, const std::string& model_type, bool sentencepiece,
                               const std::string& file) {
  std::string name = config.file ? config.file->text_or("tokenizer_class", "") : "";
  for (const char* suffix : {"Fast"})
    if (name.ends_with(suffix)) name.erase(name.size() - std::string(suffix).size());
  if (name == "BertTokenizer" || name == "DistilBertTokenizer") return TokenizerClass::bert;
  if (name == "XLMRobertaTokenizer") return TokenizerClass::xlm_roberta;
  if (name == "CamembertTokenizer") return TokenizerClass::camembert;
  if (!name.empty())
    config.file->bad("tokenizer_class", "is '" + name +
                                            "' — without a tokenizer.json attend builds BertTokenizer (vocab.txt), "
                                            "XLMRobertaTokenizer and CamembertTokenizer (sentencepiece.bpe.model)");
  if (!sentencepiece) return TokenizerClass::bert;
  if (model_type == "camembert") return TokenizerClass::camembert;
  if (model_type == "xlm-roberta") return TokenizerClass::xlm_roberta;
  throw error_of(file, ": a SentencePiece model for a '", model_type,
                 "' model — attend builds the tokenizer of xlm-roberta and camembert from one; give a tokenizer.json");
}

// vocab.txt: one token per line, its id the line's number from 0 (transformers' load_vocab:
// each line without its "\n"; a later line with the same token takes its id).
void read_vocab_txt(const fs::path& path, Vocab& vocab) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error_of(path.string(), ": cannot open");
  std::string line;
  std::int32_t id = 0;
  while (std::getline(in, line)) vocab.add(line, id++);
  if (id == 0) throw error_of(path.string(), ": empty (a vocabulary has a token per line)");
}

void build_bert(HfTokenizer::Pipeline& p, const fs::path& file, const TokenizerConfig& config) {
  auto model = std::make_unique<WordPiece>();
  read_vocab_txt(file, model->vocab);
  const AddedToken unk = special_token(config, "unk_token", "[UNK]"), sep = special_token(config, "sep_token", "[SEP]"),
                   pad = special_token(config, "pad_token", "[PAD]"), cls = special_token(config, "cls_token", "[CLS]"),
                   mask = special_token(config, "mask_token", "[MASK]");
  model->unk_token = unk.content;
  auto normalizer = std::make_unique<BertNormalizer>();
  normalizer->clean_text = true;
  normalizer->handle_chinese_chars = config.flag("tokenize_chinese_chars", true);
  normalizer->lowercase = config.flag("do_lower_case", true);
  if (config.has("strip_accents")) normalizer->strip_accents = config.flag("strip_accents", false);
  p.normalizer = std::move(normalizer);
  p.pre_tokenizer = std::make_unique<BertPreTokenizer>();
  p.model = std::move(model);
  p.added.add(added_tokens(config, {unk, sep, pad, cls, mask}, {}), *p.model, p.normalizer.get());
  p.post_processor = template_processing({{cls.content, 0}, {"$A", 0}, {sep.content, 0}},
                                         {{cls.content, 0}, {"$A", 0}, {sep.content, 0}, {"$B", 1}, {sep.content, 1}}, p);
}

void build_sentencepiece(HfTokenizer::Pipeline& p, const fs::path& file, const TokenizerConfig& config, TokenizerClass c) {
  const SentencePieceModel spm = read_sentencepiece_model(file);
  const bool camembert = c == TokenizerClass::camembert;
  const AddedToken bos = special_token(config, "bos_token", "<s>"), eos = special_token(config, "eos_token", "</s>"),
                   unk = special_token(config, "unk_token", "<unk>"), sep = special_token(config, "sep_token", "</s>"),
                   pad = special_token(config, "pad_token", "<pad>"), cls = special_token(config, "cls_token", "<s>"),
                   mask = special_token(config, "mask_token", "<mask>", /*lstrip=*/camembert);
  // fairseq's dictionary layout over the SentencePiece ids, as transformers' converters
  // lay it out (XLMRobertaConverter / CamembertConverter.convert_from_spm).
  std::vector<std::pair<std::string, double>> vocab;
  std::size_t skip;
  if (camembert) {
    vocab = {{"<s>NOTUSED", 0.0}, {pad.content, 0.0}, {"</s>NOTUSED", 0.0}, {unk.content, 0.0}, {"<unk>NOTUSED", -100.0}};
    skip = 1;
  } else {
    vocab = {{bos.content, 0.0}, {pad.content, 0.0}, {eos.content, 0.0}, {unk.content, 0.0}};
    skip = 3;
  }
  for (std::size_t i = skip; i < spm.pieces.size(); ++i) vocab.emplace_back(spm.pieces[i].piece, spm.pieces[i].score);
  vocab.emplace_back(mask.content, 0.0);
  std::int32_t unk_id = 3;
  for (std::size_t i = 0; camembert && i < vocab.size(); ++i)
    if (vocab[i].first == unk.content) {
      unk_id = static_cast<std::int32_t>(i);
      break;
    }
  // The model's control and user-defined pieces are added tokens too (transformers'
  // SentencePieceExtractor: control ones special, none normalized).
  std::vector<AddedToken> pieces;
  for (const auto& piece : spm.pieces)
    if (piece.type == SentencePieceModel::PieceType::control || piece.type == SentencePieceModel::PieceType::user_defined) {
      AddedToken t;
      t.content = piece.piece, t.normalized = false, t.special = piece.type == SentencePieceModel::PieceType::control;
      pieces.push_back(t);
    }
  if (!spm.precompiled_charsmap.empty())
    p.normalizer = std::make_unique<Precompiled>(PrecompiledCharsmap(spm.precompiled_charsmap));
  auto pre = std::make_unique<PreTokenizerSequence>();
  pre->steps.push_back(std::make_unique<WhitespaceSplit>());
  auto metaspace = std::make_unique<Metaspace>();
  metaspace->prepend = config.flag("add_prefix_space", true) ? Metaspace::Prepend::always : Metaspace::Prepend::never;
  pre->steps.push_back(std::move(metaspace));
  p.pre_tokenizer = std::move(pre);
  p.model = std::make_unique<Unigram>(std::move(vocab), unk_id, /*byte_fallback=*/false);
  p.added.add(added_tokens(config, {bos, eos, unk, sep, pad, cls, mask}, pieces), *p.model, p.normalizer.get());
  p.post_processor = template_processing({{bos.content, 0}, {"$A", 0}, {eos.content, 0}},
                                         {{bos.content, 0}, {"$A", 0}, {eos.content, 0}, {eos.content, 0}, {"$B", 0}, {eos.content, 0}},
                                         p);
}

}  // namespace

std::shared_ptr<const HfTokenizer::Pipeline> read_vocab_files(const fs::path& file, const std::string& model_type) {
  auto p = std::make_shared<HfTokenizer::Pipeline>();
  p->file = file.string();
  TokenizerConfig config;
  const fs::path config_path = file.parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path)) {
    config.file.emplace(config_path.string());
    if (!config.file->value().is_object()) throw error_of(config_path.string(), ": must be a JSON object");
  }
  const bool sentencepiece = file.extension() == ".model";
  const TokenizerClass c = tokenizer_class(config, model_type, sentencepiece, file.string());
  if ((c == TokenizerClass::bert) == sentencepiece)
    throw error_of(config.path(), ": field 'tokenizer_class' does not read ", file.filename().string());
  try {
    if (c == TokenizerClass::bert) build_bert(*p, file, config);
    else build_sentencepiece(*p, file, config, c);
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind(p->file, 0) == 0 || what.rfind(config.path(), 0) == 0) throw;
    throw error_of(p->file, ": ", what);
  }
  p->pad_id = p->added.find(c == TokenizerClass::bert ? special_token(config, "pad_token", "[PAD]").content
                                                      : special_token(config, "pad_token", "<pad>").content);
  p->reads_in_pieces = reads_in_pieces(*p);
  return p;
}

}  // namespace attend::runtime::hf
