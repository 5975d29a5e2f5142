// CTranslate2 model directories: the three real models (tests/data/models), an independent NumPy
// implementation, model.bin files written in every format version by ct2/ct2_writer,
// the converter's round trip, and malformed files.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attend/error.hpp"
#include "ct2/ct2_writer.hpp"
#include "formats/ct2_model.hpp"
#include "formats/model_conversion.hpp"
#include "formats/model_io.hpp"
#include "model/random_model.hpp"
#include "translator/translator.hpp"
#include "text/vocabulary.hpp"

using Catch::Matchers::Contains;

namespace attend::runtime {
namespace {

namespace fs = std::filesystem;
using test::Ct2File;
using test::Ct2Out;

// The real transliteration model in float32, int16 and int8, committed (tests/data/models/README.md).
fs::path real_models() { return fs::path(ATTEND_SOURCE_DIR) / "tests" / "data" / "models"; }

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("attend-ct2-" + std::to_string(::getpid()) + "-" + std::to_string(next++));
  TempDir() { fs::remove_all(path), fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  static inline int next = 0;
};

std::vector<std::int32_t> ids(const Vocabulary& v, const std::string& tokens) {
  std::istringstream s(tokens);
  std::vector<std::int32_t> out;
  for (std::string t; s >> t;) out.push_back(v.id_or_unk(t));
  return out;
}

std::string text(const Vocabulary& v, const std::vector<std::int32_t>& ids) {
  std::string out;
  for (auto id : ids) out += (out.empty() ? "" : " ") + v.token(id);
  return out;
}

struct Loaded {
  std::shared_ptr<const Model> model;
  Vocabulary source, target;
};

// compute_type "default" runs int8 models in int8, as stored.
Loaded load_real(const std::string& name, const std::string& compute_type = "default") {
  const std::string dir = (real_models() / name).string();
  LoadOptions o;
  o.compute_type = compute_type;
  return {load_model(dir, o), Vocabulary::from_file(dir + "/source_vocabulary.txt", "<unk>"),
          Vocabulary::from_file(dir + "/target_vocabulary.txt", "<unk>")};
}

std::vector<std::string> translate_text(const Loaded& m, const std::vector<std::string>& sources, std::int64_t beam,
                                        const std::vector<std::string>& prefixes = {}) {
  TranslatorConfig tc;
  tc.max_beam_size = beam, tc.max_target_length = 40, tc.threads = 2;
  DecodeOptions o;
  o.beam_size = beam, o.max_length = 40;
  std::vector<std::vector<std::int32_t>> src, pre;
  for (const auto& s : sources) src.push_back(ids(m.source, s));
  for (const auto& p : prefixes) pre.push_back(ids(m.target, p));
  std::vector<std::string> out;
  for (const auto& r : Translator(m.model, tc).translate(src, o, pre)) out.push_back(text(m.target, r.hypotheses[0].tokens));
  return out;
}

const std::vector<std::string> kSources = {"آ ت ز م و ن", "آ ت ش ي س و ن"};
const std::vector<std::string> kExpected = {"a t z m o n", "a c h i s o n"};

}  // namespace

TEST_CASE("the real CTranslate2 models give their known outputs", "[ct2][real-models]") {
  for (const char* name : {"ct2-aren-transliteration", "ct2-aren-transliteration-int16", "ct2-aren-transliteration-int8"}) {
    const Loaded m = load_real(name);
    INFO(name);
    CHECK(m.model->config().num_heads == 8);  // from the spec name, TransformerBase
    for (std::int64_t beam : {1, 4}) {
      INFO("beam " << beam);
      CHECK(translate_text(m, kSources, beam) == kExpected);
    }
    // A forced target prefix continues to the model's completion.
    CHECK(translate_text(m, {kSources[0]}, 1, {"a t s"}) == std::vector<std::string>{"a t s u m o n"});
    CHECK(translate_text(m, {kSources[0]}, 4, {"a t s"}) == std::vector<std::string>{"a t s u m o n"});
  }
}

TEST_CASE("per-token log-probabilities match an independent NumPy implementation", "[ct2][real-models]") {
  for (const char* name : {"ct2-aren-transliteration", "ct2-aren-transliteration-int16", "ct2-aren-transliteration-int8"}) {
    const std::string dir = (real_models() / name).string();
    std::string cmd = std::string(ATTEND_PYTHON) + " " + ATTEND_SOURCE_DIR + "/tests/ct2/numpy_reference.py " + dir;
    for (size_t i = 0; i < kSources.size(); ++i) cmd += " '" + kSources[i] + "' '" + kExpected[i] + "'";
    FILE* pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    REQUIRE(pclose(pipe) == 0);

    const Loaded m = load_real(name, "float32");  // the reference computes the dequantized weights in fp32
    std::istringstream lines(out);
    size_t i = 0;
    for (std::string line; std::getline(lines, line); ++i) {
      const auto want = nlohmann::json::parse(line);
      INFO(name << ", sentence " << i);
      CHECK(want["greedy"].get<std::string>() == kExpected[i]);
      // attend, forced through the expected output: one log p per token, then </s>'s.
      TranslatorConfig tc;
      tc.max_target_length = 40;
      DecodeOptions o;
      o.max_length = 40;
      const auto got = Translator(m.model, tc)
                           .translate(std::vector<std::vector<std::int32_t>>{ids(m.source, kSources[i])}, o,
                                      std::vector<std::vector<std::int32_t>>{ids(m.target, kExpected[i])});
      const auto& lp = got[0].hypotheses[0].token_log_probs;
      const auto expected = want["target_log_probs"].get<std::vector<double>>();
      REQUIRE(lp.size() == expected.size());
      for (size_t t = 0; t < lp.size(); ++t) CHECK(std::abs(lp[t] - expected[t]) <= 1e-4);
    }
    CHECK(i == kSources.size());
  }
}

TEST_CASE("int8 and int16 models agree with the float model", "[ct2][real-models]") {
  const Loaded f = load_real("ct2-aren-transliteration");
  const std::vector<std::string> more = {"آ ت ز م و ن", "آ ت ش ي س و ن", "م ح م د", "ع ل ي", "ف ا ط م ة", "ي و س ف"};
  for (const char* name : {"ct2-aren-transliteration-int16", "ct2-aren-transliteration-int8"}) {
    INFO(name);
    CHECK(translate_text(load_real(name), more, 4) == translate_text(f, more, 4));
  }
}

// ---- model.bin files of every format version, written by the tests' own writer ----

namespace {

struct Variant {
  std::uint32_t version;
  std::string spec;
  std::uint32_t revision;
  bool pre_norm = true;
  int activation = 0;  // CTranslate2's ids
  bool shared = false;  // shared vocabulary, embeddings and tied projection (aliases)
  bool layernorm_embedding = false;
  bool learned_positions = false;
  Ct2DType weights = Ct2DType::f32;  // or i8, i16 (no saved scale before v4: the legacy 1000), f16, bf16
  bool json_vocabulary = false;
  bool config_json = false;  // layer_norm_epsilon 1e-6 (CTranslate2 defaults to 1e-5), add_source_eos
};

// The CTranslate2 name of an attend tensor, written out independently of the loader.
std::string to_ct2(const std::string& n) {
  static const std::vector<std::pair<std::string, std::string>> rules = {
      {"encoder.embed_tokens.weight", "encoder/embeddings/weight"}, {"decoder.embed_tokens.weight", "decoder/embeddings/weight"},
      {"encoder.embed_positions.weight", "encoder/position_encodings/encodings"},
      {"decoder.embed_positions.weight", "decoder/position_encodings/encodings"},
      {"output_projection.", "decoder/projection/"}, {".layers.", "/layer_"}, {".self_attn.qkv_proj", "/self_attention/linear_0"},
      {".self_attn.out_proj", "/self_attention/linear_1"}, {".self_attn_layer_norm", "/self_attention/layer_norm"},
      {".cross_attn.q_proj", "/attention/linear_0"}, {".cross_attn.kv_proj", "/attention/linear_1"},
      {".cross_attn.out_proj", "/attention/linear_2"}, {".cross_attn_layer_norm", "/attention/layer_norm"},
      {".final_layer_norm", "/ffn/layer_norm"}, {".fc1", "/ffn/linear_0"}, {".fc2", "/ffn/linear_1"},
      {"encoder.layernorm_embedding", "encoder/layernorm_embedding"}, {"decoder.layernorm_embedding", "decoder/layernorm_embedding"},
      {"encoder.layer_norm", "encoder/layer_norm"}, {"decoder.layer_norm", "decoder/layer_norm"}};
  std::string s = n;
  for (const auto& [from, to] : rules)
    if (const auto at = s.find(from); at != std::string::npos) s.replace(at, from.size(), to);
  if (s.find("norm") != std::string::npos && s.ends_with(".weight")) s.replace(s.size() - 7, 7, "/gamma");
  if (s.find("norm") != std::string::npos && s.ends_with(".bias")) s.replace(s.size() - 5, 5, "/beta");
  if (s.ends_with(".weight")) s.replace(s.size() - 7, 7, "/weight");
  if (s.ends_with(".bias")) s.replace(s.size() - 5, 5, "/bias");
  return s;
}

// OpenNMT-tf's names, as revision-1 files hold them (the inverse of CTranslate2's renaming).
std::string to_v1(std::string s) {
  auto replace = [&](const std::string& from, const std::string& to) {
    if (const auto at = s.find(from); at != std::string::npos) s.replace(at, from.size(), to);
  };
  const bool decoder = s.rfind("decoder", 0) == 0;
  replace("embeddings/weight", "w_embs");
  if (s.ends_with("/weight")) s.replace(s.size() - 6, 6, "kernel");
  replace("layer_norm", "LayerNorm");
  replace("projection", "dense");
  replace("linear_0", "conv1d");
  replace("linear_1", "conv1d_1");
  replace("linear_2", "conv1d_2");
  if (decoder) {
    replace("self_attention", "masked_multi_head");
    replace("/attention/", "/multi_head/");
  } else {
    replace("self_attention", "multi_head");
  }
  return "transformer/" + s + ":0";
}

std::vector<std::uint8_t> encode_values(const std::vector<float>& v, Ct2DType t) {
  std::vector<std::uint8_t> out;
  for (float x : v) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, 4);
    if (t == Ct2DType::bf16) {
      out.push_back((bits >> 16) & 0xff), out.push_back(bits >> 24);
    } else {  // f16, exact for the multiples of 1/64 used here
      const std::uint32_t sign = (bits >> 16) & 0x8000, exp = (bits >> 23) & 0xff;
      const std::uint16_t h = exp == 0 ? sign : static_cast<std::uint16_t>(sign | ((exp - 112) << 10) | ((bits & 0x7fffff) >> 13));
      out.push_back(h & 0xff), out.push_back(h >> 8);
    }
  }
  return out;
}

