#!/usr/bin/env python3
"""Builds the tokenizer.json fixtures of tests/data/tokenizers with Hugging Face's own
libraries, and the outputs of `tokenizers` on a small corpus (expected/<name>.jsonl),
which test_hf_tokenizer compares attend's with when PyPI cannot be reached.

  bert-uncased        BertWordPieceTokenizer, lowercase (accents stripped), BertProcessing
  bert-cased          cased WordPiece, TemplateProcessing, added tokens (lstrip/rstrip,
                      single_word, normalized)
  bert-strip-accents  cased with strip_accents, no CJK split, max_input_chars_per_word 20
  xlmr-unigram        SentencePiece Unigram (spm_train) through transformers'
                      XLMRobertaConverter: Precompiled charsmap, Strip, Replace, Metaspace
  roberta-bpe         ByteLevelBPETokenizer with RoBERTa's specials and RobertaProcessing
  mix-wordlevel       NFKD, StripAccents, Lowercase, Replace, Strip, NFC; Whitespace,
                      Digits, Punctuation; WordLevel; a two-token special in the template
  mix-unigram         NFKC; Split, CharDelimiterSplit, Metaspace "first"; Unigram trained
                      by tokenizers; ByteLevel + TemplateProcessing
  mix-bpe             NFD, Lowercase, StripAccents; Whitespace; BPE with ## and </w>,
                      fused unknowns; no post-processor

Usage: make_tokenizer_fixtures.py OUT_DIR  (needs tokenizers, transformers, sentencepiece,
protobuf from PyPI and spm_train; the versions used are written to OUT_DIR/VERSIONS).
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

import tokenizers  # noqa: E402
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402


def training_text():
    lines = corpus.sentences(11, 6000)
    return [" ".join(l.split()) for l in lines]  # one line each, as spm_train reads them


def bert(text, lowercase, strip_accents=None, chinese=True, max_chars=100):
    t = tokenizers.BertWordPieceTokenizer(clean_text=True, handle_chinese_chars=chinese, strip_accents=strip_accents,
                                          lowercase=lowercase)
    t.train_from_iterator(text, vocab_size=2500, min_frequency=2, limit_alphabet=600)
    t = Tokenizer.from_str(t.to_str())
    t.model = models.WordPiece(t.get_vocab(with_added_tokens=False), unk_token="[UNK]", max_input_chars_per_word=max_chars)
    # BertWordPieceTokenizer sets its post-processor only when built over a vocabulary.
    t.post_processor = processors.BertProcessing(("[SEP]", t.token_to_id("[SEP]")), ("[CLS]", t.token_to_id("[CLS]")))
    return t


def bert_cased(text):
    t = bert(text, lowercase=False)
    t.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", t.token_to_id("[CLS]")), ("[SEP]", t.token_to_id("[SEP]"))])
    t.add_tokens([AddedToken("<ent>", lstrip=True, rstrip=True, normalized=False),
                  AddedToken("Straße", single_word=True, normalized=True),
                  AddedToken("ab", single_word=True, normalized=False),
                  AddedToken("<ent-long>", normalized=False)])
    return t


def xlmr(text, work):
    from transformers.convert_slow_tokenizer import XLMRobertaConverter
    path = os.path.join(work, "train.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    subprocess.run(["spm_train", f"--input={path}", f"--model_prefix={work}/spm", "--vocab_size=3000",
                    "--model_type=unigram", "--character_coverage=0.9995", "--minloglevel=2"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    class Original:  # what the converter reads of a slow XLMRobertaTokenizer
        vocab_file = f"{work}/spm.model"
        add_prefix_space = True
        legacy = True

        def convert_tokens_to_ids(self, token):
            return {"<s>": 0, "</s>": 2}[token]

    t = XLMRobertaConverter(Original()).converted()
    t.add_special_tokens([AddedToken("<s>", normalized=False), AddedToken("<pad>", normalized=False),
                          AddedToken("</s>", normalized=False), AddedToken("<unk>", normalized=False),
                          AddedToken("<mask>", lstrip=True, normalized=False)])
    return t


def roberta(text):
    t = tokenizers.ByteLevelBPETokenizer(add_prefix_space=False)
    t.train_from_iterator(text, vocab_size=2000, min_frequency=2,
                          special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    t = Tokenizer.from_str(t.to_str())
    t.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=False)
    t.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False)])
    return t


def mix_wordlevel(text):
    t = Tokenizer(models.WordLevel(unk_token="<unk>"))
    t.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase(),
                                         normalizers.Replace("``", '"'), normalizers.Strip(), normalizers.NFC()])
    t.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=True),
                                               pre_tokenizers.Punctuation(behavior="merged_with_previous")])
    t.train_from_iterator(text, trainers.WordLevelTrainer(vocab_size=3000, special_tokens=["<unk>", "<s>", "</s>", "<sep>"]))
    t.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="$A:0 <sep> $B:1",
        special_tokens=[("<s>", 1), ("</s>", 2), processors.template.SpecialToken("<sep>", [3, 3], ["<sep>", "<sep>"])]
        if hasattr(processors, "template") else [("<s>", 1), ("</s>", 2), ("<sep>", 3)])
    return t


def mix_unigram(text):
    t = Tokenizer(models.Unigram())
    t.normalizer = normalizers.NFKC()
    t.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split("-", behavior="isolated"),
                                               pre_tokenizers.CharDelimiterSplit("|"),
                                               pre_tokenizers.Metaspace(prepend_scheme="first")])
    t.train_from_iterator(text, trainers.UnigramTrainer(vocab_size=6000, special_tokens=["<unk>", "<cls>", "<sep>"],
                                                        unk_token="<unk>"))
    t.post_processor = processors.Sequence([processors.ByteLevel(trim_offsets=True), processors.TemplateProcessing(
        single="$A <sep> <cls>", pair="$A <sep> $B:1 <sep>:1 <cls>:2",
        special_tokens=[("<sep>", t.token_to_id("<sep>")), ("<cls>", t.token_to_id("<cls>"))])])
    return t


def mix_bpe(text):
    t = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", end_of_word_suffix="</w>", fuse_unk=True))
    t.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
    t.pre_tokenizer = pre_tokenizers.Whitespace()
    t.train_from_iterator(text, trainers.BpeTrainer(vocab_size=1500, special_tokens=["[UNK]"], limit_alphabet=300,
                                                           continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    return t


def expected_cases():
    """The stored corpus: every special string alone, sentences, pairs, truncation, bytes."""
    cases = [{"a": s} for s in corpus.OTHER + corpus.EMOJI + corpus.SPACES + corpus.INVISIBLE + corpus.CONTROLS[:8]]
    lines = corpus.sentences(5, 100)
    cases += [{"a": s} for s in lines[:70]]
    cases += [{"a": lines[i], "b": lines[i + 1]} for i in range(70, 90)]
    cases += [{"a": lines[i], "max_length": m} for i, m in zip(range(0, 20), [5, 8, 13, 32] * 5)]
    cases += [{"a": lines[i], "b": lines[i + 2], "max_length": m} for i, m in zip(range(20, 40), [5, 8, 13, 32] * 5)]
    cases += [{"a": lines[i], "add_special_tokens": False} for i in range(90, 100)]
    import base64
    cases += [{"a_base64": base64.b64encode(b).decode()} for b in corpus.invalid_utf8(9, 12)]
    return cases


def hf_encode(t, case):
    """tokenizers' result for one case (differential.py's convention)."""
    import base64
    text = lambda k: base64.b64decode(case[k + "_base64"]).decode("utf-8", "replace") if k + "_base64" in case else case.get(k)
    t.no_padding()
    if case.get("max_length"):
        t.enable_truncation(case["max_length"])
    else:
        t.no_truncation()
    e = t.encode(text("a"), text("b"), add_special_tokens=case.get("add_special_tokens", True))
    return {"ids": e.ids, "type_ids": e.type_ids, "tokens": e.tokens}


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "expected"), exist_ok=True)
    text = training_text()
    with tempfile.TemporaryDirectory() as work:
        built = {
            "bert-uncased": bert(text, lowercase=True),
            "bert-cased": bert_cased(text),
            "bert-strip-accents": bert(text, lowercase=False, strip_accents=True, chinese=False, max_chars=20),
            "xlmr-unigram": xlmr(text, work),
            "roberta-bpe": roberta(text),
            "mix-wordlevel": mix_wordlevel(text),
            "mix-unigram": mix_unigram(text),
            "mix-bpe": mix_bpe(text),
        }
    cases = expected_cases()
    with open(os.path.join(out, "expected", "cases.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    for name, t in built.items():
        t.no_padding(), t.no_truncation()
        t.save(os.path.join(out, name + ".json"))
        t = Tokenizer.from_file(os.path.join(out, name + ".json"))
        with open(os.path.join(out, "expected", name + ".jsonl"), "w", encoding="utf-8") as f:
            for c in cases:
                f.write(json.dumps(hf_encode(t, c), ensure_ascii=False) + "\n")
        print(name, t.get_vocab_size(), "tokens")
    import transformers
    with open(os.path.join(out, "VERSIONS"), "w") as f:
        f.write(f"tokenizers {tokenizers.__version__}\ntransformers {transformers.__version__}\n")


if __name__ == "__main__":
    main()
