// CTranslate2 model directories: implemented with issue 5.
#include "ct2_model.hpp"

#include "attend/error.hpp"

namespace attend::runtime {

std::shared_ptr<const Model> load_ct2_model(const std::string& dir, const LoadOptions&) {
  throw error_of(dir, ": CTranslate2 model.bin directories are not supported yet");
}

}  // namespace attend::runtime