struct TwinPair {
  TempDir ct2, attend;
};

// Writes `v` as a CTranslate2 directory and, beside it, the attend-format model it must
// be read as (configuration written by hand from the variant, not derived).
std::unique_ptr<TwinPair> write_twins(const Variant& v) {
  ModelConfig c;
  c.d_model = 16, c.ffn_dim = 24, c.encoder_layers = 2, c.decoder_layers = 2;
  c.num_heads = v.spec == "TransformerBig" ? 16 : v.revision >= 3 ? 4 : 8;
  c.src_vocab_size = 20, c.tgt_vocab_size = v.shared ? 20 : 22;
  c.norm_placement = v.pre_norm ? NormPlacement::pre : NormPlacement::post;
  c.encoder_final_norm = c.decoder_final_norm = v.pre_norm;
  c.activation = std::vector{ops::Activation::relu, ops::Activation::gelu_tanh, ops::Activation::silu, ops::Activation::gelu}[v.activation];
  c.layernorm_embedding = v.layernorm_embedding;
  if (v.learned_positions) {
    c.position_encoding = PositionEncoding::learned, c.position_offset = 0, c.max_positions = 16, c.shared_position_table = true;
  } else {
    c.position_encoding = PositionEncoding::sinusoidal_concatenated, c.position_offset = 1, c.max_positions = 2048;
  }
  c.embedding_scale = 4.0f;  // √16
  c.shared_embeddings = c.tie_output_projection = v.shared;
  c.output_bias = true;
  c.layer_norm_epsilon = v.config_json ? 1e-6f : 1e-5f;
  c.pad_id = 0, c.bos_id = 1, c.eos_id = 2, c.decoder_start_id = 1, c.unk_id = static_cast<std::int32_t>(c.tgt_vocab_size - 1);
  c.add_source_eos = v.config_json;

  auto random = random_weights(c, 17);
  auto weights = std::make_shared<MemoryTensorSource>("twin");
  Ct2File f{v.version, v.spec, v.revision, {}, {}};
  for (const auto& [name, shape] : expected_tensors(c)) {
    std::vector<float> values = to_f32(*random->find(name));
    const bool quantizable = name.ends_with(".weight") && name.find("norm") == std::string::npos &&
                             name.find("positions") == std::string::npos;
    const std::string ct2 = v.version == 1 ? to_v1(to_ct2(name)) : to_ct2(name);
    if (quantizable && v.weights == Ct2DType::i16) {  // one scale per tensor: 1000, not saved
      Ct2Out out{ct2, shape, Ct2DType::i16, {}};
      for (float& x : values) {
        const auto q = static_cast<std::int16_t>(std::lround(x * 1000));
        out.bytes.push_back(static_cast<std::uint8_t>(q & 0xff)), out.bytes.push_back(static_cast<std::uint8_t>((q >> 8) & 0xff));
        x = static_cast<float>(q) / 1000.0f;  // what dequantization yields
      }
      f.variables.push_back(out);
    } else {
      for (float& x : values) x = std::round(x * 64) / 64;  // exact in int8 (scale 64), f16, bf16
      if (quantizable && v.weights == Ct2DType::i8) {
        Ct2Out out{ct2, shape, Ct2DType::i8, {}};
        for (float x : values) out.bytes.push_back(static_cast<std::uint8_t>(static_cast<std::int8_t>(std::lround(x * 64))));
        f.variables.push_back(out);
        f.variables.push_back(test::f32_variable(ct2 + "_scale", {shape[0]}, std::vector<float>(shape[0], 64.0f)));
      } else if (quantizable && (v.weights == Ct2DType::f16 || v.weights == Ct2DType::bf16)) {
        f.variables.push_back({ct2, shape, v.weights, encode_values(values, v.weights)});
      } else {
        f.variables.push_back(test::f32_variable(ct2, shape, values));
      }
    }
    weights->add(name, shape, values);
  }
  if (v.shared) {
    f.aliases.push_back({"decoder/embeddings/weight", "encoder/embeddings/weight"});
    f.aliases.push_back({"decoder/projection/weight", "encoder/embeddings/weight"});
  }
  if (v.learned_positions) f.aliases.push_back({"decoder/position_encodings/encodings", "encoder/position_encodings/encodings"});
  if (v.revision >= 3 && v.revision < 5) {  // attributes at the root
    f.variables.push_back(test::scalar_i8("num_heads", 4));
    f.variables.push_back(test::scalar_i8("pre_norm", v.pre_norm));
    f.variables.push_back(test::scalar_i8("activation", static_cast<std::int8_t>(v.activation)));
  } else if (v.revision >= 5) {
    for (const char* stack : {"encoder", "decoder"}) {
      const std::string s = stack;
      f.variables.push_back(test::scalar_i16(s + "/num_heads", 4));
      f.variables.push_back(test::scalar_i8(s + "/pre_norm", v.pre_norm));
      f.variables.push_back(test::scalar_i8(s + "/activation", static_cast<std::int8_t>(v.activation)));
      f.variables.push_back(test::scalar_i8(s + "/scale_embeddings", 1));
    }
    f.variables.push_back(test::scalar_i8("encoder/embeddings_merge", 0));
    f.variables.push_back(test::scalar_i16("decoder/alignment_layer", -1));
    f.variables.push_back(test::scalar_i16("decoder/alignment_heads", 1));
  }
  std::sort(f.variables.begin(), f.variables.end(), [](const Ct2Out& a, const Ct2Out& b) { return a.name < b.name; });

  auto dirs = std::make_unique<TwinPair>();
  test::write_file((dirs->ct2.path / "model.bin").string(), test::ct2_bytes(f));
  auto vocab = [&](const std::string& file, std::int64_t size) {  // <unk> is left out: the loader appends it
    std::ofstream out(dirs->ct2.path / file);
    std::vector<std::string> tokens = {"<blank>", "<s>", "</s>"};
    for (std::int64_t i = 3; i + 1 < size; ++i) tokens.push_back(std::string("w").append(std::to_string(i)));
    if (v.json_vocabulary) {
      out << nlohmann::json(tokens).dump();
    } else {
      for (const auto& t : tokens) out << t << "\n";
    }
  };
  const std::string ext = v.json_vocabulary ? ".json" : ".txt";
  if (v.shared) {
    vocab("shared_vocabulary" + ext, c.src_vocab_size);
  } else {
    vocab("source_vocabulary" + ext, c.src_vocab_size);
    vocab("target_vocabulary" + ext, c.tgt_vocab_size);
  }
  if (v.config_json) std::ofstream(dirs->ct2.path / "config.json") << R"({"layer_norm_epsilon": 1e-06, "add_source_eos": true,
    "unk_token": "<unk>", "bos_token": "<s>", "eos_token": "</s>", "decoder_start_token": "<s>", "add_source_bos": false})";
  save_model(dirs->attend.path.string(), c, *weights);
  return dirs;
}

