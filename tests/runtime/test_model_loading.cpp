// Loading models: round trip, dtype conversion, and every kind of malformed input
// reported as attend::Error naming the file and the tensor or field.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attend/error.hpp"
#include "formats/model_io.hpp"
#include "model/random_model.hpp"
#include "formats/safetensors.hpp"
#include "translator/translator.hpp"

using Catch::Matchers::Contains;

namespace attend::runtime {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

ModelConfig tiny_config() {
  ModelConfig c;
  c.d_model = 16, c.num_heads = 2, c.ffn_dim = 24, c.encoder_layers = 1, c.decoder_layers = 2;
  c.src_vocab_size = 20, c.tgt_vocab_size = 22, c.max_positions = 32;
  c.pad_id = 0, c.bos_id = 1, c.eos_id = 2, c.unk_id = 3, c.decoder_start_id = 1;
  return c;
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("attend-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string str() const { return path_.string(); }
  fs::path operator/(const std::string& p) const { return path_ / p; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

struct RawTensor {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> bytes;
};

// Writes a safetensors file byte by byte, so tests can write what attend's writer never would.
void write_raw(const fs::path& path, const std::vector<RawTensor>& tensors, const std::string& header_override = "") {
  json header = json::object();
  std::size_t offset = 0;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  const std::string text = header_override.empty() ? header.dump() : header_override;
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t n = text.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << text;
  for (const RawTensor& t : tensors) out.write(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
}

std::vector<RawTensor> as_raw(const TensorSource& src, const std::string& dtype = "F32") {
  std::vector<RawTensor> out;
  for (const std::string& name : src.names()) {
    const TensorRecord* t = src.find(name);
    const float* f = reinterpret_cast<const float*>(t->data);
    RawTensor r{name, dtype, t->shape, {}};
    for (std::int64_t i = 0; i < t->elements(); ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, f + i, 4);
      if (dtype == "F32") {
        for (int b = 0; b < 4; ++b) r.bytes.push_back((bits >> (8 * b)) & 0xff);
      } else if (dtype == "BF16") {  // exact for the values below: low 16 bits are zero
        r.bytes.push_back((bits >> 16) & 0xff), r.bytes.push_back(bits >> 24);
      } else {  // F16, exact for multiples of 1/64 in [-1, 1]
        const std::uint32_t sign = (bits >> 16) & 0x8000, exp = (bits >> 23) & 0xff, mant = bits & 0x7fffff;
        const std::uint16_t h = exp == 0 ? sign : static_cast<std::uint16_t>(sign | ((exp - 112) << 10) | (mant >> 13));
        r.bytes.push_back(h & 0xff), r.bytes.push_back(h >> 8);
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

void write_config(const fs::path& dir, const ModelConfig& c) { std::ofstream(dir / "config.json") << c.to_json(); }

std::vector<std::vector<std::int32_t>> decode_all(std::shared_ptr<const Model> m) {
  TranslatorConfig tc;
  tc.max_batch_size = 3, tc.max_source_length = 8, tc.max_target_length = 10;
  DecodeOptions o;
  o.max_length = 10;
  std::vector<std::vector<std::int32_t>> out;
  for (const auto& r : Translator(m, tc).translate(std::vector<std::vector<std::int32_t>>{{4, 5, 6}, {7}, {8, 9, 10, 11}}, o)) {
    out.push_back(r.hypotheses[0].tokens);
    std::uint32_t bits;  // log-probs bit for bit, as tokens
    std::memcpy(&bits, &r.hypotheses[0].log_prob, 4);
    out.back().push_back(static_cast<std::int32_t>(bits));
  }
  return out;
}

std::shared_ptr<MemoryTensorSource> weights_in_64ths(const ModelConfig& c) {
  auto src = random_weights(c, 5);
  auto rounded = std::make_shared<MemoryTensorSource>("rounded");
  for (const std::string& name : src->names()) {
    const TensorRecord* t = src->find(name);
    std::vector<float> v = to_f32(*t);
    for (float& x : v) x = std::round(x * 64.0f) / 64.0f;
    rounded->add(name, t->shape, v);
  }
  return rounded;
}

}  // namespace

TEST_CASE("a saved model loads back and decodes identically", "[runtime][loading]") {
  const ModelConfig c = tiny_config();
  auto weights = random_weights(c, 3);
  TempDir dir;
  save_model(dir.str(), c, *weights);
  auto loaded = load_model(dir.str());
  auto in_memory = Model::build(c, weights, {});
  CHECK(decode_all(loaded) == decode_all(in_memory));
  CHECK(loaded->report().parameters == static_cast<std::int64_t>(weights->total_bytes() / 4));
  CHECK_THAT(loaded->report().format, Contains("safetensors"));
  CHECK(loaded->report().checks.size() >= 4);
}

TEST_CASE("random weights made on demand are the same bits, made only when the model reads them",
          "[runtime][loading]") {
  const ModelConfig c = tiny_config();
  auto eager = random_weights(c, 7);
  auto on_demand = random_weights(c, 7, /*on_demand=*/true);
  REQUIRE(on_demand->names() == eager->names());
  for (const std::string& name : eager->names()) {
    INFO(name);
    const TensorRecord* t = on_demand->find(name);
    CHECK(t->shape == eager->find(name)->shape);
    CHECK(t->data == nullptr);  // described, not made
    CHECK_THROWS_WITH(to_f32(*t), Contains("internal: tensor '" + name + "' has no data"));
    on_demand->acquire(*t);
    CHECK(to_f32(*t) == to_f32(*eager->find(name)));
  }
  // Built tensor by tensor, each freed once packed: the same model.
  auto streamed = random_weights(c, 7, /*on_demand=*/true);
  streamed->set_release_after_read(true);
  CHECK(decode_all(Model::build(c, streamed, {})) == decode_all(Model::build(c, eager, {})));
  CHECK(streamed->find("encoder.layers.0.fc1.weight")->data == nullptr);  // released
}

TEST_CASE("F16 and BF16 weights are converted exactly", "[runtime][loading]") {
  const ModelConfig c = tiny_config();
  auto weights = weights_in_64ths(c);
  std::vector<std::vector<std::vector<std::int32_t>>> results;
  for (const char* dtype : {"F32", "F16", "BF16"}) {
    TempDir dir;
    write_config(dir / "", c);
    write_raw(dir / "model.safetensors", as_raw(*weights, dtype));
    LoadOptions o;
    o.compute_type = "float32";  // by default a BF16 model computes in bf16 where the CPU can
    results.push_back(decode_all(load_model(dir.str(), o)));
  }
  CHECK(results[1] == results[0]);
  CHECK(results[2] == results[0]);
}

TEST_CASE("safetensors headers are validated", "[runtime][loading][errors]") {
  const std::string f = "m.safetensors";
  auto parse = [&](const std::string& bytes) {
    parse_safetensors({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, f);
  };
  auto file = [](const std::string& header, std::size_t data_bytes = 0) {
    std::string s(8, '\0');
    const std::uint64_t n = header.size();
    std::memcpy(s.data(), &n, 8);
    return s + header + std::string(data_bytes, '\0');
  };
  CHECK_THROWS_WITH(parse("abc"), Contains("m.safetensors: too short"));
  CHECK_THROWS_WITH(parse(file("{}").substr(0, 9)), Contains("runs past the end of the file"));
  CHECK_THROWS_WITH(parse(file("{\"a\":")), Contains("header is not valid JSON"));
  CHECK_THROWS_WITH(parse(file("[1, 2]")), Contains("header must be a JSON object"));
  CHECK_THROWS_WITH(parse(file(R"({"w": {"dtype": "F32"}})")), Contains("tensor 'w' needs dtype, shape and data_offsets"));
  CHECK_THROWS_WITH(parse(file(R"({"w": {"dtype": "I64", "shape": [2], "data_offsets": [0, 16]}})", 16)),
                    Contains("tensor 'w' has dtype 'I64'"));
  CHECK_THROWS_WITH(parse(file(R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", 8)),
                    Contains("tensor 'w': a dimension must be a non-negative integer"));
  CHECK_THROWS_WITH(parse(file(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", 8)),
                    Contains("data_offsets [8, 0] are reversed"));
  CHECK_THROWS_WITH(parse(file(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8)),
                    Contains("tensor 'w' ends at byte 16 of a 8-byte data section: the file is truncated or corrupt"));
  CHECK_THROWS_WITH(parse(file(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8)),
                    Contains("tensor 'w' has 8 bytes but shape [3] of F32 needs 12"));
  CHECK_THROWS_WITH(parse(file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                   "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 12)),
                    Contains("tensor data ranges overlap at byte 4"));
  CHECK_THROWS_WITH(parse(file(R"({"__metadata__": {"k": 1}})")), Contains("__metadata__ value 'k' must be a string"));
  std::string huge(8, '\xff');
  CHECK_THROWS_WITH(parse(huge), Contains("header length"));
}

TEST_CASE("model files inconsistent with the configuration are rejected", "[runtime][loading][errors]") {
  const ModelConfig c = tiny_config();
  auto weights = random_weights(c, 4);
  auto with = [&](const std::function<void(std::vector<RawTensor>&)>& mutate) {
    auto dir = std::make_shared<TempDir>();
    write_config(*dir / "", c);
    std::vector<RawTensor> raw = as_raw(*weights);
    mutate(raw);
    write_raw(*dir / "model.safetensors", raw);
    return dir;
  };
  auto named = [](std::vector<RawTensor>& raw, const std::string& n) -> RawTensor& {
    return *std::find_if(raw.begin(), raw.end(), [&](const RawTensor& t) { return t.name == n; });
  };
  SECTION("missing tensor") {
    auto dir = with([](auto& raw) { raw.erase(raw.begin() + 5); });
    CHECK_THROWS_WITH(load_model(dir->str()), Contains("model.safetensors: missing tensor '"));
  }
  SECTION("wrong shape") {
    auto dir = with([&](auto& raw) {
      RawTensor& t = named(raw, "decoder.layers.1.fc1.weight");
      t.shape = {12, 32};  // same bytes, other shape
    });
    CHECK_THROWS_WITH(load_model(dir->str()),
                      Contains("tensor 'decoder.layers.1.fc1.weight' has shape [12, 32], the configuration implies [24, 16]"));
  }
  SECTION("unexpected tensor") {
    auto dir = with([](auto& raw) { raw.push_back({"decoder.layers.7.fc1.bias", "F32", {2}, std::vector<std::uint8_t>(8)}); });
    CHECK_THROWS_WITH(load_model(dir->str()), Contains("unexpected tensor(s) the configuration does not use: 'decoder.layers.7.fc1.bias'"));
  }
  SECTION("non-finite weight") {
    auto dir = with([&](auto& raw) {
      const float nan = std::nanf("");
      std::memcpy(named(raw, "encoder.layers.0.fc2.weight").bytes.data() + 12, &nan, 4);
    });
    CHECK_THROWS_WITH(load_model(dir->str()), Contains("tensor 'encoder.layers.0.fc2.weight' has a non-finite value (nan) at index 3"));
  }
  SECTION("truncated file") {
    auto dir = with([](auto&) {});
    const fs::path p = *dir / "model.safetensors";
    fs::resize_file(p, fs::file_size(p) - 100);
    CHECK_THROWS_WITH(load_model(dir->str()), Contains("the file is truncated or corrupt"));
  }
  SECTION("missing files") {
    TempDir empty;
    CHECK_THROWS_WITH(load_model(empty.str()), Contains("not a model directory"));
    CHECK_THROWS_WITH(load_model(empty.str() + "/nope"), Contains("model directory does not exist"));
    write_config(empty / "", c);
    CHECK_THROWS_WITH(load_model(empty.str()), Contains("neither model.safetensors"));
  }
}

TEST_CASE("config.json is validated field by field", "[runtime][loading][errors]") {
  const std::string base = tiny_config().to_json();
  auto parse_with = [&](const std::string& key, const json& value) {
    json j = json::parse(base);
    if (value.is_null()) {
      j.erase(key);
    } else {
      j[key] = value;
    }
    return ModelConfig::from_json(j.dump(), "dir/config.json");
  };
  CHECK_NOTHROW(ModelConfig::from_json(base, "dir/config.json"));
  CHECK_THROWS_WITH(parse_with("d_modle", 8), Contains("dir/config.json: unknown field 'd_modle'"));
  CHECK_THROWS_WITH(parse_with("d_model", nullptr), Contains("missing required field 'd_model'"));
  CHECK_THROWS_WITH(parse_with("d_model", "16"), Contains("field 'd_model' must be an integer"));
  CHECK_THROWS_WITH(parse_with("num_heads", 3), Contains("field 'num_heads' 3 does not divide d_model 16"));
  CHECK_THROWS_WITH(parse_with("ffn_dim", -4), Contains("field 'ffn_dim' must be in [1,"));
  CHECK_THROWS_WITH(parse_with("layer_norm_epsilon", 1e300), Contains("field 'layer_norm_epsilon' must be finite"));
  // A number too large for a double is a parse error, reported with where and why.
  std::string infinite = base;
  const std::size_t at = infinite.find("\"layer_norm_epsilon\": ");
  const std::size_t end = infinite.find(',', at);
  infinite.replace(at, end - at, "\"layer_norm_epsilon\": 1e999");
  CHECK_THROWS_WITH(ModelConfig::from_json(infinite, "dir/config.json"),
                    Contains("dir/config.json: not valid JSON") && Contains("number overflow"));
  CHECK_THROWS_WITH(parse_with("activation", "swish"), Contains("field 'activation' is 'swish'; expected one of"));
  CHECK_THROWS_WITH(parse_with("eos_id", 40), Contains("field 'eos_id' 40 is outside the target vocabulary"));
  CHECK_THROWS_WITH(parse_with("shared_embeddings", true), Contains("needs src_vocab_size = tgt_vocab_size"));
  CHECK_THROWS_WITH(parse_with("format_version", 2), Contains("this build reads version 1"));
  CHECK_THROWS_WITH(ModelConfig::from_json("{", "dir/config.json"), Contains("dir/config.json: not valid JSON"));
  CHECK(parse_with("embedding_scale", "sqrt_d_model").embedding_scale == Approx(4.0f));
  CHECK(parse_with("_comment", "ignored").d_model == 16);
}

}  // namespace attend::runtime
