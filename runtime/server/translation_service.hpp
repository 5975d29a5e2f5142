// An encoder-decoder model served: /translate. Sources are encoded on the HTTP thread as
// `attend translate` encodes its lines (SentencePiece, blank → empty, cut to the
// translator's source limit), and requests that ask the same decoding share a batch: one
// Translator::translate_ids call. A request that samples runs alone, so that its
// sentences draw with their own indices (0, 1, … in the request, as the CLI's lines do)
// whatever else is queued.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "attend/server.hpp"
#include "server/model_service.hpp"

namespace attend::server {

struct TranslationOutcome {
  std::vector<TranslationResult> results;
  std::string error;
  JobTiming timing;
};

struct TranslationJob : Job {
  std::vector<std::vector<std::int32_t>> sources, prefixes;  // prefixes: none, or one per source
  TranslationOptions options;
  std::function<void(TranslationOutcome&&)> done;
};

class TranslationService final : public ModelService {
 public:
  TranslationService(const ServedModel& spec, const runtime::RequestBatchLimits& limits);
  ~TranslationService() override;

  std::string kind() const override { return "translation"; }
  const Model& model() const { return *model_; }
  const Translator& translator() const { return *translator_; }

  // The group of a request: requests with equal decoding options (and prefixes or not)
  // share batches; sampling ones never do.
  std::string group_of(const TranslationOptions& options, bool prefixed);

 private:
  void load() override;
  void run_batch(const std::vector<std::shared_ptr<Job>>& jobs, int lane, int threads) override;

  ServedModel spec_;
  std::optional<Model> model_;
  std::optional<Translator> translator_;
  std::atomic<std::uint64_t> solo_{0};
};

}  // namespace attend::server