std::vector<std::vector<std::int32_t>> decode_bits(std::shared_ptr<const Model> m) {
  TranslatorConfig tc;
  tc.max_beam_size = 3, tc.max_target_length = 10;
  DecodeOptions o;
  o.beam_size = 3, o.num_hypotheses = 2, o.max_length = 10;
  std::vector<std::vector<std::int32_t>> out;
  for (const auto& r : Translator(m, tc).translate(std::vector<std::vector<std::int32_t>>{{4, 5, 6}, {7}, {8, 9, 10, 11}}, o))
    for (const auto& h : r.hypotheses) {
      out.push_back(h.tokens);
      std::int32_t bits;
      std::memcpy(&bits, &h.score, 4);
      out.back().push_back(bits);
    }
  return out;
}

}  // namespace

TEST_CASE("model.bin of every format version loads as its attend twin, bit for bit", "[ct2][formats]") {
  const std::vector<Variant> variants = {
      {1, "", 1},
      {2, "TransformerBase", 2, true, 0, false, false, false, Ct2DType::i16},
      {2, "TransformerBig", 2, true, 0, false, false, false, Ct2DType::i8},
      {3, "TransformerBase", 3, true, 0, true},
      {4, "TransformerBase", 4, false, 1, false, false, false, Ct2DType::f16},
      {5, "TransformerSpec", 5, true, 3, false, true, true, Ct2DType::bf16, false, true},
      {6, "TransformerSpec", 7, false, 2, true, false, false, Ct2DType::i8, true, true},
  };
  for (const Variant& v : variants) {
    INFO("format version " << v.version << ", spec '" << v.spec << "' revision " << v.revision);
    const auto dirs = write_twins(v);
    LoadOptions exact;  // the twin holds the weights' values in fp32; quantized ones are computed so too
    exact.compute_type = "float32";
    const auto ct2 = load_model(dirs->ct2.path.string(), exact);
    const auto twin = load_model(dirs->attend.path.string());
    const auto derived = nlohmann::json::parse(ct2->config().to_json());
    const auto expected = nlohmann::json::parse(twin->config().to_json());
    for (const auto& [key, value] : expected.items()) {
      INFO("config field " << key << ": read " << derived.value(key, nlohmann::json()).dump() << ", expected " << value.dump());
      CHECK((key == "name" || derived.value(key, nlohmann::json()) == value));
    }
    CHECK(decode_bits(ct2) == decode_bits(twin));

    // attend's converter writes the same model out (int8 and bf16 weights as they are),
    // and it decodes the same, in the stored types and in fp32.
    TempDir converted;
    convert_model(dirs->ct2.path.string(), converted.path.string());
    const auto as_stored = load_model(dirs->ct2.path.string());
    const auto converted_as_stored = load_model(converted.path.string());
    CHECK(converted_as_stored->compute_type().name == as_stored->compute_type().name);
    CHECK(decode_bits(converted_as_stored) == decode_bits(as_stored));
    CHECK(decode_bits(load_model(converted.path.string(), exact)) == decode_bits(ct2));
    CHECK(fs::exists(converted.path / (v.shared ? "shared_vocabulary" : "source_vocabulary") += (v.json_vocabulary ? ".json" : ".txt")));
  }
}

