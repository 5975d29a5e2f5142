#!/usr/bin/python3
"""Writes one self-contained HTML page to explore attention: every layer and head of the
lines `attend translate|embed|classify --attention-all` wrote (encoder self-attention,
decoder self-attention and cross-attention), in one file you open in any browser.

    attend translate -m MODEL --attention-all att/ --attention-lines 3,7 < input.txt > output.txt
    tools/attention_view.py att/ -o view.html             # every line-N.npz of att/
    tools/attention_view.py att/line-3.npz -o view.html   # or the files you name

The page opens on the model view: every layer (rows) and head (columns) as a small heat
map, coloured per head. Click one (or move with the arrow keys and press Enter) for its
head view: lines join each token on the left (the one that attends) to the tokens on the
right it attends to, in the head's colour, stronger for more — one head, several
(shift-click) or all; hover a token to see only its lines, with the weights written
beside the tokens it attends to — and the head's matrix, tokens along both sides, with a
colour legend; hover a cell for its value. Colours scale per head (each to its own
maximum) or globally (one scale for every layer and head). Special tokens ([CLS],
</s>, …) can be hidden, which rescales the rest; a sentence pair's tokens filter as
A → A, A → B, B → A, B → B. Several lines switch in the page. Keys: arrows (layer and
head), Enter (open), Esc (model view), [ and ] (line), k (attention), s (scale).

No network, no server: the weights (to 1/65535), the script and the style are inside
the file. Needs NumPy (Debian: python3-numpy).
"""
import argparse
import base64
import glob
import html
import json
import os
import re
import sys

import attention_file  # tools/, beside this script

TOOL = "attention_view"
TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_view.html")
THUMBNAIL = 64  # cells a thumbnail of the model view keeps per axis at most (block maxima beyond)
# Cells of all the thumbnails of one attention, at most: they come before the page's
# script, so they are what the first render waits for (12 x 12 heads get 45 x 45 each).
THUMBNAIL_CELLS = 300_000
LIMIT = 1 << 31  # bytes of weights a page may hold: browsers cannot read more into one page
# Quantization of the weights: w ≈ q / 65535, q a uint16 (half of float32's bytes, and an
# error ≤ 7.7e-6, below what any colour or the 4 decimals shown can tell apart).
LEVELS = 65535


class Blobs:
    """The binary parts of the page: each a base64 <script> element, read only when the
    view needs it. The thumbnails come before the page's script, so that the model view
    draws at once; the weights after it, parsed while the model view is shown."""

    def __init__(self):
        self.parts, self.early, self.bytes = [], [], 0

    def add(self, array, early=False):
        raw = array.tobytes()
        self.bytes += len(raw)
        if self.bytes > LIMIT:
            raise attention_file.AttentionFileError(
                f"more than {LIMIT >> 20} MiB of weights for one page: give fewer lines, or --max-tokens")
        name = f"b{len(self.parts) + len(self.early)}"
        (self.early if early else self.parts).append(f'<script type="application/octet-stream" id="{name}">'
                          f'{base64.b64encode(raw).decode("ascii")}</script>')
        return name


def block_edges(n, cells):
    """Start of each of `cells` blocks that cover n items (as even as integers allow)."""
    import numpy as np

    return (np.arange(cells) * n) // cells


def thumbnail_side(layers, heads):
    """Cells per axis of each thumbnail: THUMBNAIL, fewer for a model of many heads."""
    return max(16, min(THUMBNAIL, int((THUMBNAIL_CELLS / max(1, layers * heads)) ** 0.5)))


def thumbnails(w):
    """[layers, heads, r, c] uint8 block maxima (r, c ≤ thumbnail_side), each head to its
    own maximum: what the model view draws, without reading the weights."""
    import numpy as np

    rows, columns, side = w.shape[2], w.shape[3], thumbnail_side(w.shape[0], w.shape[1])
    r, c = min(rows, side), min(columns, side)
    pooled = np.maximum.reduceat(np.maximum.reduceat(w, block_edges(rows, r), axis=2), block_edges(columns, c), axis=3)
    peak = pooled.max(axis=(2, 3), keepdims=True)
    return np.round(pooled / np.maximum(peak, 1e-12) * 255).astype(np.uint8)


def head_statistics(w, column_special):
    """Per head: its maximum, the mean entropy of its rows (bits: 0 = one token, log2 n =
    spread evenly) and the share of its attention that goes to special tokens."""
    import numpy as np

    p = w.astype(np.float64)
    entropy = -(p * np.log2(np.where(p > 0, p, 1))).sum(axis=3).mean(axis=2)
    special = np.array(column_special, dtype=bool)
    on_special = p[..., special].sum(axis=3).mean(axis=2) if special.any() else np.zeros(w.shape[:2])
    return {"max": np.round(w.max(axis=(2, 3)), 4).tolist(), "entropy": np.round(entropy, 3).tolist(),
            "special": np.round(on_special, 4).tolist()}


