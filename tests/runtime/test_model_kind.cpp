// Format detection (formats/model_kind.hpp): each kind of directory is told apart in one
// place and goes to its reader, whichever face asks — the encoder-decoder loader
// (load_model: attend translate, attend::Translator) or the encoder one (read_encoder:
// attend embed, attend::Encoder) — and a directory nothing reads is an error naming what
// was looked for.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "attend/error.hpp"
#include "formats/encoder_io.hpp"
#include "formats/model_conversion.hpp"
#include "formats/model_io.hpp"
#include "formats/model_kind.hpp"
#include "model/random_model.hpp"

using Catch::Matchers::Contains;

namespace attend::runtime {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(ATTEND_SOURCE_DIR) / "tests" / "data";

// A fresh directory under the system's temporary one, removed afterwards.
struct ScratchDirectory {
  fs::path path = fs::temp_directory_path() / ("attend-model-kind-" + std::to_string(::getpid()) + "-" + std::to_string(++count));
  ScratchDirectory() { fs::create_directories(path); }
  ~ScratchDirectory() { fs::remove_all(path); }
  static inline int count = 0;
};

// attend's own format: config.json (no model_type) + model.safetensors.
void write_attend_model(const fs::path& dir) {
  ModelConfig c;
  c.d_model = 16, c.num_heads = 2, c.ffn_dim = 24, c.encoder_layers = 1, c.decoder_layers = 1;
  c.src_vocab_size = c.tgt_vocab_size = 20, c.max_positions = 32;
  c.pad_id = 0, c.bos_id = 1, c.eos_id = 2, c.unk_id = 3, c.decoder_start_id = 1;
  save_model(dir.string(), c, *random_weights(c, 7));
}

}  // namespace

TEST_CASE("model kind: each kind of directory is told apart and read by its reader", "[formats][model-kind]") {
  struct Case {
    fs::path dir;
    ModelKind kind;
    const char* format;  // what its reader reports
  };
  const std::vector<Case> encoders = {
      {kData / "encoders" / "bert", ModelKind::hf_encoder, "Hugging Face (config.json + model.safetensors, BertModel)"},
      {kData / "encoders" / "bert-classifier", ModelKind::hf_encoder, "BertForSequenceClassification"},
      {kData / "encoders" / "roberta", ModelKind::hf_encoder, "RobertaModel"},
      {kData / "encoders" / "xlm-roberta-classifier", ModelKind::hf_encoder, "XLMRobertaForSequenceClassification"},
      {kData / "encoders" / "distilbert", ModelKind::hf_encoder, "DistilBertModel"},
      {kData / "encoders" / "distilbert-classifier", ModelKind::hf_encoder, "DistilBertForSequenceClassification"},
      {kData / "encoders" / "st-mean", ModelKind::sentence_transformers, "sentence-transformers (Transformer, Pooling, Normalize)"},
      {kData / "encoders" / "ct2-bert", ModelKind::ct2_encoder, "(spec TransformerEncoderSpec)"},
  };
  for (const Case& c : encoders) {
    INFO(c.dir);
    CHECK(detect_model(c.dir.string()) == c.kind);
    CHECK(is_encoder_directory(c.dir.string()));
    CHECK_THAT(read_encoder(c.dir.string()).report.format, Contains(c.format));
    // The encoder-decoder face names what the directory holds instead of misreading it.
    CHECK_THROWS_WITH(load_model(c.dir.string()), Contains(model_kind_name(c.kind)) && Contains("not an encoder-decoder"));
    CHECK_THROWS_WITH(convert_model(c.dir.string(), (fs::temp_directory_path() / "attend-model-kind-never").string()),
                      Contains(model_kind_name(c.kind)) && Contains("attend convert rewrites"));
  }

  ScratchDirectory attend;
  write_attend_model(attend.path);
  const std::vector<Case> translators = {
      {kData / "models" / "ct2-aren-transliteration", ModelKind::ct2_translator, "CTranslate2"},
      {attend.path, ModelKind::attend, "attend (config.json + safetensors)"},
      {kData / "hf-seq2seq" / "marian", ModelKind::hf_seq2seq, "Hugging Face (config.json + model.safetensors, MarianMTModel)"},
      {kData / "hf-seq2seq" / "t5", ModelKind::hf_seq2seq, "T5ForConditionalGeneration"},
  };
  for (const Case& c : translators) {
    INFO(c.dir);
    CHECK(detect_model(c.dir.string()) == c.kind);
    CHECK_FALSE(is_encoder_directory(c.dir.string()));
    CHECK_THAT(load_model(c.dir.string())->report().format, Contains(c.format));
    CHECK_THROWS_WITH(read_encoder(c.dir.string()), Contains(model_kind_name(c.kind)) && Contains("not an encoder-only model"));
  }
  for (const char* family : {"bart", "mbart50", "m2m100", "nllb"}) {
    INFO(family);
    CHECK(detect_model((kData / "hf-seq2seq" / family).string()) == ModelKind::hf_seq2seq);
  }
  // Read where they are: attend convert names the kind rather than looking for model.bin.
  CHECK_THROWS_WITH(convert_model((kData / "hf-seq2seq" / "marian").string(), (fs::temp_directory_path() / "attend-model-kind-never").string()),
                    Contains("a Hugging Face encoder-decoder (config.json) — attend convert rewrites"));
}

