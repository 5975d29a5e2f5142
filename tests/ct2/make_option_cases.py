#!/usr/bin/env python3
"""CTranslate2's outputs for the decoding options that the fixtures' cases.jsonl leave
out, on the same random-weight models: tests/data/ct2-options/<family>.jsonl.

    python3 tests/ct2/make_option_cases.py tests/data/ct2-variants tests/data/ct2-options

Needs ctranslate2==4.8.1 (PyPI; only to regenerate, never at test time). Each line:
{"source", "target_prefix"?, "options" (translate_batch keyword arguments),
 "hypotheses", "scores", "attention"?} — tests/api/test_ct2_cases.cpp runs them all.
"""
import json
import sys
from pathlib import Path

import ctranslate2

assert ctranslate2.__version__ == "4.8.1", ctranslate2.__version__


def cases_for(model_dir: Path):
    translator = ctranslate2.Translator(str(model_dir), device="cpu", intra_threads=1)
    sources = [json.loads(line)["source"] for line in open(model_dir / "cases.jsonl")][:3]
    out = []

    def run(source, prefix=None, **options):
        options.setdefault("max_decoding_length", 12)
        options["return_scores"] = True
        r = translator.translate_batch([source], target_prefix=[prefix] if prefix else None, **options)[0]
        case = {"source": source, "options": options, "hypotheses": r.hypotheses, "scores": r.scores}
        if prefix:
            case["target_prefix"] = prefix
        if options.get("return_attention"):
            case["attention"] = r.attention
        out.append(case)
        return r

    for source in sources:
        greedy = run(source, beam_size=1).hypotheses[0]
        greedy = (greedy + run(source, beam_size=1, min_decoding_length=6).hypotheses[0])[:6]
        # Tokens the model likes, to build options that change its output.
        a, b = greedy[0], greedy[1]
        frequent = max(set(greedy), key=greedy.count)
        run(source, beam_size=1, suppress_sequences=[[a, b]])
        run(source, beam_size=4, suppress_sequences=[[a, b], [frequent]])
        run(source, beam_size=1, end_token=frequent)
        run(source, beam_size=1, end_token=frequent, return_end_token=True)
        run(source, beam_size=4, end_token=[frequent, "</s>"], return_end_token=True, num_hypotheses=2)
        run(source, beam_size=4, coverage_penalty=0.3)
        # (greedy search with coverage_penalty crashes CTranslate2 4.8.1: no case for it)
        run(source, beam_size=4, patience=2.0, num_hypotheses=6)
        run(source, beam_size=3, patience=0.5)
        run(source, beam_size=4, length_penalty=0.0, num_hypotheses=2)
        run(source, beam_size=1, length_penalty=0.5)
        run(source, beam_size=2, min_decoding_length=0, max_decoding_length=5)
        prefix = [greedy[2], greedy[0]]
        run(source, prefix, beam_size=1)
        run(source, prefix, beam_size=4, num_hypotheses=2)
        run(source, prefix, beam_size=1, return_alternatives=True, num_hypotheses=3)
        run(source, prefix, beam_size=2, return_alternatives=True, num_hypotheses=4, min_alternative_expansion_prob=0.05)
        # With a beam, CTranslate2 4.8.1 reports the first completion step's attention from
        # another alternative (its first beam step gathers a batch > 1 by sentence index):
        # attention is compared with greedy completions only.
        run(source, prefix, beam_size=1, return_alternatives=True, num_hypotheses=4, return_attention=True)
        run(source, None, beam_size=1, return_alternatives=True, num_hypotheses=2, length_penalty=0.7)
        run(source, prefix, beam_size=2, prefix_bias_beta=0.5)
        run(source, prefix, beam_size=1, prefix_bias_beta=0.9, num_hypotheses=1)
        run(source, beam_size=1, return_attention=True)
        run(source, beam_size=4, return_attention=True, num_hypotheses=2, repetition_penalty=1.3)
        run(source, ["<unk>", greedy[0], "<unk>"], beam_size=2, replace_unknowns=True, return_attention=True)
        run(source, ["<unk>"], beam_size=1, replace_unknowns=True)
        run(source, beam_size=1, max_input_length=5, return_attention=True)
        run(source, beam_size=4, max_input_length=4, no_repeat_ngram_size=1)
    return out


def main():
    fixtures, target = Path(sys.argv[1]), Path(sys.argv[2])
    target.mkdir(parents=True, exist_ok=True)
    for model_dir in sorted(p for p in fixtures.iterdir() if (p / "model.bin").exists()):
        with open(target / f"{model_dir.name}.jsonl", "w") as f:
            for case in cases_for(model_dir):
                f.write(json.dumps(case) + "\n")
        print(model_dir.name, file=sys.stderr)


if __name__ == "__main__":
    main()