def kind_data(data, path, kind, blobs, max_tokens):
    import numpy as np

    w = np.asarray(attention_file.weights(data, path, kind), dtype=np.float32)
    (rows, columns), ((row_sentence, row_special), (column_sentence, column_special)) = \
        attention_file.axes(data, kind), attention_file.axis_marks(data, kind)
    total = (len(rows), len(columns))
    if max_tokens is not None:
        rows, columns = rows[:max_tokens], columns[:max_tokens]
        w = w[:, :, :len(rows), :len(columns)]
        row_sentence, row_special = row_sentence[:len(rows)], row_special[:len(rows)]
        column_sentence, column_special = column_sentence[:len(columns)], column_special[:len(columns)]
    layers, heads = int(w.shape[0]), int(w.shape[1])
    empty = w.shape[2] == 0 or w.shape[3] == 0
    quantized = np.round(np.clip(w, 0, 1) * LEVELS).astype("<u2")
    row_name, column_name = attention_file.AXIS_NAMES[kind]
    return {
        "title": attention_file.TITLES[kind], "layers": layers, "heads": heads,
        "rows": list(rows), "columns": list(columns), "total": list(total),
        "row_name": row_name, "column_name": column_name,
        "row_sentence": list(row_sentence), "column_sentence": list(column_sentence),
        "row_special": [bool(s) for s in row_special], "column_special": [bool(s) for s in column_special],
        "global_max": round(float(w.max()), 6) if w.size else 0.0,
        "stats": head_statistics(w, column_special) if not empty else None,
        "thumbs": None if empty else blobs.add(thumbnails(w), early=True),
        "thumb_side": thumbnail_side(layers, heads),
        "thumb_shape": [min(len(rows), thumbnail_side(layers, heads)), min(len(columns), thumbnail_side(layers, heads))],
        "layer_blobs": [] if empty else [blobs.add(quantized[layer]) for layer in range(layers)],
    }


def line_data(data, path, blobs, max_tokens):
    line = attention_file.line_of(data)
    texts = data.get("source_texts", [])
    return {
        "line": line, "file": os.path.basename(path), "model": attention_file.model_name(data, path),
        "sentence": attention_file.sentence(data), "texts": texts,
        "target": attention_file.detokenize(t for t in data.get("target_tokens", []) if not attention_file.SPECIAL.match(t)),
        "kinds": {kind: kind_data(data, path, kind, blobs, max_tokens) for kind in attention_file.kinds(data)},
    }


def files_of(inputs):
    """The .npz files named, a directory standing for its line-N.npz in line order."""
    out = []
    for name in inputs:
        if os.path.isdir(name):
            found = glob.glob(os.path.join(name, "*.npz"))
            if not found:
                raise attention_file.AttentionFileError(f"{name}: a directory with no .npz files")
            number = lambda p: (int(m.group(1)) if (m := re.search(r"(\d+)\.npz$", p)) else -1, p)  # noqa: E731
            out += sorted(found, key=number)
        else:
            out.append(name)
    return out


def write_page(paths, output, max_tokens=None):
    blobs = Blobs()
    lines = [line_data(attention_file.load(p), p, blobs, max_tokens) for p in paths]
    models = sorted({x["model"] for x in lines})
    title = f"attend · {' / '.join(models)} · attention" + (f" of line {lines[0]['line']}" if len(lines) == 1 and
                                                            lines[0]["line"] is not None else "")
    meta = {"lines": lines, "title": title, "levels": LEVELS}
    # Inside <script>, "</" would end the element: JSON allows "<\/" for it.
    payload = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    with open(TEMPLATE, encoding="utf-8") as f:
        page = f.read()
    page = page.replace("__TITLE__", html.escape(title)).replace("__META__", payload)
    page = page.replace("__THUMBNAILS__", "\n".join(blobs.early))
    head, tail = page.split("__WEIGHTS__")
    with open(output, "w", encoding="utf-8") as f:
        f.write(head)
        for part in blobs.parts:
            f.write(part)
            f.write("\n")
        f.write(tail)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", metavar="FILE_OR_DIR",
                   help=".npz files from --attention-all, or directories of them (every line-N.npz)")
    p.add_argument("-o", "--output", default="attention.html", help="HTML file to write (default attention.html)")
    p.add_argument("--max-tokens", type=int, help="keep only the first N tokens of each axis (long lines)")
    args = p.parse_args()
    if args.max_tokens is not None and args.max_tokens < 1:
        p.error(f"--max-tokens {args.max_tokens}: must be ≥ 1")
    try:
        write_page(files_of(args.inputs), args.output, args.max_tokens)
    except attention_file.AttentionFileError as e:
        attention_file.fail(TOOL, e)
    except OSError as e:
        sys.exit(f"{TOOL}: cannot write {args.output}: {e.strerror or e}")
    print(args.output)


if __name__ == "__main__":
    main()
