// A JSON file of a model directory (config.json, generation_config.json, modules.json,
// tokenizer_config.json, …), its fields read with the file and the field named in every
// error: "…/config.json: field 'n_layers' must be in [1, 1024], got 0". Absent and null
// fields are alike: both take the fallback.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace attend::runtime {

class JsonFile {
 public:
  // Reads and parses `path`; throws attend::Error naming it when it is missing, not
  // JSON, or neither an object nor an array.
  explicit JsonFile(std::string path);
  // An object given in memory (a nested one), `path` naming it in errors.
  JsonFile(std::string path, nlohmann::json value) : path_(std::move(path)), json_(std::move(value)) {}

  const std::string& path() const { return path_; }
  const nlohmann::json& value() const { return json_; }
  bool has(const std::string& key) const;
  [[noreturn]] void bad(const std::string& key, const std::string& why) const;

  std::int64_t integer(const std::string& key) const;  // required
  std::int64_t integer_or(const std::string& key, std::int64_t fallback) const;
  std::optional<std::int64_t> optional_integer(const std::string& key) const;
  // An integer within [low, high], named in the error when it is not.
  std::int64_t integer_in(const std::string& key, std::int64_t low, std::int64_t high) const;  // required
  std::int64_t integer_in_or(const std::string& key, std::int64_t fallback, std::int64_t low, std::int64_t high) const;
  double number_or(const std::string& key, double fallback) const;
  bool flag_or(const std::string& key, bool fallback) const;
  std::string text_or(const std::string& key, const std::string& fallback) const;
  // A list of strings (architectures), or nullopt when absent.
  std::optional<std::vector<std::string>> strings(const std::string& key) const;

 private:
  std::string path_;
  nlohmann::json json_;
};

}  // namespace attend::runtime
