// An activation named in a Hugging Face config.json (hidden_act, activation,
// activation_function, feed_forward_proj), as transformers' ACT2FN reads the name.
#pragma once

#include <string>

#include "formats/json_file.hpp"
#include "attend/ops/types.hpp"

namespace attend::runtime {

// Throws attend::Error naming the file and `field` for a name attend does not run.
ops::Activation hf_activation(const JsonFile& config, const std::string& field, const std::string& name);

}  // namespace attend::runtime
