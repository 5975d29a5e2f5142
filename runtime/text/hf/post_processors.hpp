// The post-processors of `tokenizers` (tokenizer.json's "post_processor"): the special
// tokens around one sequence or a pair, and the type ids.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "text/hf/pipeline.hpp"

namespace attend::runtime::hf {

// A template: "[CLS] $A [SEP]" for one sequence, "[CLS] $A [SEP] $B:1 [SEP]:1" for a pair.
struct TemplateProcessing : PostProcessor {
  struct Piece {
    bool is_sequence;       // $A / $B, else a special token
    bool second = false;    // $B
    std::string special;    // the special token's name
    std::int32_t type_id = 0;
  };
  struct SpecialTokens {
    std::vector<std::int32_t> ids;
    std::vector<std::string> tokens;
  };
  std::vector<Piece> single, pair;
  std::map<std::string, SpecialTokens> special_tokens;

  std::size_t added_tokens(bool is_pair) const override;
  std::vector<TokenSequence> process(std::vector<TokenSequence> sequences, bool add_special_tokens) const override;
  std::string describe() const override;
};

// BERT's: [CLS] A [SEP] (type 0), B [SEP] (type 1).
struct BertProcessing : PostProcessor {
  Token sep{102, "[SEP]"}, cls{101, "[CLS]"};
  std::size_t added_tokens(bool is_pair) const override { return is_pair ? 3 : 2; }
  std::vector<TokenSequence> process(std::vector<TokenSequence> sequences, bool add_special_tokens) const override;
  std::string describe() const override { return "BertProcessing"; }
};

// RoBERTa's: <s> A </s>, </s> B </s>, every type id 0.
struct RobertaProcessing : PostProcessor {
  Token sep{2, "</s>"}, cls{0, "<s>"};
  std::size_t added_tokens(bool is_pair) const override { return is_pair ? 4 : 2; }
  std::vector<TokenSequence> process(std::vector<TokenSequence> sequences, bool add_special_tokens) const override;
  std::string describe() const override { return "RobertaProcessing"; }
};

// ByteLevel as a post-processor only trims offsets, which attend does not report.
struct ByteLevelProcessing : PostProcessor {
  std::size_t added_tokens(bool) const override { return 0; }
  std::vector<TokenSequence> process(std::vector<TokenSequence> sequences, bool) const override { return sequences; }
  std::string describe() const override { return "ByteLevel"; }
};

struct PostProcessorSequence : PostProcessor {
  std::vector<std::unique_ptr<PostProcessor>> steps;
  std::size_t added_tokens(bool is_pair) const override;
  std::vector<TokenSequence> process(std::vector<TokenSequence> sequences, bool add_special_tokens) const override;
  std::string describe() const override { return describe_steps(steps); }
};

}  // namespace attend::runtime::hf
