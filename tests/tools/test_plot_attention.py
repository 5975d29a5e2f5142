#!/usr/bin/python3
"""tools/plot_attention.py's pictures, read back: attention files from real runs (the
test translation model; a BERT cross-encoder on a sentence pair) drawn as a grid, one
layer, one head across layers and one head alone, and the --attention JSON lines; each
PNG opened again and checked for its size and that it is not blank. The figures' own
geometry is checked for what a reader needs: every token labelled at ≥ 6.5 pt with no
two labels overlapping at 50 tokens, a colour bar that names its scale, --max-tokens
cropping, sentence B and special tokens marked, and the model and the sentence in the
title; the command line with every option of a picture; the labels of a translation
the model's SentencePiece pieces (spm_encode).

    test_plot_attention.py ATTEND MODEL_DIR SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

SOURCE = sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SOURCE, "tools"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402

import attention_file  # noqa: E402
import plot_attention  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, run  # noqa: E402


def read_png(path):
    """(height, width) in pixels, after checking the picture is not blank: its luminance
    spreads, and neither white nor ink fills it."""
    image = matplotlib.image.imread(path)
    luminance = image[..., :3] @ np.array([0.299, 0.587, 0.114])
    inked = float((luminance < 0.97).mean())
    check(luminance.std() > 0.03 and 0.005 < inked < 0.9, f"{path} looks blank: spread {luminance.std():.3f}, {inked:.1%} inked")
    return image.shape[:2]


def labels_legible(fig, minimum_points=6.5):
    """Every token label at least `minimum_points`, and no two of an axis overlapping, as drawn."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    count = 0
    for ax in fig.axes:
        for which, along in (("column label", 0), ("row label", 1)):
            labels = plot_attention.labels_of(ax, which)
            for t in labels:
                check(t.get_fontsize() >= minimum_points, f"label {t.get_text()!r} is {t.get_fontsize()} pt")
            boxes = sorted((b.x0, b.x1) if along == 0 else (b.y0, b.y1)
                           for b in (t.get_window_extent(renderer) for t in labels))
            for (a0, a1), (b0, b1) in zip(boxes, boxes[1:]):
                check(b0 >= a1 - 0.5, f"labels overlap: {a0:.1f}..{a1:.1f} and {b0:.1f}..{b1:.1f} (pixels)")
            count += len(labels)
    return count


def colour_bar_label(fig):
    texts = [ax.get_ylabel() for ax in fig.axes if ax.get_label() == "colour bar"]
    check(len(texts) == 1, f"one colour bar, not {len(texts)}")
    return texts[0]


