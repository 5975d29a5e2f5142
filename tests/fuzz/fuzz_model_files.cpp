// libFuzzer target for the model-file parsers: the safetensors header (and its byte
// ranges), config.json, CTranslate2's model.bin and pytorch_model.bin (torch.save's zip
// and legacy layouts, its pickle read without running it). The first input byte picks the parser. Malformed input must
// end in attend::Error; a crash, a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "attend/error.hpp"
#include "formats/ct2_model_file.hpp"
#include "formats/hf/torch_bin.hpp"
#include "model/model_config.hpp"
#include "formats/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const char* text = reinterpret_cast<const char*>(data + 1);
  try {
    if (data[0] % 4 == 3) {
      const auto bin = attend::runtime::parse_torch_bin(std::span(reinterpret_cast<const std::byte*>(data + 1), size - 1),
                                                        "fuzz/pytorch_model.bin");
      volatile std::uint8_t sink = 0;  // every tensor's bytes must lie inside the input (or be a copy of its own)
      for (const auto& [name, t] : bin.tensors)
        for (std::size_t i = 0; i < t.bytes(); ++i) sink = sink ^ std::to_integer<std::uint8_t>(t.data[i]);
    } else if (data[0] % 4 == 2) {
      const auto m = attend::runtime::parse_ct2_model(std::span(reinterpret_cast<const std::byte*>(data + 1), size - 1),
                                                      "fuzz/model.bin");
      volatile std::uint8_t sink = 0;  // every variable's bytes must lie inside the input
      for (const auto& [name, v] : m.variables) {
        for (std::size_t i = 0; i < v.bytes; ++i) sink = sink ^ std::to_integer<std::uint8_t>(v.data[i]);
        try {  // an attribute's value is read from its own bytes only, whatever its shape
          (void)v.scalar("fuzz/model.bin");
        } catch (const attend::Error&) {
        }
      }
      for (const auto& [alias, target] : m.aliases) (void)m.find(alias);
    } else if (data[0] % 4 == 1) {
      attend::runtime::ModelConfig::from_json(std::string_view(text, size - 1), "fuzz/config.json");
    } else {
      const auto header = attend::runtime::parse_safetensors(
          std::span(reinterpret_cast<const std::byte*>(data + 1), size - 1), "fuzz/model.safetensors");
      // Every range the parser accepted must lie inside the input: touch each byte.
      volatile std::uint8_t sink = 0;
      for (const auto& [name, t] : header.tensors)
        for (std::size_t i = 0; i < t.bytes(); ++i) sink = sink ^ std::to_integer<std::uint8_t>(t.data[i]);
    }
  } catch (const attend::Error&) {
  }
  return 0;
}
