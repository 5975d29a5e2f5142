// Runs a block of a test once per ISA this machine supports, restoring the ISA after.
#pragma once

#include "attend/ops/isa.hpp"

namespace attend::test {

class IsaScope {
 public:
  IsaScope() : saved_(ops::active_isa()) {}
  ~IsaScope() { ops::set_isa(saved_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  ops::Isa saved_;
};

}  // namespace attend::test
