// Writing answers: vectors of floats as the shortest text that reads back as the same
// float32 (as `attend embed` writes them, so that a client parsing the JSON gets the
// CLI's bits), or as base64 of their little-endian bytes (OpenAI's encoding_format);
// and a model's description for /info.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "attend/server.hpp"

namespace attend::server {

class ModelService;

// The shortest decimal that reads back as `v` (null for a non-finite value: JSON has none).
void append_float(std::string& out, float v);
// [v0,v1,…]
void append_floats(std::string& out, std::span<const float> values);
// Standard base64 (RFC 4648, padded) of the floats' bytes, little-endian as x86 keeps them.
std::string base64_floats(std::span<const float> values);
// A JSON string literal (invalid UTF-8 replaced by U+FFFD).
void append_string(std::string& out, const std::string& text);

// TEI's Info of one model, with attend's additions (kind, directory, compute type).
nlohmann::ordered_json model_info_json(const ModelService& model, const ServerOptions& options);

}  // namespace attend::server