TEST_CASE("malformed model.bin files and directories are reported clearly", "[ct2][errors]") {
  const auto dirs = write_twins({2, "TransformerBase", 2});
  const fs::path bin = dirs->ct2.path / "model.bin";
  std::vector<std::uint8_t> good;
  {
    std::ifstream in(bin, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto parse = [&](const std::vector<std::uint8_t>& bytes) {
    parse_ct2_model({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "m/model.bin");
  };
  for (size_t cut : {size_t{2}, size_t{9}, size_t{40}, good.size() / 2, good.size() - 1}) {
    INFO("cut at byte " << cut);
    CHECK_THROWS_WITH(parse({good.begin(), good.begin() + cut}), Contains("m/model.bin: truncated: reading"));
  }
  auto with = [&](auto mutate) {
    std::vector<std::uint8_t> b = good;
    mutate(b);
    return b;
  };
  CHECK_THROWS_WITH(parse(with([](auto& b) { b[0] = 7; })), Contains("format version 7 is not one attend reads"));
  CHECK_THROWS_WITH(parse(with([](auto& b) { b.push_back(0); })), Contains("1 unexpected bytes after the last variable"));

  Ct2File f{4, "TransformerSpec", 7, {test::f32_variable("a", {2}, {1, 2})}, {}};
  auto bytes = test::ct2_bytes(f);
  bytes[bytes.size() - 4 - 8 - 4 - 1] = 9;  // the dtype id: before byte count, data and alias count
  CHECK_THROWS_WITH(parse(bytes), Contains("variable 'a' has unknown dtype id 9"));
  f.variables[0].bytes.resize(4);
  CHECK_THROWS_WITH(parse(test::ct2_bytes(f)), Contains("variable 'a' has 4 bytes but shape [2] of float32 needs 8"));
  f = Ct2File{3, "TransformerBase", 3, {test::f32_variable("a", {1}, {1})}, {{"b", "c"}}};
  CHECK_THROWS_WITH(parse(test::ct2_bytes(f)), Contains("alias 'b' names variable 'c', which the file does not hold"));

  SECTION("directory-level problems") {
    auto rewrite = [&](Ct2File file) { test::write_file(bin.string(), test::ct2_bytes(file)); };
    Ct2File spec{2, "WhisperSpec", 2, {}, {}};
    rewrite(spec);
    CHECK_THROWS_WITH(load_model(dirs->ct2.path.string()), Contains("spec 'WhisperSpec' is not an encoder-decoder Transformer"));

    // A file with one more variable: splice it in (bump the variable count, append the
    // variable before the end).
    auto with_variable = [&](const std::string& name) {
      std::vector<std::uint8_t> extra = good;
      Ct2File one{2, "TransformerBase", 2, {test::f32_variable(name, {2}, {0, 0})}, {}};
      auto tail = test::ct2_bytes(one);
      std::uint32_t count;
      const size_t count_at = 4 + 2 + std::string("TransformerBase").size() + 1 + 4;
      std::memcpy(&count, extra.data() + count_at, 4);
      ++count;
      std::memcpy(extra.data() + count_at, &count, 4);
      extra.insert(extra.end(), tail.begin() + static_cast<long>(count_at) + 4, tail.end());
      test::write_file(bin.string(), extra);
    };
    // An unsupported feature's variable is named.
    with_variable("encoder/layer_0/self_attention/relative_asymmetric_position_keys");
    CHECK_THROWS_WITH(load_model(dirs->ct2.path.string()),
                      Contains("'encoder/layer_0/self_attention/relative_asymmetric_position_keys' belongs to asymmetric relative positions"));
    // A supported feature, incomplete: what is missing is named.
    with_variable("encoder/layer_0/self_attention/relative_position_keys");
    CHECK_THROWS_WITH(load_model(dirs->ct2.path.string()), Contains("'encoder/layer_0/self_attention/relative_position_values' is missing — relative position keys and values must be in every self-attention layer"));
    with_variable("decoder/layer_0/ffn/linear_0_noact/weight");
    CHECK_THROWS_WITH(load_model(dirs->ct2.path.string()), Contains("unexpected variable 'decoder/layer_0/ffn/linear_0_noact/weight'"));

    test::write_file(bin.string(), good);
    std::ofstream(dirs->ct2.path / "target_vocabulary.txt") << "<blank>\n<s>\n</s>\n";
    CHECK_THROWS_WITH(load_model(dirs->ct2.path.string()), Contains("target_vocabulary.txt: 4 tokens (<unk> included) but the target embedding has 22 rows"));
    fs::remove(dirs->ct2.path / "target_vocabulary.txt");
    CHECK_THROWS_WITH(load_model(dirs->ct2.path.string()), Contains("missing vocabulary"));
  }
}

}  // namespace attend::runtime
