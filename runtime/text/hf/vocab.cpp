#include "text/hf/vocab.hpp"

namespace attend::runtime::hf {

void Vocab::add(std::string token, std::int32_t id) {
  tokens_[id] = token;
  ids_[std::move(token)] = id;
}

}  // namespace attend::runtime::hf
