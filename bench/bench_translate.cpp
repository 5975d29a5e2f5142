// The standard translation workload on attend: a model directory and a file of source
// ids (one sentence per line), batches of --batch, exactly --tgt-len generated tokens
// per sentence (min = max length), greedy or --beam K, --threads T. Prints one JSON
// object: generated tokens/s, time, peak RSS and the memory bound of the issue
// (1.5 × fp32 weights + the plan's arena). bench/standard_workload.py runs it beside
// PyTorch.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attend/error.hpp"
#include "model_io.hpp"
#include "translator.hpp"

namespace {

std::vector<std::vector<std::int32_t>> read_ids(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw attend::error_of(path, ": cannot open");
  std::vector<std::vector<std::int32_t>> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream s(line);
    out.emplace_back();
    for (std::int32_t id; s >> id;) out.back().push_back(id);
  }
  return out;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_dir, input;
  int threads = 2;
  bool profile = false;
  std::int64_t batch = 32, tgt_len = 48, beam = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model") model_dir = value;
    else if (flag == "--profile") profile = value == "1";
    else if (flag == "--input") input = value;
    else if (flag == "--threads") threads = std::atoi(value.c_str());
    else if (flag == "--batch") batch = std::atoll(value.c_str());
    else if (flag == "--tgt-len") tgt_len = std::atoll(value.c_str());
    else if (flag == "--beam") beam = std::atoll(value.c_str());
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (model_dir.empty() || input.empty()) {
    std::fprintf(stderr, "usage: bench_translate --model DIR --input IDS [--threads 2] [--batch 32] [--tgt-len 48] [--beam 1]\n");
    return 2;
  }
  try {
    const auto sources = read_ids(input);
    std::int64_t longest = 1;
    for (const auto& s : sources) longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(s.size()));
    const auto load_start = std::chrono::steady_clock::now();
    auto model = attend::runtime::load_model(model_dir);
    const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
    attend::runtime::TranslatorConfig tc;
    tc.threads = threads, tc.max_batch_size = batch, tc.max_source_length = longest;
    tc.max_target_length = tgt_len, tc.max_beam_size = beam;
    attend::runtime::Translator translator(model, tc);
    attend::runtime::DecodeOptions o;
    o.beam_size = beam, o.min_length = o.max_length = tgt_len;

    translator.set_profiling(profile);
    const auto start = std::chrono::steady_clock::now();
    const auto results = translator.translate(sources, o);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::int64_t generated = 0;
    for (const auto& r : results) generated += static_cast<std::int64_t>(r.hypotheses.at(0).tokens.size());
    const double weights_mib = double(model->report().parameters) * 4 / (1 << 20);
    const double arena_mib = double(translator.plan().arena_bytes()) / (1 << 20);
    std::printf(
        "{\"engine\": \"attend\", \"threads\": %d, \"beam\": %lld, \"sentences\": %zu, \"generated_tokens\": %lld, "
        "\"seconds\": %.3f, \"generated_tokens_per_second\": %.1f, \"load_seconds\": %.2f, \"peak_rss_mib\": %.1f, "
        "\"fp32_weights_mib\": %.1f, \"arena_mib\": %.1f, \"memory_bound_mib\": %.1f}\n",
        threads, static_cast<long long>(beam), sources.size(), static_cast<long long>(generated), seconds,
        generated / seconds, load_seconds, peak_rss_mib(), weights_mib, arena_mib, 1.5 * weights_mib + arena_mib);
    if (profile) {  // time per step kind and phase, % of the measured run
      std::map<std::string, double> by_kind;
      const auto seconds_per_step = translator.step_seconds();
      for (size_t i = 0; i < seconds_per_step.size(); ++i) {
        const auto& step = translator.plan().steps()[i];
        std::string key = step.phase == attend::runtime::Phase::encoder ? "encoder " : "decoder ";
        key.append(attend::runtime::step_kind_name(step.kind));
        if (step.kind == attend::runtime::StepKind::linear) key.append(" ").append(step.name.substr(step.name.rfind('.') + 1));
        by_kind[key] += seconds_per_step[i];
      }
      by_kind["search and bookkeeping"] = translator.search_seconds();
      std::vector<std::pair<double, std::string>> sorted;
      for (auto& [k, v] : by_kind) sorted.push_back({v, k});
      std::sort(sorted.rbegin(), sorted.rend());
      for (auto& [v, k] : sorted) std::fprintf(stderr, "%6.2f s %5.1f%%  %s\n", v, 100 * v / seconds, k.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_translate: %s\n", e.what());
    return 1;
  }
}
