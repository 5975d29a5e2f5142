#!/usr/bin/env python3
"""Model directories without a tokenizer.json (tests/data/tokenizers/vocab-files/NAME), as
transformers reads them — vocab.txt or sentencepiece.bpe.model beside config.json and
(for most) a tokenizer_config.json — and what transformers' tokenizer built from them
gives on the fixtures' corpus (expected/vocab-files-NAME.jsonl: its backend tokenizer,
the slow-to-fast conversion's result), which test_hf_tokenizer compares attend's with.

  bert-lower         vocab.txt only (BertTokenizer's defaults: lowercase, accents off)
  bert-cased         do_lower_case false, strip_accents true, tokenize_chinese_chars false
  bert-added         added_tokens_decoder (new tokens, flags on [MASK]), extra_special_tokens,
                     a cls_token not in vocab.txt
  xlmr-unigram       SentencePiece Unigram with nmt_nfkc (a charsmap), the hub's kind of
                     tokenizer_config.json (<mask> lstrip)
  xlmr-bpe           a SentencePiece BPE model, no tokenizer_config.json
  xlmr-user-symbols  user-defined and control pieces
  camembert-unigram  CamemBERT's layout (<s>NOTUSED …), no tokenizer_config.json

Usage: make_vocab_file_fixtures.py  (needs transformers, sentencepiece, protobuf and
tokenizers from PyPI; no torch)
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import differential  # noqa: E402

import sentencepiece as spm  # noqa: E402
import transformers as tf  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "data", "tokenizers")
OUT = os.path.join(DATA, "vocab-files")
BERT_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(
    "the a of and to in is was for on that with by he it at as his from be are an or had not but which this have "
    "they were one you all her she there their been has more who when will would no if out so said what up its about "
    "into than them can only other new some could time these two may then do first any my now such like our over "
    "hello world café naïve über 東 京 日 本 ! ? . , ' - ( ) : ; 1 2 3 0 ##s ##ing ##ed ##ly ##er ##es ##d ##e ##n "
    "##t ##a ##o ##i ##r ##l ##y un ##able e é è ü ö ä x y z q".split()))


def model_dir(name, model_type, files):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    config = {"bert": tf.BertConfig, "xlm-roberta": tf.XLMRobertaConfig, "camembert": tf.CamembertConfig}[model_type]
    config(vocab_size=300, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8).save_pretrained(d)
    for filename, content in files.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(os.path.join(d, filename), mode, **({} if mode == "wb" else {"encoding": "utf-8"})) as f:
            f.write(content if isinstance(content, (bytes, str)) else json.dumps(content, indent=1))
    return d


def sentencepiece_model(kind, normalization, **extra):
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "train.txt")
        with open(text, "w", encoding="utf-8") as f:
            f.write("\n".join(differential.corpus.sentences(5, 3000)) + "\n")
        spm.SentencePieceTrainer.train(input=text, model_prefix=os.path.join(tmp, "m"), vocab_size=2000, model_type=kind, hard_vocab_limit=False,
                                       character_coverage=0.999, normalization_rule_name=normalization,
                                       minloglevel=2, **extra)
        with open(os.path.join(tmp, "m.model"), "rb") as f:
            return f.read()


def fixtures():
    vocab = "\n".join(BERT_WORDS) + "\n"
    yield "bert-lower", model_dir("bert-lower", "bert", {"vocab.txt": vocab})
    yield "bert-cased", model_dir("bert-cased", "bert", {"vocab.txt": vocab, "tokenizer_config.json": {
        "do_lower_case": False, "strip_accents": True, "tokenize_chinese_chars": False, "tokenizer_class": "BertTokenizer"}})
    new = {"content": "<new>", "lstrip": False, "normalized": True, "rstrip": False, "single_word": True, "special": False}
    yield "bert-added", model_dir("bert-added", "bert", {"vocab.txt": vocab.replace("[CLS]\n", ""), "tokenizer_config.json": {
        "cls_token": "<cls>", "extra_special_tokens": ["<e2>", "<e1>"],
        "added_tokens_decoder": {"300": {"content": "<x1>", "lstrip": False, "normalized": False, "rstrip": True,
                                         "single_word": False, "special": True}, "299": new,
                                 "4": {"content": "[MASK]", "lstrip": True, "normalized": False, "rstrip": False,
                                       "single_word": False, "special": True}}}})
    mask = {"content": "<mask>", "lstrip": True, "normalized": False, "rstrip": False, "single_word": False, "special": True}
    yield "xlmr-unigram", model_dir("xlmr-unigram", "xlm-roberta", {
        "sentencepiece.bpe.model": sentencepiece_model("unigram", "nmt_nfkc"),
        "tokenizer_config.json": {"tokenizer_class": "XLMRobertaTokenizer", "model_max_length": 512, "bos_token": "<s>",
                                  "added_tokens_decoder": {"301": mask}}})
    yield "xlmr-bpe", model_dir("xlmr-bpe", "xlm-roberta", {"sentencepiece.bpe.model": sentencepiece_model("bpe", "identity")})
    yield "xlmr-user-symbols", model_dir("xlmr-user-symbols", "xlm-roberta", {
        "sentencepiece.bpe.model": sentencepiece_model("unigram", "identity", user_defined_symbols=["<sep2>", "@@"],
                                                       control_symbols=["<ctl>"])})
    yield "camembert-unigram", model_dir("camembert-unigram", "camembert", {
        "sentencepiece.bpe.model": sentencepiece_model("unigram", "identity")})


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [json.loads(l) for l in open(os.path.join(DATA, "expected", "cases.jsonl"), encoding="utf-8")]
    for name, d in fixtures():
        tokenizer = tf.AutoTokenizer.from_pretrained(d)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "tokenizer.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(tokenizer.backend_tokenizer.to_str())
            results = differential.hf_results(path, cases)
        with open(os.path.join(DATA, "expected", f"vocab-files-{name}.jsonl"), "w", encoding="utf-8") as f:
            for r in results:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(name, type(tokenizer).__name__, sorted(os.listdir(d)))
    with open(os.path.join(OUT, "VERSIONS"), "w") as f:
        f.write(f"transformers {tf.__version__}\nsentencepiece {spm.__version__}\ntokenizers {differential.tokenizers.__version__}\n")


if __name__ == "__main__":
    main()
