// Where `attend translate` writes: standard output ('-'), or a file that is replaced
// only when the run succeeds. Lines go to a temporary file beside it, renamed over it at
// the end, so a failure — a missing model, a bad line under --strict, a full disk —
// never destroys what the file held, and `-i F -o F` translates F in place. Ctrl-C,
// SIGTERM and SIGHUP are failures too (interrupts.hpp): the lines written before the
// signal are kept in FILE.partial, and no temporary file is left behind.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "interrupts.hpp"

namespace attend::cli {

class OutputFile {
 public:
  // Creates the temporary file (throws attend::Error naming the path if it cannot).
  // Devices and pipes (/dev/null, a FIFO) are written directly. `what` names the file
  // in every message ("output", "attention file").
  explicit OutputFile(const std::string& path, std::string what = "output");
  ~OutputFile();  // if not committed: the file is left as it was (see abandon())
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* stream() const { return stream_; }
  // "the output out.txt", "the output (standard output)": for messages about writing it.
  std::string label() const;
  // Flushes and puts the output in place; throws attend::Error on a write failure.
  void commit();
  // After a failure: the file keeps its old contents; lines already written are kept
  // in PATH.partial (a note on stderr says so) rather than lost.
  void abandon(std::uint64_t lines_written, const char* who);
  // A format of which a cut file is of no use (a .npy's header says how many rows
  // follow): an interrupt keeps no PATH.partial, as abandon(0, …) keeps none.
  void keep_no_partial() { keep_partial_ = false; }

 private:
  void end_on_interrupt();  // on the signal-watching thread; the process ends after

  std::string path_, what_, temporary_;
  std::FILE* stream_ = nullptr;
  bool done_ = false;
  bool keep_partial_ = true;
  std::optional<OnInterrupt> on_interrupt_;  // while the temporary file exists
};

// Whether two paths name the same existing file (hard links and symlinks included).
bool same_file(const std::string& a, const std::string& b);

}  // namespace attend::cli
