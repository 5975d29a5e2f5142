// Position indices of tokens. Most models number a sequence's tokens from a first
// position on; RoBERTa, XLM-R, M2M100 and NLLB-200 number them as Hugging Face's
// create_position_ids_from_input_ids does: a pad token takes the position pad_id (its row
// of the table is zero) and is not counted, so the tokens after it move back by one.
// Both attend's encoders (BERT family, encoder-decoder) and the decoder use this one rule.
#pragma once

#include <cstdint>

namespace attend::runtime {

class TokenPositions {
 public:
  // `pad_positions` false: every token counts, pads included.
  TokenPositions(std::int64_t first, bool pad_positions, std::int32_t pad_id)
      : next_(first), pad_positions_(pad_positions), pad_id_(pad_id) {}

  // The position of the next token of a sequence read in order.
  std::int32_t next(std::int32_t token) {
    return is_pad(token) ? pad_id_ : static_cast<std::int32_t>(next_++);
  }

  // The position of `token` at `index` when the tokens before it were each counted, pads
  // too: a decoder step under transformers' cache (the step's cumsum sees one token, the
  // cache length counts every earlier one).
  std::int32_t at(std::int32_t token, std::int64_t index) const {
    return is_pad(token) ? pad_id_ : static_cast<std::int32_t>(next_ + index);
  }

 private:
  bool is_pad(std::int32_t token) const { return pad_positions_ && token == pad_id_; }

  std::int64_t next_;
  bool pad_positions_;
  std::int32_t pad_id_;
};

}  // namespace attend::runtime
