// What the library's other parts (the HTTP server, runtime/server) use of an
// attend::Translator beyond its public API: calls whose batches run on as many threads as
// the caller says (the server's lanes share the threads: a lane alone takes them all).
// Not installed.
#pragma once

#include "attend/attend.hpp"

namespace attend {

struct TranslatorInternals {
  // Translator::translate_ids with each batch on `threads` compute threads, one batch
  // after another (0: the translator's split); the results are the same bits whatever
  // the threads.
  static std::vector<TranslationResult> translate_ids(const Translator& translator,
                                                      const std::vector<std::vector<std::int32_t>>& sources,
                                                      const TranslationOptions& options,
                                                      const std::vector<std::vector<std::int32_t>>& target_prefixes,
                                                      int threads);
  // The compute threads of each workspace waiting for a call: what the latest calls'
  // batches ran on.
  static std::vector<int> idle_workspace_threads(const Translator& translator);
};

}  // namespace attend
