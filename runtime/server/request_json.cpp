#include "server/request_json.hpp"

#include <limits>

#include "server/api_error.hpp"

namespace attend::server {

json parse_object(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 3: …": the part after the tag.
    std::string what = e.what();
    if (const auto end = what.find("] "); what.rfind("[json.exception", 0) == 0 && end != std::string::npos)
      what = what.substr(end + 2);
    throw bad_request("the body is not valid JSON: " + what);
  }
  if (!j.is_object()) throw bad_request("the body must be a JSON object, not " + kind_of(j));
  return j;
}

std::string kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array of " + std::to_string(v.size()) + " item(s)";
    case json::value_t::object: return "an object";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "a value of another kind";
  }
}

namespace {

const json* field_of(const json& object, const char* field) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

ApiError wrong(const char* field, const char* wanted, const json& got) {
  return bad_request(std::string("field '") + field + "': must be " + wanted + ", got " + kind_of(got));
}

}  // namespace

std::optional<bool> optional_bool(const json& object, const char* field) {
  const json* v = field_of(object, field);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw wrong(field, "true or false", *v);
  return v->get<bool>();
}

std::optional<std::string> optional_string(const json& object, const char* field) {
  const json* v = field_of(object, field);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw wrong(field, "a string", *v);
  return v->get<std::string>();
}

std::string required_string(const json& object, const char* field) {
  auto s = optional_string(object, field);
  if (!s) throw bad_request(std::string("field '") + field + "' is required (a string)");
  return *s;
}

std::optional<std::int64_t> optional_integer(const json& object, const char* field, std::int64_t lowest,
                                             std::int64_t highest) {
  const json* v = field_of(object, field);
  if (!v) return std::nullopt;
  const std::string range = "an integer in [" + std::to_string(lowest) + ", " + std::to_string(highest) + "]";
  if (v->is_number_unsigned()) {
    const auto u = v->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(highest) || static_cast<std::int64_t>(u) < lowest)
      throw bad_request(std::string("field '") + field + "': must be " + range + ", got " + std::to_string(u));
    return static_cast<std::int64_t>(u);
  }
  if (!v->is_number_integer()) throw wrong(field, range.c_str(), *v);
  const auto i = v->get<std::int64_t>();
  if (i < lowest || i > highest)
    throw bad_request(std::string("field '") + field + "': must be " + range + ", got " + std::to_string(i));
  return i;
}

std::optional<double> optional_number(const json& object, const char* field) {
  const json* v = field_of(object, field);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw wrong(field, "a number", *v);
  return v->get<double>();
}

std::vector<std::int32_t> token_ids(const json& array, const std::string& where) {
  if (!array.is_array()) throw bad_request(where + ": must be a list of token ids, got " + kind_of(array));
  std::vector<std::int32_t> ids;
  ids.reserve(array.size());
  for (std::size_t k = 0; k < array.size(); ++k) {
    const json& v = array[k];
    const bool ok = (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::numeric_limits<std::int32_t>::max()) ||
                    (v.is_number_integer() && v.get<std::int64_t>() >= 0 &&
                     v.get<std::int64_t>() <= std::numeric_limits<std::int32_t>::max());
    if (!ok) throw bad_request(where + ", token " + std::to_string(k) + ": must be a token id (an integer ≥ 0), got " + kind_of(v));
    ids.push_back(static_cast<std::int32_t>(v.get<std::int64_t>()));
  }
  return ids;
}

std::vector<TextOrIds> texts_or_ids(const json& object, const char* field) {
  const json* v = field_of(object, field);
  const std::string name = std::string("field '") + field + "'";
  if (!v) throw bad_request(name + " is required: a string, a list of strings, or token ids");
  std::vector<TextOrIds> out;
  if (v->is_string()) {
    out.push_back({v->get<std::string>(), {}, false});
    return out;
  }
  if (!v->is_array()) throw bad_request(name + ": must be a string, a list of strings, or token ids, got " + kind_of(*v));
  if (v->empty()) throw empty_input(name + " is empty: give at least one input");
  bool all_numbers = true;
  for (const json& item : *v) all_numbers = all_numbers && item.is_number();
  if (all_numbers) {  // [101, 7592, 102]: one input of token ids
    out.push_back({{}, token_ids(*v, name), true});
    return out;
  }
  out.reserve(v->size());
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    const std::string where = name + ", item " + std::to_string(i);
    if (item.is_string()) {
      out.push_back({item.get<std::string>(), {}, false});
    } else if (item.is_array()) {
      if (item.empty()) throw empty_input(where + ": an empty list of token ids");
      out.push_back({{}, token_ids(item, where), true});
    } else {
      throw bad_request(where + ": must be a string or a list of token ids, got " + kind_of(item));
    }
  }
  return out;
}

std::vector<std::string> string_list(const json& object, const char* field, bool* single) {
  const json* v = field_of(object, field);
  const std::string name = std::string("field '") + field + "'";
  if (!v) throw bad_request(name + " is required: a string or a list of strings");
  if (single) *single = v->is_string();
  if (v->is_string()) return {v->get<std::string>()};
  if (!v->is_array()) throw bad_request(name + ": must be a string or a list of strings, got " + kind_of(*v));
  if (v->empty()) throw empty_input(name + " is empty: give at least one text");
  std::vector<std::string> out;
  out.reserve(v->size());
  for (std::size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string())
      throw bad_request(name + ", item " + std::to_string(i) + ": must be a string, got " + kind_of((*v)[i]));
    out.push_back((*v)[i].get<std::string>());
  }
  return out;
}

const char* status_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Error";
  }
}

}  // namespace attend::server
