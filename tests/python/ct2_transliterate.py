"""A script written for CTranslate2's Python API, as its users write them: it
transliterates a file of space-separated tokens with translate_batch, checks
translate_iterable and score_batch agree with it, and writes one line per input line.

test_ctranslate2_script.py runs it twice: as it is, on CTranslate2 itself, and with
its one import changed to `import attend as ctranslate2`, on attend.

Usage: ct2_transliterate.py MODEL_DIR INPUT OUTPUT BEAM_SIZE
"""

import sys

import ctranslate2


def main(model_dir: str, input_path: str, output_path: str, beam_size: int) -> None:
    translator = ctranslate2.Translator(model_dir, device="cpu", compute_type="default", inter_threads=1,
                                        intra_threads=2)
    with open(input_path, encoding="utf-8") as f:
        sources = [line.split() for line in f]
    non_empty = [s for s in sources if s]

    results = translator.translate_batch(non_empty, beam_size=beam_size, max_batch_size=32, return_scores=True,
                                         max_decoding_length=256)
    assert all(isinstance(r, ctranslate2.TranslationResult) for r in results)
    assert all(len(r.scores) == 1 and r.scores[0] <= 0 for r in results)

    # The streaming API gives the same hypotheses, in input order.
    streamed = translator.translate_iterable(iter(non_empty), max_batch_size=16, beam_size=beam_size)
    for r, s in zip(results, streamed):
        assert r.hypotheses == s.hypotheses, (r.hypotheses, s.hypotheses)

    # Scoring the translations: one log-probability per token, then the end token's.
    scored = translator.score_batch(non_empty[:50], [r.hypotheses[0] for r in results[:50]])
    for r, s in zip(results, scored):
        assert s.tokens == r.hypotheses[0] + ["</s>"], (s.tokens, r.hypotheses[0])
        assert len(s.log_probs) == len(s.tokens)

    # Token by token, greedy.
    first = [step.token for step in translator.generate_tokens(non_empty[0])]
    greedy = translator.translate_batch(non_empty[:1], beam_size=1)[0].hypotheses[0]
    assert first == greedy + ["</s>"], (first, greedy)

    translations = iter(results)
    with open(output_path, "w", encoding="utf-8") as out:
        for source in sources:
            out.write((" ".join(next(translations).hypotheses[0]) if source else "") + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
