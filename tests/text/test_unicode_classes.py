#!/usr/bin/env python3
"""Every code point's class in attend's Hugging Face tokenizers against `tokenizers`
itself (the release tests/data/tokenizers/VERSIONS names): the classes the
pre-tokenizers split on — Oniguruma's \\p{L} and \\p{N} (ByteLevel, Split patterns), \\w
(Whitespace, single_word added tokens), char::is_numeric (Digits), white space, BERT's
punctuation — and what each normalizer makes of every single character (BertNormalizer's
control characters and CJK spacing, Lowercase, StripAccents, NFD, NFKD, NFC, NFKC).
attend's side comes from the driver hf_unicode_classes (every code point, one run);
`tokenizers`' from a few calls on strings holding every code point between separators
whose class is known, read back through the offsets.

Usage: test_unicode_classes.py DRIVER      Exits 77 (ctest: skipped) without `tokenizers`.
"""
import subprocess
import sys

try:
    import tokenizers
    from tokenizers import Regex, normalizers, pre_tokenizers
except ImportError:
    print("skipped: the Python package `tokenizers` is not installed (tests/python/setup_venv.sh installs it from PyPI)")
    sys.exit(77)

CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]


def attend_classes(driver):
    out = subprocess.run([driver], capture_output=True, text=True, check=True).stdout.splitlines()
    classes, maps, current = {}, {}, None
    for line in out:
        if line.startswith("class "):
            name, *ranges = line.split()[1:]
            members = set()
            for r in ranges:
                first, last = (int(x, 16) for x in r.split("-"))
                members.update(range(first, last + 1))
            classes[name] = members
        elif line.startswith("map "):
            current = maps.setdefault(line.split()[1], {})
        elif line != "end":
            c, *to = line.split()
            current[int(c, 16)] = "" if to == ["-"] else "".join(chr(int(x, 16)) for x in to)
    assert out and out[-1] == "end", "the driver's output is cut short"
    return classes, maps


def covered(pieces):
    """The character positions the pre-tokenizer's pieces cover, and each one's piece."""
    piece_of = {}
    for k, (_, (start, end)) in enumerate(pieces):
        for p in range(start, end):
            piece_of[p] = (k, start, end)
    return piece_of


def between(sep):
    """The text with every code point between two `sep`, and each code point's position."""
    text = sep + sep.join(chr(c) for c in CODE_POINTS) + sep
    return text, {c: 1 + 2 * i for i, c in enumerate(CODE_POINTS)}


def removed_by(pre_tokenizer, sep):
    """The code points a pre-tokenizer drops (white space, a removed pattern)."""
    text, at = between(sep)
    piece_of = covered(pre_tokenizer.pre_tokenize_str(text))
    return {c for c, p in at.items() if p not in piece_of}


def isolated_by(pre_tokenizer, sep):
    """The code points a pre-tokenizer makes a piece of their own between separators it keeps."""
    text, at = between(sep)
    piece_of = covered(pre_tokenizer.pre_tokenize_str(text))
    return {c for c, p in at.items() if p in piece_of and piece_of[p][1:] == (p, p + 1)}


def pattern(regex):
    return pre_tokenizers.Split(Regex(regex), behavior="removed")


def reference_classes():
    word_text, at = between("a")  # \w+|[^\w\s]+: a character joins the a's around it iff it is \w
    piece_of = covered(pre_tokenizers.Whitespace().pre_tokenize_str(word_text))
    word = {c for c, p in at.items() if p in piece_of and piece_of[p][1] < p}
    return {
        "letter": removed_by(pattern(r"\p{L}"), "\x01"),
        "number": removed_by(pattern(r"\p{N}"), "\x01"),
        "word": word,
        "numeric": isolated_by(pre_tokenizers.Digits(individual_digits=True), "a"),
        "white_space": removed_by(pre_tokenizers.WhitespaceSplit(), "a"),
        "bert_punctuation": isolated_by(pre_tokenizers.BertPreTokenizer(), "a") - {ord("a")},
    }


def reference_map(normalizer, sep="\x00"):
    """What the normalizer makes of each code point alone: `sep` between them (a starter
    the normalizer keeps, never makes, and neither merges with nor reorders across)."""
    cps = [c for c in CODE_POINTS if c != ord(sep)]
    outs = normalizer.normalize_str(sep.join(chr(c) for c in cps)).split(sep)
    assert len(outs) == len(cps), "a separator was changed"
    changed = {c: o for c, o in zip(cps, outs) if o != chr(c)}
    if normalizer.normalize_str(sep) != sep:  # the separator alone
        changed[ord(sep)] = normalizer.normalize_str(sep)
    return changed


def reference_maps():
    bert = dict(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    maps = {
        "bert_clean": normalizers.BertNormalizer(**bert),
        "bert_chinese": normalizers.BertNormalizer(**{**bert, "clean_text": False, "handle_chinese_chars": True}),
        "lowercase": normalizers.Lowercase(),
        "strip_accents": normalizers.StripAccents(),
        "nfd": normalizers.NFD(), "nfkd": normalizers.NFKD(), "nfc": normalizers.NFC(), "nfkc": normalizers.NFKC(),
    }
    # clean_text drops NUL, so "|" separates there (it maps nothing to "|").
    return {name: reference_map(n, "|" if name == "bert_clean" else "\x00") for name, n in maps.items()}


def describe(c):
    import unicodedata
    return f"U+{c:04X} {unicodedata.name(chr(c), '(unnamed here)')}"


def main():
    classes, maps = attend_classes(sys.argv[1])
    failures = 0
    for name, want in reference_classes().items():
        got = classes[name]
        wrong = sorted(want ^ got)
        print(f"class {name}: {len(want)} code points in tokenizers, {len(wrong)} differ")
        for c in wrong[:8]:
            print(f"  {describe(c)}: tokenizers {'in' if c in want else 'not in'} the class, attend {'in' if c in got else 'not in'}")
        failures += len(wrong)
    for name, want in reference_maps().items():
        got = maps[name]
        wrong = sorted(c for c in set(want) | set(got) if want.get(c, chr(c)) != got.get(c, chr(c)))
        print(f"map {name}: {len(want)} code points changed by tokenizers, {len(wrong)} differ")
        for c in wrong[:8]:
            print(f"  {describe(c)}: tokenizers {want.get(c, chr(c))!r}, attend {got.get(c, chr(c))!r}")
        failures += len(wrong)
    print(f"tokenizers {tokenizers.__version__}: {len(CODE_POINTS)} code points, {failures} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