// The message `load` throws (empty if it throws none).
template <typename F>
std::string message_of(F load) {
  try {
    load();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST_CASE("model kind: a directory nothing reads is an error naming what was looked for", "[formats][model-kind]") {
  ScratchDirectory dir;
  const std::string d = dir.path.string();
  // Empty: the files looked for, from every face.
  for (const std::string& message : {message_of([&] { detect_model(d); }), message_of([&] { load_model(d); }),
                                     message_of([&] { read_encoder(d); })}) {
    CHECK_THAT(message, Contains(d + ": not a model directory"));
    for (const char* file : {"model.bin", "config.json", "modules.json"}) CHECK_THAT(message, Contains(file));
  }
  CHECK_FALSE(is_encoder_directory(d));

  // Only a config.json of an architecture no family reads: its model_type named, with the
  // families attend reads.
  std::ofstream(dir.path / "config.json") << R"({"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": 16})";
  for (const std::string& message : {message_of([&] { detect_model(d); }), message_of([&] { load_model(d); }),
                                     message_of([&] { read_encoder(d); })}) {
    CHECK_THAT(message, Contains((dir.path / "config.json").string() + ": field 'model_type' is 'gpt2'"));
    CHECK_THAT(message, Contains("bert, roberta, xlm-roberta, camembert, distilbert"));
    CHECK_THAT(message, Contains("marian"));
  }
  CHECK_FALSE(is_encoder_directory(d));

  // A config.json with no model_type (attend's or CTranslate2's) and no weights beside it.
  std::ofstream(dir.path / "config.json") << R"({"d_model": 16})";
  const std::string no_weights = message_of([&] { detect_model(d); });
  CHECK_THAT(no_weights, Contains(d + ": no weights"));
  CHECK_THAT(no_weights, Contains("model.safetensors"));
  CHECK_THAT(no_weights, Contains("model.bin"));

  // A path that is not a directory is named as such before anything is looked for.
  CHECK_THROWS_WITH(detect_model((dir.path / "config.json").string()), Contains("not a directory"));
  CHECK_THROWS_WITH(detect_model((dir.path / "nope").string()), Contains("model directory does not exist"));
}

TEST_CASE("model kind: files in memory are told apart as a directory is", "[formats][model-kind]") {
  const ModelFiles none = ModelFiles::in_memory("given", {{"README.md", "hello"}});
  CHECK_THROWS_WITH(detect_model(none), Contains("given: the files given hold no model") && Contains("model.bin"));
  const ModelFiles hf = ModelFiles::in_memory("given", {{"config.json", R"({"model_type": "marian"})"}});
  CHECK_THROWS_WITH(detect_model(hf), Contains("a Hugging Face marian model") && Contains("not from files in memory"));
  const ModelFiles encoder = ModelFiles::in_memory("given", {{"config.json", R"({"model_type": "bert"})"}});
  CHECK(detect_model(encoder) == ModelKind::hf_encoder);
}

}  // namespace attend::runtime
