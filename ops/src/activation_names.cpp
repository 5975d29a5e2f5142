// Activation names, parsed and printed; no kernels here, so model-file parsers (and
// their fuzz target) can link this alone.
#include <cstring>
#include <string>

#include "attend/error.hpp"
#include "attend/ops/types.hpp"

namespace attend::ops {

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
    case Activation::gelu_sigmoid: return "gelu_sigmoid";
  }
  return "?";
}

Activation parse_activation(const char* name) {
  for (Activation a : {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                       Activation::silu, Activation::gelu_sigmoid})
    if (std::strcmp(name, activation_name(a)) == 0) return a;
  throw Error(std::string("unknown activation '") + name + "' (expected relu, gelu, gelu_tanh, silu, gelu_sigmoid or none)");
}

}  // namespace attend::ops
