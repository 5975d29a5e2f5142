// Restores the process ISA (ops::set_isa) a test block changes, e.g. to run once per ISA.
#pragma once

#include "attend/ops/isa.hpp"

namespace attend::test {

class ProcessIsaRestorer {
 public:
  ProcessIsaRestorer() : saved_(ops::active_isa()) {}
  ~ProcessIsaRestorer() { ops::set_isa(saved_); }
  ProcessIsaRestorer(const ProcessIsaRestorer&) = delete;
  ProcessIsaRestorer& operator=(const ProcessIsaRestorer&) = delete;

 private:
  ops::Isa saved_;
};

}  // namespace attend::test
