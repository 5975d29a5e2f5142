#!/usr/bin/env bash
# Builds the models the CLI, API and install tests translate with:
#   OUT/model         separate source.spm / target.spm (SentencePiece, trained here with
#                     Debian's spm_train), random weights, max_positions 64
#   OUT/model-shared  one vocab.spm, shared embeddings
#   OUT/model-bytes   a target SentencePiece model with byte fallback (<0x0A> decodes to a
#                     newline), 400 target pieces
#   OUT/model-overflow  OUT/model whose activations overflow: NaN logits
#   OUT/model-late-overflow  finite logits at the first step only, NaN from the second
#   OUT/corpus.txt    the text the tokenizers were trained on
#   OUT/spm/          SentencePiece models alone (BPE, Unigram, Unigram spanning spaces)
# Usage: make_cli_fixture.sh MAKE_TEST_MODEL OUT
set -euo pipefail
make_model=$1
out=$2
command -v spm_train >/dev/null || { echo "spm_train not found: install Debian's 'sentencepiece' (tools/bootstrap.sh does)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/model" "$out/model-shared" "$out/model-bytes" "$out/model-overflow" "$out/model-late-overflow"

# A deterministic corpus with some non-ASCII words, so text really goes through UTF-8.
awk 'BEGIN {
  srand(7)
  n = split("the quick brown fox jumps over lazy dog a an of to in is was he she it they we you cat house tree " \
            "river stone light dark red green blue small large old new café naïve straße über smörgåsbord", w, " ")
  for (i = 0; i < 3000; i++) {
    l = 3 + int(rand() * 12); s = ""
    for (j = 0; j < l; j++) s = s (j ? " " : "") w[1 + int(rand() * n)]
    print toupper(substr(s, 1, 1)) substr(s, 2) "."
  }
}' > "$out/corpus.txt"
awk '{ print toupper($0) }' "$out/corpus.txt" > "$out/corpus.upper.txt"

train() {  # INPUT PREFIX VOCAB_SIZE [EXTRA FLAGS]
  spm_train --input="$1" --model_prefix="$2" --vocab_size="$3" --model_type=bpe --character_coverage=1.0 \
    --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=3 --minloglevel=2 ${4:-} >/dev/null 2>&1 \
    || { echo "spm_train failed for $2" >&2; exit 1; }
}
train "$out/corpus.txt" "$out/src" 150
train "$out/corpus.upper.txt" "$out/tgt" 120
train "$out/corpus.txt" "$out/shared" 150
train "$out/corpus.upper.txt" "$out/tgt-bytes" 400 --byte_fallback=true
# For the tokenizer tests (tests/text/test_leading_pieces.cpp): a Unigram model, and one
# whose pieces may span spaces (split_by_whitespace off), beside the BPE ones.
mkdir -p "$out/spm"
spm_train --input="$out/corpus.txt" --model_prefix="$out/spm/unigram" --vocab_size=150 --model_type=unigram \
  --character_coverage=1.0 --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=3 --minloglevel=2 >/dev/null 2>&1 \
  || { echo "spm_train failed for the unigram model" >&2; exit 1; }
spm_train --input="$out/corpus.txt" --model_prefix="$out/spm/unigram-spans" --vocab_size=150 --model_type=unigram \
  --split_by_whitespace=false --character_coverage=1.0 --unk_id=0 --bos_id=1 --eos_id=2 --pad_id=3 --minloglevel=2 \
  >/dev/null 2>&1 || { echo "spm_train failed for the unigram-spans model" >&2; exit 1; }
cp "$out/src.model" "$out/spm/bpe.model"
cp "$out/src.model" "$out/model/source.spm"
cp "$out/tgt.model" "$out/model/target.spm"
cp "$out/shared.model" "$out/model-shared/vocab.spm"
cp "$out/src.model" "$out/model-bytes/source.spm"
cp "$out/tgt-bytes.model" "$out/model-bytes/target.spm"
cp "$out/src.model" "$out/model-overflow/source.spm"
cp "$out/tgt.model" "$out/model-overflow/target.spm"
cp "$out/src.model" "$out/model-late-overflow/source.spm"
cp "$out/tgt.model" "$out/model-late-overflow/target.spm"

"$make_model" "$out/model" 150 120 64 0 11
"$make_model" "$out/model-shared" 150 150 64 1 12
"$make_model" "$out/model-bytes" 150 400 64 0 13
"$make_model" "$out/model-overflow" 150 120 64 0 11 overflow
"$make_model" "$out/model-late-overflow" 150 120 64 0 11 late-overflow
echo "fixture ready in $out"
