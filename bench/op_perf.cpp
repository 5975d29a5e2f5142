// The differential harness in perf mode (after ggml's test-backend-ops "perf"): runs
// the op cases at benchmark sizes and prints time, GFLOP/s and GB/s from the FLOP and
// byte counts each case declares. Tests check the same cases for correctness.
//
//   op_perf [--threads N] [--isa avx512|avx2|sse2] [--filter SUBSTRING] [--check] [--cpu-time]
//
// --cpu-time times by the process's CPU seconds (all its threads) instead of the wall
// clock: on a machine others load, time-slicing then does not count (their cache
// traffic still does). With --threads 1 that is the kernel's own time.
//
// --check also runs the reference once per case and prints the error (slow for big
// GEMMs: the reference is a triple loop in double).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "attend/ops/isa.hpp"
#include "ops/op_cases.hpp"

namespace {

double now_seconds(bool cpu_time) {
  if (cpu_time) {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double seconds_per_run(attend::test::OpCase& c, int threads, bool cpu_time) {
  c.run(threads);  // warm caches, fault in pages
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    int runs = 0;
    const double start = now_seconds(cpu_time);
    double elapsed = 0;
    do {
      c.run(threads);
      ++runs;
      elapsed = now_seconds(cpu_time) - start;
    } while (elapsed < 0.05);
    best = std::min(best, elapsed / runs);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  std::string filter;
  bool check = false;
  bool cpu_time = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--isa") && i + 1 < argc) {
      attend::ops::set_isa(attend::ops::parse_isa(argv[++i]));
    } else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) {
      filter = argv[++i];
    } else if (!std::strcmp(argv[i], "--check")) {
      check = true;
    } else if (!std::strcmp(argv[i], "--cpu-time")) {
      cpu_time = true;
    } else {
      std::fprintf(stderr, "usage: op_perf [--threads N] [--isa avx512|avx2|sse2] [--filter S] [--check] [--cpu-time]\n");
      return 2;
    }
  }
  const attend::ops::Isa isa = attend::ops::active_isa();
  attend::test::Rng rng(42);
  std::printf("isa %s, %d thread(s)\n%-56s %12s %10s %10s%s\n", attend::ops::isa_name(isa), threads, "case", "time [us]",
              "GFLOP/s", "GB/s", check ? "      error" : "");
  for (attend::test::OpCase& c : attend::test::all_op_cases(rng, attend::test::CaseScale::perf, isa)) {
    if (!filter.empty() && c.name.find(filter) == std::string::npos) continue;
    const double s = seconds_per_run(c, threads, cpu_time);
    std::printf("%-56s %12.1f %10.2f %10.2f", c.name.c_str(), s * 1e6, c.flops / s * 1e-9, c.bytes / s * 1e-9);
    if (check) {
      c.reference();
      std::printf("  %9.2e", c.error());
    }
    std::printf("\n");
    std::fflush(stdout);
  }
}
