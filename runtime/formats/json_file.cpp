#include "formats/json_file.hpp"

#include <filesystem>

#include "attend/error.hpp"
#include "formats/json_errors.hpp"
#include "formats/model_io.hpp"

namespace attend::runtime {

using json = nlohmann::json;

JsonFile::JsonFile(std::string path) : path_(std::move(path)) {
  if (!std::filesystem::exists(path_)) throw error_of(path_, ": missing");
  try {
    json_ = json::parse(read_text_file(path_));
  } catch (const json::exception& e) {
    throw error_of(path_, ": not valid JSON (", json_reason(e), ")");
  }
  if (!json_.is_object() && !json_.is_array()) throw error_of(path_, ": must be a JSON object");
}

bool JsonFile::has(const std::string& key) const {
  return json_.is_object() && json_.contains(key) && !json_[key].is_null();
}

void JsonFile::bad(const std::string& key, const std::string& why) const {
  throw error_of(path_, ": field '", key, "' ", why);
}

std::int64_t JsonFile::integer(const std::string& key) const {
  if (!has(key)) bad(key, "is missing");
  return integer_or(key, 0);
}

std::int64_t JsonFile::integer_or(const std::string& key, std::int64_t fallback) const {
  return optional_integer(key).value_or(fallback);
}

std::optional<std::int64_t> JsonFile::optional_integer(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const json& v = json_[key];
  if (!v.is_number_integer()) bad(key, "must be an integer, got " + v.dump());
  return v.get<std::int64_t>();
}

std::int64_t JsonFile::integer_in(const std::string& key, std::int64_t low, std::int64_t high) const {
  if (!has(key)) bad(key, "is missing");
  return integer_in_or(key, 0, low, high);
}

std::int64_t JsonFile::integer_in_or(const std::string& key, std::int64_t fallback, std::int64_t low, std::int64_t high) const {
  const std::int64_t v = integer_or(key, fallback);
  if (has(key) && (v < low || v > high))
    bad(key, "must be in [" + std::to_string(low) + ", " + std::to_string(high) + "], got " + std::to_string(v));
  return v;
}

double JsonFile::number_or(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  const json& v = json_[key];
  if (!v.is_number()) bad(key, "must be a number, got " + v.dump());
  return v.get<double>();
}

bool JsonFile::flag_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& v = json_[key];
  if (!v.is_boolean()) bad(key, "must be true or false, got " + v.dump());
  return v.get<bool>();
}

std::string JsonFile::text_or(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const json& v = json_[key];
  if (!v.is_string()) bad(key, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

std::optional<std::vector<std::string>> JsonFile::strings(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const json& v = json_[key];
  if (!v.is_array()) bad(key, "must be a list of strings, got " + v.dump());
  std::vector<std::string> out;
  for (const json& s : v) {
    if (!s.is_string()) bad(key, "must be a list of strings, got " + v.dump());
    out.push_back(s.get<std::string>());
  }
  return out;
}

}  // namespace attend::runtime
