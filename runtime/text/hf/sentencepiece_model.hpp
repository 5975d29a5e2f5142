// A SentencePiece model file (sentencepiece.bpe.model, *.model): the ModelProto's pieces,
// model type, special ids and normalizer charsmap, read from the protobuf wire format
// (no protobuf library: these are all attend needs, vocab_files.cpp uses them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attend::runtime::hf {

struct SentencePieceModel {
  enum class PieceType { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };
  struct Piece {
    std::string piece;
    float score = 0;
    PieceType type = PieceType::normal;
  };
  std::vector<Piece> pieces;
  int model_type = 1;                // TrainerSpec.model_type: 1 unigram, 2 BPE, 3 word, 4 char
  std::int32_t unk_id = 0;           // TrainerSpec.unk_id
  std::string precompiled_charsmap;  // NormalizerSpec.precompiled_charsmap (may be empty)
};

// Throws attend::Error naming the file for anything that is not such a model.
SentencePieceModel read_sentencepiece_model(const std::filesystem::path& path);

}  // namespace attend::runtime::hf