def synthetic(path, n, layers=2, heads=2):
    """A 50-token pair as a cross-encoder's file holds it: type and sequence ids, texts."""
    rng = np.random.default_rng(5)
    tokens = ["[CLS]"] + [f"word{i}" for i in range(n - 3)] + ["[SEP]", "[SEP]"]
    tokens[n // 2] = "[SEP]"
    sequence = [-1] + [0] * (n // 2 - 1) + [-1] + [1] * (n - n // 2 - 2) + [-1]
    logits = rng.standard_normal((layers, heads, n, n)) * 2
    w = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.savez(path, encoder_self=w.astype(np.float32), source_ids=np.arange(n, dtype=np.int32),
             source_tokens=np.array(tokens), source_sequence_ids=np.array(sequence, dtype=np.int32),
             source_type_ids=np.array([0] * (n // 2 + 1) + [1] * (n - n // 2 - 1), dtype=np.int32),
             source_texts=np.array(["the first sentence", "the second one"]), model=np.array("/models/a-cross-encoder"),
             line=np.array(4))
    return w


def main():
    attend, model = sys.argv[1], sys.argv[2]
    scratch = tempfile.mkdtemp(prefix="attend-plot-")
    tool = [sys.executable, os.path.join(SOURCE, "tools", "plot_attention.py")]

    # A 50-token pair: labels legible, sentence B and specials marked, title and scale named.
    pair = os.path.join(scratch, "pair.npz")
    w = synthetic(pair, 50)
    data = attention_file.load(pair)
    for layer, head, expect in ((None, None, 4), (1, None, 2), (None, 1, 2), (0, 1, 1)):
        fig = plot_attention.heads_figure(data, pair, "encoder_self", layer, head, "head", None)
        maps = [ax for ax in fig.axes if ax.get_label() != "colour bar"]
        check(len(maps) == expect, f"--layer {layer} --head {head}: {len(maps)} maps, not {expect}")
        if expect != 2:  # the grid and the single map drawn and measured (each row of maps is the grid's)
            check(labels_legible(fig) >= 100, "every token is labelled on the rows and the columns")
        check("share of each map's maximum" in colour_bar_label(fig) or "maximum" in colour_bar_label(fig),
              f"the colour bar names the per-head scale: {colour_bar_label(fig)!r}")
        title = " ".join(t.get_text() for t in fig.texts)
        check("a-cross-encoder" in title and "line 4" in title and "the first sentence ‖ the second one" in title,
              f"the title names the model, the line and the sentence: {title!r}")
        check("sentence B in blue" in title and "special tokens in grey" in title, f"the marks are explained: {title!r}")
        colours = {t.get_text(): t.get_color() for t in plot_attention.labels_of(maps[-1], "column label")}
        check(colours["[CLS]"] == plot_attention.COLOURS["special"] and colours["word1"] == plot_attention.COLOURS["A"] and
              colours["word40"] == plot_attention.COLOURS["B"], f"token colours: {colours}")
        check(any(line.get_color() == plot_attention.BOUNDARY for line in maps[-1].lines), "sentence B starts at a line")
        if layer is not None and head is not None:
            image = maps[0].get_images()[0]
            check(abs(image.norm.vmax - float(w[0, 1].max())) < 1e-6, "one head: to its own maximum")
        plot_attention.plt.close(fig)
    fig = plot_attention.heads_figure(data, pair, "encoder_self", 0, 1, "global", None)
    check(abs(fig.axes[0].get_images()[0].norm.vmax - float(w.max())) < 1e-6, "--scale global: to the largest weight")
    check(colour_bar_label(fig) == "attention weight", f"global colour bar: {colour_bar_label(fig)!r}")
    plot_attention.plt.close(fig)
    fig = plot_attention.heads_figure(data, pair, "encoder_self", None, None, "global", 20)
    check(all(len(plot_attention.labels_of(ax, "row label")) in (0, 20) for ax in fig.axes[:-1]) and
          len(plot_attention.labels_of(fig.axes[0], "row label")) == 20, "--max-tokens 20 keeps 20 rows")
    check("first 20 of 50 source tokens" in " ".join(t.get_text() for t in fig.texts), "the crop is said")
    plot_attention.plt.close(fig)

    # The command line, on files from real runs.
    lines = "The quick brown fox jumps over the lazy dog.\nA small red house.\n"
    att = os.path.join(scratch, "att")
    jsonl = os.path.join(scratch, "att.jsonl")
    run([attend, "translate", "-m", model, "-q", "--max-length", "12", "--attention", jsonl, "--attention-all", att,
         "--attention-lines", "0"], input=lines)
    npz = os.path.join(att, "line-0.npz")
    z = attention_file.load(npz)
    layers, heads = z["cross"].shape[:2]
    sizes = {}
    out = os.path.join(scratch, "grid.png")
    run(tool + [npz, "-o", out])  # the command line once; its variants in this process (matplotlib loads once)
    sizes["grid"] = read_png(out)
    out = os.path.join(scratch, "options.png")  # and once with every option of a picture
    run(tool + [npz, "--kind", "encoder_self", "--layer", "1", "--scale", "global", "--max-tokens", "4", "--dpi", "80", "-o", out])
    sizes["options"] = read_png(out)
    check(sizes["options"][0] < sizes["grid"][0] and sizes["options"][1] < sizes["grid"][1],
          f"one layer of 4 tokens at 80 dpi is smaller than the grid: {sizes['options']}, {sizes['grid']}")
    # The labels are the model's SentencePiece pieces, as spm_encode cuts the line, and its end token.
    pieces = run(["spm_encode", "--model", os.path.join(model, "source.spm")], input=lines.splitlines()[0] + "\n").stdout.split()
    fig = plot_attention.heads_figure(z, npz, "cross", 0, 0, "head", None)
    labels = [t.get_text() for t in plot_attention.labels_of(fig.axes[0], "column label")]
    check(labels == pieces + ["</s>"], f"the column labels are SentencePiece's pieces: {labels} != {pieces} + </s>")
    plot_attention.plt.close(fig)
    for name, args in (("layer", ("cross", 1, None, "head", None)), ("head", ("cross", 1, 2, "head", None)),
                       ("global", ("cross", None, None, "global", None)), ("crop", ("encoder_self", None, None, "head", 4))):
        out = os.path.join(scratch, name + ".png")
        plot_attention.save(plot_attention.heads_figure(z, npz, *args[:3], *args[3:]), out, 100)
        sizes[name] = read_png(out)
    columns = len(z["source_tokens"])
    # At 100 dpi each token has ≥ 11.5 pixels (0.115 in) in every map of the grid.
    check(sizes["grid"][1] >= heads * columns * 11.5 and sizes["grid"][0] >= layers * len(z["target_tokens"]) * 11.5,
          f"the grid grows with its tokens: {sizes['grid']} for {layers} x {heads} maps of {columns} columns")
    check(sizes["layer"][0] < sizes["grid"][0] and sizes["layer"][1] == sizes["grid"][1],
          f"one layer is one row of the grid's maps: {sizes['layer']}, the grid {sizes['grid']}")
    check(sizes["crop"][1] < sizes["grid"][1], "--max-tokens 4 draws less")
    out = os.path.join(scratch, "alignment.png")
    run(tool + [jsonl, "--line", "0", "-o", out])
    read_png(out)

    # A cross-encoder's pair from attend classify: the tokenizer's tokens, sentence B marked.
    cross = os.path.join(SOURCE, "tests", "data", "encoders", "bert-cross-encoder")
    pair_file = os.path.join(scratch, "pair-run.npz")
    run([attend, "classify", "-m", cross, "-q", "--attention-all", pair_file, "--attention-lines", "0"],
        input="is a model good?\ta model is a good text embedding\n")
    z = attention_file.load(pair_file)
    fig = plot_attention.heads_figure(z, pair_file, "encoder_self", 0, 1, "head", None)
    labels = [t.get_text() for t in plot_attention.labels_of(fig.axes[0], "column label")]
    check(labels[0] == "[CLS]" and "model" in labels and labels.count("[SEP]") == 2, f"token labels: {labels}")
    check(any(line.get_color() == plot_attention.BOUNDARY for line in fig.axes[0].lines), "sentence B is marked")
    out = os.path.join(scratch, "pair-run.png")
    plot_attention.save(fig, out, 100)
    read_png(out)

    bad = subprocess.run(tool + [pair, "--max-tokens", "0"], capture_output=True, text=True)
    check(bad.returncode == 2 and "--max-tokens 0: must be ≥ 1" in bad.stderr, f"--max-tokens 0: {bad.stderr}")
    print(f"plot_attention: {len(sizes) + 2} PNGs drawn and read back; labels legible at 50 tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
