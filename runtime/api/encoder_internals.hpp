// What the library's other parts (the HTTP server, runtime/server) read of an
// attend::Encoder beyond its public API: the Hugging Face tokenizer it encodes text with,
// for truncation from the left and tokens without special tokens (TEI's /embed and
// /tokenize options). Not installed.
#pragma once

#include "attend/encoder.hpp"
#include "text/hf_tokenizer.hpp"

namespace attend {

struct EncoderInternals {
  // The model's tokenizer.json, or null (a CTranslate2 encoder: ids only).
  static const runtime::HfTokenizer* tokenizer(const Encoder& encoder);
};

}  // namespace attend
