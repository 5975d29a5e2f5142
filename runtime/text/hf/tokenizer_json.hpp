// A tokenizer.json read into the pipeline pieces it names (pipeline.hpp).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "text/hf/added_vocabulary.hpp"
#include "text/hf/decoders.hpp"
#include "text/hf/pipeline.hpp"
#include "text/hf_tokenizer.hpp"

namespace attend::runtime {

struct HfTokenizer::Pipeline {
  std::string file;  // for messages
  hf::AddedVocabulary added;
  std::unique_ptr<hf::Normalizer> normalizer;        // null: none
  std::unique_ptr<hf::PreTokenizer> pre_tokenizer;   // null: none
  std::unique_ptr<hf::Model> model;
  std::unique_ptr<hf::PostProcessor> post_processor;  // null: none
  std::unique_ptr<hf::Decoder> decoder;               // null: none (tokens joined by spaces)
  std::string decoder_unsupported;                    // why decode() cannot run (encoding still can)
  std::int32_t pad_id = -1;
  std::int64_t truncation_max_length = 0;
  // Whether a long text may be read piece by piece (text_pieces.hpp): the normalizer is
  // local, the pre-tokenizer splits at spaces first, and no added token holds a space or
  // takes the white space on its right.
  bool reads_in_pieces = false;
};

namespace hf {

// Reads `path`; throws attend::Error naming the file and the field (as a JSON path:
// normalizer.normalizers[1].type) for anything missing, malformed or unsupported.
std::shared_ptr<const HfTokenizer::Pipeline> read_tokenizer_json(const std::filesystem::path& path);

// Whether `p` may read a long text piece by piece (Pipeline::reads_in_pieces).
bool reads_in_pieces(const HfTokenizer::Pipeline& p);

}  // namespace hf
}  // namespace attend::runtime
