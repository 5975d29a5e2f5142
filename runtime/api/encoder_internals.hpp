// What the library's other parts (the HTTP server, runtime/server) use of an
// attend::Encoder beyond its public API: the Hugging Face tokenizer it encodes text with,
// for truncation from the left and tokens without special tokens (TEI's /embed and
// /tokenize options), and calls whose batches run on as many threads as the caller says
// (the server's lanes share the threads: a lane alone takes them all). Not installed.
#pragma once

#include "attend/encoder.hpp"
#include "text/hf_tokenizer.hpp"

namespace attend {

struct EncoderInternals {
  // The model's tokenizer.json, or null (a CTranslate2 encoder: ids only).
  static const runtime::HfTokenizer* tokenizer(const Encoder& encoder);

  // Encoder::embed_ids and classify_ids with each batch on `threads` compute threads (0:
  // the encoder's split); the results are the same bits whatever the threads.
  static std::vector<std::vector<float>> embed_ids(const Encoder& encoder, const std::vector<std::vector<std::int32_t>>& ids,
                                                   const EmbedOptions& options, int threads);
  static std::vector<Classification> classify_ids(const Encoder& encoder, const std::vector<std::vector<std::int32_t>>& ids,
                                                  const std::vector<std::vector<std::int32_t>>& token_type_ids, int threads);
  // The compute threads of each workspace waiting for a call: what the latest calls'
  // batches ran on.
  static std::vector<int> idle_workspace_threads(const Encoder& encoder);
};

}  // namespace attend
