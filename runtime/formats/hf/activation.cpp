#include "formats/hf/activation.hpp"

namespace attend::runtime {

ops::Activation hf_activation(const JsonFile& config, const std::string& field, const std::string& name) {
  if (name == "gelu" || name == "gelu_python") return ops::Activation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return ops::Activation::gelu_tanh;
  if (name == "relu") return ops::Activation::relu;
  if (name == "silu" || name == "swish") return ops::Activation::silu;
  config.bad(field, "is '" + name + "' — attend runs gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu and swish");
}

}  // namespace attend::runtime
