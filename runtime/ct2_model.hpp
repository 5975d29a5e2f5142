// CTranslate2 model directories (model.bin + vocabularies): see ct2_model.cpp.
#pragma once

#include <memory>
#include <string>

#include "model.hpp"

namespace attend::runtime {

std::shared_ptr<const Model> load_ct2_model(const std::string& dir, const LoadOptions& options);

}  // namespace attend::runtime
