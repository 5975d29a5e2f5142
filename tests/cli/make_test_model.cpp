// Writes a small random model directory (config.json + model.safetensors) whose
// vocabulary sizes and special ids match SentencePiece models trained by
// make_cli_fixture.sh, for the CLI and API tests.
//
//   make_test_model DIR SRC_VOCAB TGT_VOCAB MAX_POSITIONS SHARED(0|1) SEED [overflow|late-overflow]
//
// `overflow`: the decoder's final LayerNorm scales by 3e38 — every weight is finite (so
// the model loads), but its activations overflow to ±∞ and its logits are NaN, as a
// damaged model's would be.
// `late-overflow`: only the decoder start token (the pad id here, never generated: its
// output bias is −1e30) embeds to finite values, every other target embedding is 3e38,
// so the first step's logits are finite and every later step's are NaN — a damage that
// shows only after the first token.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <exception>
#include <string>

#include "formats/memory_tensor_source.hpp"
#include "formats/model_io.hpp"
#include "model/random_model.hpp"

int main(int argc, char** argv) {
  const std::string damage = argc == 8 ? argv[7] : "";
  if (argc < 7 || argc > 8 || !(damage.empty() || damage == "overflow" || damage == "late-overflow")) {
    std::fprintf(stderr, "usage: make_test_model DIR SRC_VOCAB TGT_VOCAB MAX_POSITIONS SHARED SEED [overflow|late-overflow]\n");
    return 2;
  }
  try {
    using namespace attend::runtime;
    ModelConfig c = preset_config("tiny");
    c.name = "cli-test";
    c.src_vocab_size = std::atoll(argv[2]);
    c.tgt_vocab_size = std::atoll(argv[3]);
    c.max_positions = std::atoll(argv[4]);
    c.shared_embeddings = std::atoi(argv[5]) != 0;
    // SentencePiece trained with --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=3.
    c.unk_id = 0, c.bos_id = 1, c.eos_id = 2, c.pad_id = 3, c.decoder_start_id = 1;
    c.add_source_eos = true;
    if (damage == "late-overflow") c.decoder_start_id = c.pad_id;
    c.validate(argv[1]);
    const auto weights = random_weights(c, std::strtoull(argv[6], nullptr, 10));
    MemoryTensorSource out("make_test_model");
    for (const std::string& name : weights->names()) {
      std::vector<float> values = to_f32(*weights->find(name));
      if (damage == "overflow" && name == "decoder.layer_norm.weight") std::fill(values.begin(), values.end(), 3e38f);
      if (damage == "late-overflow" && name == "decoder.embed_tokens.weight")
        for (std::int64_t row = 0; row < c.tgt_vocab_size; ++row)
          if (row != c.decoder_start_id) std::fill_n(values.begin() + row * c.d_model, c.d_model, 3e38f);
      if (damage == "late-overflow" && name == "output_projection.bias") values[c.decoder_start_id] = -1e30f;
      out.add(name, weights->find(name)->shape, std::move(values));
    }
    save_model(argv[1], c, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_test_model: %s\n", e.what());
    return 1;
  }
  return 0;
}
