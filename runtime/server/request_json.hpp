// Reading a request's JSON body: parsed strictly (invalid JSON or UTF-8 is a 400 that
// says where), every field checked for its type, each error naming the field and what
// it accepts. Unknown fields are ignored, as the peers' servers ignore them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace attend::server {

using json = nlohmann::json;

// The body as a JSON object (400 otherwise).
json parse_object(const std::string& body);

// What a field of the object holds; absent or null: nullopt. A value of another type: 400
// naming `field`.
std::optional<bool> optional_bool(const json& object, const char* field);
std::optional<std::string> optional_string(const json& object, const char* field);
std::optional<std::int64_t> optional_integer(const json& object, const char* field, std::int64_t lowest,
                                             std::int64_t highest);
std::optional<double> optional_number(const json& object, const char* field);
std::string required_string(const json& object, const char* field);

// "a string", "an array of 3 items", "a number": what a value is, for messages.
std::string kind_of(const json& value);

// One input of an encoder: a text or token ids.
struct TextOrIds {
  std::string text;
  std::vector<std::int32_t> ids;
  bool is_ids = false;
};

// An "input"/"inputs" field as OpenAI and TEI take it: a string, an array of strings, an
// array of token ids (one input), or an array whose items are strings or arrays of ids.
// An empty array is a 400 (Empty); ids outside [0, 2^31) a 400 naming the item.
std::vector<TextOrIds> texts_or_ids(const json& object, const char* field);

// A JSON array of token ids (each an integer in [0, 2^31)); 400 naming `where` otherwise.
std::vector<std::int32_t> token_ids(const json& array, const std::string& where);

// A list of strings: a string alone is a list of one (`single` says which it was).
std::vector<std::string> string_list(const json& object, const char* field, bool* single = nullptr);

}  // namespace attend::server
