#include "text/text_pieces.hpp"

namespace attend::runtime {

std::size_t next_text_cut(std::string_view text, std::size_t from) {
  for (std::size_t i = from < 1 ? 1 : from; i < text.size(); ++i)
    if (text[i] == ' ' && text[i - 1] > ' ' && text[i - 1] < 0x7f) return i;
  return text.size();
}

}  // namespace attend::runtime
