// Malformed model directories, as a hostile user makes them: every read of model data
// stays inside its own bytes, and every failure is an attend::Error that names the file
// and the field (or variable) at fault — never a raw library message.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "attend/error.hpp"
#include "ct2/ct2_writer.hpp"
#include "formats/ct2_model.hpp"
#include "formats/model_io.hpp"
#include "text/tokenizers.hpp"
#include "text/vocabulary.hpp"

using Catch::Matchers::Contains;

namespace attend::runtime {
namespace {

namespace fs = std::filesystem;
using test::Ct2File;
using test::Ct2Out;

const fs::path kCt2Model = fs::path(ATTEND_SOURCE_DIR) / "tests/data/ct2-variants/bart";        // loads today
const fs::path kAttendModel = fs::path(ATTEND_SOURCE_DIR) / "tests/data/parity/pre-ln-relu/model";

struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("attend-errors-" + std::to_string(::getpid()) + "-" + std::to_string(next++));
  ScratchDir() { fs::remove_all(path), fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
  static inline int next = 0;
};

// A copy of `from` in a fresh scratch directory.
std::unique_ptr<ScratchDir> copy_of(const fs::path& from) {
  auto dir = std::make_unique<ScratchDir>();
  for (const auto& entry : fs::directory_iterator(from)) fs::copy(entry.path(), dir->path / entry.path().filename());
  return dir;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// What attend::Model::load does: the weights, then the tokenizers beside them.
void load_directory(const fs::path& dir) {
  const auto model = load_model(dir.string());
  Tokenizers::from_directory(dir.string(), model->config());
}

std::vector<std::uint8_t> value_bytes(Ct2DType dtype, std::int64_t elements, double value) {
  std::vector<std::uint8_t> out;
  for (std::int64_t i = 0; i < elements; ++i) {
    std::uint8_t b[4] = {};
    std::size_t n = ct2_dtype_size(dtype);
    switch (dtype) {
      case Ct2DType::f32: {
        const float f = static_cast<float>(value);
        std::memcpy(b, &f, 4);
        break;
      }
      case Ct2DType::i32: {
        const std::int32_t v = static_cast<std::int32_t>(value);
        std::memcpy(b, &v, 4);
        break;
      }
      case Ct2DType::i16: {
        const std::int16_t v = static_cast<std::int16_t>(value);
        std::memcpy(b, &v, 2);
        break;
      }
      case Ct2DType::i8: b[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(value)); break;
      case Ct2DType::f16: b[0] = 0x00, b[1] = 0x3c; break;  // 1.0
      case Ct2DType::bf16: b[0] = 0x80, b[1] = 0x3f; break;  // 1.0
    }
    out.insert(out.end(), b, b + n);
  }
  return out;
}

// The message of the attend::Error `f` throws ("" if it returns).
std::string error_of_call(const std::function<void()>& f) {
  try {
    f();
  } catch (const attend::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every CTranslate2 attribute is read within its own bytes, whatever its shape and dtype", "[ct2][errors]") {
  const Ct2File good = test::read_ct2_file((kCt2Model / "model.bin").string());
  std::vector<std::string> attributes;
  for (const Ct2Out& v : good.variables)
    if (v.shape.empty()) attributes.push_back(v.name);
  REQUIRE(attributes.size() >= 10);

  const auto dir = copy_of(kCt2Model);
  const std::string bin = (dir->path / "model.bin").string();
  const std::vector<Ct2DType> dtypes = {Ct2DType::f32, Ct2DType::i8, Ct2DType::i16, Ct2DType::i32, Ct2DType::f16, Ct2DType::bf16};
  for (const std::string& name : attributes)
    for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{0}, {3}, {2, 0}, {1}})
      for (const Ct2DType dtype : dtypes)
        for (const bool at_end : {false, true}) {  // in place, or the last variable of the file
          Ct2File f = good;
          auto it = std::find_if(f.variables.begin(), f.variables.end(), [&](const Ct2Out& v) { return v.name == name; });
          std::int64_t elements = 1;
          for (auto d : shape) elements *= d;
          *it = {name, shape, dtype, value_bytes(dtype, elements, 1)};
          if (at_end) std::rotate(it, it + 1, f.variables.end());
          if (at_end) {  // nothing after the variable, so that it ends the file: aliases become copies
            for (const auto& [alias, target] : f.aliases) {
              Ct2Out copy = *std::find_if(f.variables.begin(), f.variables.end(), [&](const Ct2Out& v) { return v.name == target; });
              copy.name = alias;
              f.variables.insert(f.variables.begin(), copy);
            }
            f.aliases.clear(), f.version = 2;
          }
          test::write_file(bin, test::ct2_bytes(f));
          INFO("attribute " << name << ", " << shape.size() << "-d shape of " << elements << " elements, dtype "
                            << ct2_dtype_name(dtype) << (at_end ? ", at the end of the file" : ""));
          const std::string message = error_of_call([&] { read_ct2_model(dir->path.string()); });
          if (elements == 1) {
            // A single value, whatever its dtype: read (and maybe refused for its value).
            if (!message.empty()) CHECK_THAT(message, Contains(bin));
          } else if (!message.empty()) {
            // Never a value read from beyond the variable: the shape itself is refused.
            CHECK_THAT(message, Contains(bin + ": attribute '" + name + "' has shape ["));
            CHECK_THAT(message, Contains("expected a single value"));
          }
        }
}

TEST_CASE("malformed model directories: every message names the file and the field", "[ct2][errors]") {
  struct Case {
    std::string what;
    fs::path model;                                 // the good model it starts from
    std::function<void(const fs::path&)> damage;    // applied to a copy
    std::string file, field;                        // both must appear in the message
  };
  auto bin_with = [](const std::function<void(Ct2File&)>& edit) {
    return [edit](const fs::path& dir) {
      Ct2File f = test::read_ct2_file((dir / "model.bin").string());
      edit(f);
      test::write_file((dir / "model.bin").string(), test::ct2_bytes(f));
    };
  };
  auto set_variable = [](Ct2File& f, const std::string& name, Ct2Out v) {
    auto it = std::find_if(f.variables.begin(), f.variables.end(), [&](const Ct2Out& x) { return x.name == name; });
    REQUIRE(it != f.variables.end());
    v.name = name;
    *it = std::move(v);
  };
  auto config_with = [](const std::string& json) { return [json](const fs::path& dir) { write_text(dir / "config.json", json); }; };
  auto ct2_config = [](const std::string& field, const std::string& value) {
    return "{\"add_source_bos\": false, \"add_source_eos\": false, \"unk_token\": \"<unk>\", \"" + field + "\": " + value + "}";
  };
  auto attend_config_with = [](const std::string& field, const nlohmann::json& value) {
    return [field, value](const fs::path& dir) {
      auto j = nlohmann::json::parse(read_text_file((dir / "config.json").string()));
      j[field] = value;
      write_text(dir / "config.json", j.dump());
    };
  };
  auto make_directory = [](const std::string& name) {
    return [name](const fs::path& dir) {
      fs::remove(dir / name);
      fs::create_directories(dir / name);
    };
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();

  const std::vector<Case> cases = {
      {"a scalar where a matrix belongs", kCt2Model,
       bin_with([&](Ct2File& f) { set_variable(f, "encoder/layer_0/ffn/linear_0/weight", test::scalar_f32("", 1)); }),
       "model.bin", "'encoder/layer_0/ffn/linear_0/weight' has shape []"},
      {"an embedding that is a vector", kCt2Model,
       bin_with([&](Ct2File& f) { set_variable(f, "decoder/embeddings/weight", test::f32_variable("", {4}, {1, 2, 3, 4})); }),
       "model.bin", "/weight' has shape [4], expected a matrix"},
      {"num_heads NaN", kCt2Model, bin_with([&](Ct2File& f) { set_variable(f, "encoder/num_heads", test::scalar_f32("", nan)); }),
       "model.bin", "'encoder/num_heads' is nan"},
      {"num_heads 4.5", kCt2Model, bin_with([&](Ct2File& f) { set_variable(f, "encoder/num_heads", test::scalar_f32("", 4.5f)); }),
       "model.bin", "'encoder/num_heads' is 4.5, expected an integer"},
      {"num_heads 1e30", kCt2Model, bin_with([&](Ct2File& f) { set_variable(f, "decoder/num_heads", test::scalar_f32("", 1e30f)); }),
       "model.bin", "'decoder/num_heads' is 1e+30"},
      {"activation 99", kCt2Model, bin_with([&](Ct2File& f) { set_variable(f, "encoder/activation", test::scalar_i8("", 99)); }),
       "model.bin", "'encoder/activation' is 99"},
      {"an infinite embedding scale", kCt2Model,
       bin_with([&](Ct2File& f) {
         set_variable(f, "encoder/scale_embeddings", test::scalar_f32("", std::numeric_limits<float>::infinity()));
       }),
       "model.bin", "'encoder/scale_embeddings' is inf"},
      {"an attribute of shape [0]", kCt2Model,
       bin_with([&](Ct2File& f) { set_variable(f, "encoder/pre_norm", {"", {0}, Ct2DType::i8, {}}); }), "model.bin",
       "'encoder/pre_norm' has shape [0]"},
      {"config.json an array", kCt2Model, config_with("[1, 2]"), "config.json", "must be a JSON object"},
      {"config.json add_source_bos \"yes\"", kCt2Model, config_with(ct2_config("add_source_bos", "\"yes\"")), "config.json",
       "field 'add_source_bos' must be true or false, got \"yes\""},
      {"config.json unk_token a number", kCt2Model, config_with(ct2_config("unk_token", "5")), "config.json",
       "field 'unk_token' must be a string"},
      {"config.json layer_norm_epsilon 1e39", kCt2Model, config_with(ct2_config("layer_norm_epsilon", "1e39")), "config.json",
       "field 'layer_norm_epsilon' must be a finite number > 0"},
      {"config.json layer_norm_epsilon 0", kCt2Model, config_with(ct2_config("layer_norm_epsilon", "0")), "config.json",
       "field 'layer_norm_epsilon'"},
      {"config.json layer_norm_epsilon -1e-6", kCt2Model, config_with(ct2_config("layer_norm_epsilon", "-1e-6")),
       "config.json", "field 'layer_norm_epsilon'"},
      {"config.json decoder_start_token not in the vocabulary", kCt2Model,
       config_with(ct2_config("decoder_start_token", "\"<zz>\"")), "config.json", "field 'decoder_start_token'"},
      {"config.json eos_token not in the vocabulary", kCt2Model, config_with(ct2_config("eos_token", "\"<end>\"")),
       "shared_vocabulary.json", "the special token '<end>'"},
      // No <s>: a model may lack a BOS (CTranslate2's Marian conversion), not the decoder
      // start token it defaults to, nor a BOS its sources get.
      {"the default decoder start token <s> missing from the vocabulary", kCt2Model,
       [](const fs::path& dir) {
         write_text(dir / "config.json", "{}");
         std::string text = read_text_file((dir / "shared_vocabulary.json").string());
         text.replace(text.find("\"<s>\""), 5, "\"<S>\"");
         write_text(dir / "shared_vocabulary.json", text);
       },
       "config.json", "field 'decoder_start_token', by default"},
      {"the default bos_token missing from the vocabulary, and sources get a BOS", kCt2Model,
       [](const fs::path& dir) {
         write_text(dir / "config.json", "{\"add_source_bos\": true, \"decoder_start_token\": \"</s>\"}");
         std::string text = read_text_file((dir / "shared_vocabulary.json").string());
         text.replace(text.find("\"<s>\""), 5, "\"<S>\"");
         write_text(dir / "shared_vocabulary.json", text);
       },
       "config.json", "field 'bos_token', by default"},
      {"config.json a directory", kCt2Model, make_directory("config.json"), "config.json", "directory"},
      {"config.json not JSON", kCt2Model, config_with("{\"unk_token\": "), "config.json", "not valid JSON"},
      {"the vocabulary a directory", kCt2Model, make_directory("shared_vocabulary.json"), "shared_vocabulary.json",
       "directory"},
      {"no model.bin beside CTranslate2's config.json", kCt2Model, [](const fs::path& dir) { fs::remove(dir / "model.bin"); },
       "", "model.bin"},
      {"attend: layer_norm_epsilon 0", kAttendModel, attend_config_with("layer_norm_epsilon", 0), "config.json",
       "field 'layer_norm_epsilon' must be finite and > 0"},
      {"attend: num_heads 4.5", kAttendModel, attend_config_with("num_heads", 4.5), "config.json",
       "field 'num_heads' must be an integer"},
      {"attend: config.json a directory", kAttendModel, make_directory("config.json"), "config.json", "directory"},
      {"attend: source.spm a directory", kAttendModel,
       [](const fs::path& dir) {
         fs::create_directories(dir / "source.spm");
         write_text(dir / "target.spm", "x");
       },
       "source.spm", "not a regular file"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const auto dir = copy_of(c.model);
    c.damage(dir->path);
    const std::string message = error_of_call([&] { load_directory(dir->path); });
    INFO("message: " << message);
    REQUIRE_FALSE(message.empty());
    CHECK_THAT(message, Contains(c.file.empty() ? dir->path.string() : (dir->path / c.file).string()));
    CHECK_THAT(message, Contains(c.field));
    for (const char* raw : {"json.exception", "vector::", "basic_filebuf", "_M_range_check", "std::"})
      CHECK_THAT(message, !Contains(raw));
  }
}

TEST_CASE("vocabulary files: LF or CRLF line ends, the last one optional, read alike", "[text][errors]") {
  const ScratchDir dir;
  const std::vector<std::string> tokens = {"<blank>", "<s>", "</s>", "a", "b c", "ü"};
  auto join = [&](const std::string& end, bool last_end) {
    std::string s;
    for (std::size_t i = 0; i < tokens.size(); ++i) s += tokens[i] + (i + 1 < tokens.size() || last_end ? end : "");
    return s;
  };
  const std::vector<std::pair<std::string, std::string>> files = {
      {"lf.txt", join("\n", true)},          {"lf-no-last.txt", join("\n", false)},
      {"crlf.txt", join("\r\n", true)},      {"crlf-no-last.txt", join("\r\n", false)},
      {"mixed.txt", "<blank>\r\n<s>\n</s>\r\na\nb c\r\nü"},
      {"json.json", nlohmann::json(tokens).dump()},
  };
  for (const auto& [name, text] : files) {
    INFO(name);
    write_text(dir.path / name, text);
    const Vocabulary v = Vocabulary::from_file((dir.path / name).string(), "<unk>");
    CHECK(v.tokens() == std::vector<std::string>{"<blank>", "<s>", "</s>", "a", "b c", "ü", "<unk>"});
    CHECK(v.find("</s>") == 2);
    CHECK(v.unk_id() == 6);
  }
  CHECK_THROWS_WITH(Vocabulary::from_file((dir.path / "missing.txt").string(), "<unk>"), Contains("missing.txt"));
  fs::create_directories(dir.path / "a-directory.txt");
  CHECK_THROWS_WITH(Vocabulary::from_file((dir.path / "a-directory.txt").string(), "<unk>"),
                    Contains("a-directory.txt: is a directory"));
}

}  // namespace attend::runtime
