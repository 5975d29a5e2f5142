// Writes a small random model directory (config.json + model.safetensors) whose
// vocabulary sizes and special ids match SentencePiece models trained by
// make_cli_fixture.sh, for the CLI and API tests.
//
//   make_test_model DIR SRC_VOCAB TGT_VOCAB MAX_POSITIONS SHARED(0|1) SEED [overflow]
//
// `overflow`: the decoder's final LayerNorm scales by 3e38 — every weight is finite (so
// the model loads), but its activations overflow to ±∞ and its logits are NaN, as a
// damaged model's would be.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <exception>
#include <string>

#include "formats/memory_tensor_source.hpp"
#include "formats/model_io.hpp"
#include "model/random_model.hpp"

int main(int argc, char** argv) {
  if (argc != 7 && !(argc == 8 && std::string(argv[7]) == "overflow")) {
    std::fprintf(stderr, "usage: make_test_model DIR SRC_VOCAB TGT_VOCAB MAX_POSITIONS SHARED SEED [overflow]\n");
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
    c.validate(argv[1]);
    const auto weights = random_weights(c, std::strtoull(argv[6], nullptr, 10));
    MemoryTensorSource out("make_test_model");
    for (const std::string& name : weights->names()) {
      std::vector<float> values = to_f32(*weights->find(name));
      if (argc == 8 && name == "decoder.layer_norm.weight") std::fill(values.begin(), values.end(), 3e38f);
      out.add(name, weights->find(name)->shape, std::move(values));
    }
    save_model(argv[1], c, out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_test_model: %s\n", e.what());
    return 1;
  }
  return 0;
}
