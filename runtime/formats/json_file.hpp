// A JSON file of a model directory (config.json, modules.json, …), its fields read with
// the file and the field named in every error: "…/config.json: field 'n_layers' must be
// in [1, 1024], got 0".
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "attend/error.hpp"
#include "formats/json_errors.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {

class JsonFile {
 public:
  explicit JsonFile(std::string path) : path_(std::move(path)) {
    if (!std::filesystem::exists(path_)) throw error_of(path_, ": missing");
    try {
      json_ = nlohmann::json::parse(read_text_file(path_));
    } catch (const nlohmann::json::exception& e) {
      throw error_of(path_, ": not valid JSON (", json_reason(e), ")");
    }
    if (!json_.is_object() && !json_.is_array()) throw error_of(path_, ": must be a JSON object");
  }
  const std::string& path() const { return path_; }
  const nlohmann::json& value() const { return json_; }
  bool has(const std::string& key) const { return json_.is_object() && json_.contains(key) && !json_[key].is_null(); }
  [[noreturn]] void bad(const std::string& key, const std::string& why) const {
    throw error_of(path_, ": field '", key, "' ", why);
  }
  std::int64_t integer(const std::string& key) const {
    if (!has(key)) bad(key, "is missing");
    return integer_or(key, 0);
  }
  std::int64_t integer_or(const std::string& key, std::int64_t fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = json_[key];
    if (!v.is_number_integer()) bad(key, "must be an integer, got " + v.dump());
    return v.get<std::int64_t>();
  }
  // An integer field within [low, high], named in the error when it is not.
  std::int64_t integer_in(const std::string& key, std::int64_t low, std::int64_t high) const {
    if (!has(key)) bad(key, "is missing");
    return integer_in_or(key, 0, low, high);
  }
  std::int64_t integer_in_or(const std::string& key, std::int64_t fallback, std::int64_t low, std::int64_t high) const {
    const std::int64_t v = integer_or(key, fallback);
    if (has(key) && (v < low || v > high))
      bad(key, "must be in [" + std::to_string(low) + ", " + std::to_string(high) + "], got " + std::to_string(v));
    return v;
  }
  double number_or(const std::string& key, double fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = json_[key];
    if (!v.is_number()) bad(key, "must be a number, got " + v.dump());
    return v.get<double>();
  }
  bool flag_or(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = json_[key];
    if (!v.is_boolean()) bad(key, "must be true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string text_or(const std::string& key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& v = json_[key];
    if (!v.is_string()) bad(key, "must be a string, got " + v.dump());
    return v.get<std::string>();
  }

 private:
  std::string path_;
  nlohmann::json json_;
};

}  // namespace attend::runtime
