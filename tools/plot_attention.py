#!/usr/bin/python3
"""Draws attention as heat maps (darker = more attention), to a PNG.

From `attend translate|embed|classify --attention-all DIR --attention-lines N` (one .npz
per line): every layer and head as a grid (layers as rows, heads as columns), one layer's
heads with --layer L, one head across the layers with --head H, or one head large with
both. --kind picks the attention: encoder_self (source x source), decoder_self (decoder
inputs x decoder inputs, causal) or cross (produced target tokens x source; the default
where the file has it).

    attend translate -m MODEL --attention-all att/ --attention-lines 0 < input.txt > output.txt
    tools/plot_attention.py att/line-0.npz --kind cross -o grid.png
    tools/plot_attention.py att/line-0.npz --kind encoder_self --layer 2 --head 5 -o head.png

The alignment head alone, from `attend translate --attention FILE` (JSON lines): one
sentence's rows of target tokens over source tokens.

    tools/plot_attention.py att.jsonl --line 0 -o attention.png

Every token is labelled, at a size read at 100 %: the figure grows with the tokens
(--max-tokens N keeps a long line's first N). --scale head (the default) darkens each
map up to its own maximum, written above it; --scale global up to the largest weight
of the whole attention (every layer and head), so maps compare. A colour bar says which.
A sentence pair's tokens are marked: sentence B in blue after a line, special tokens
in grey.

Needs matplotlib and NumPy (Debian: python3-matplotlib, python3-numpy).
"""
import argparse
import json
import sys
import zipfile

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

import attention_file  # noqa: E402  (tools/, beside this script)

TOOL = "plot_attention"
CMAP = "Blues"
COLOURS = {"A": "#222222", "B": "#1f5fa8", "special": "#8c8c8c"}
BOUNDARY = "#e07b00"  # the line between sentences A and B
# Token pitch (inches per row or column) and label size: one label per pitch, legible
# at 100 %. 7 pt labels every 0.115 in (8.3 pt) in a grid; 9 pt every 0.16 in alone.
GRID = {"pitch": 0.115, "font": 7.0, "min_map": 0.9}
SINGLE = {"pitch": 0.16, "font": 9.0, "min_map": 2.6}


class Axis:
    """One axis of a map: its tokens, and for each its sentence ("A", "B", "") and
    whether it is a special token."""

    def __init__(self, tokens, sentence=None, special=None):
        self.tokens = list(tokens)
        self.sentence = list(sentence) if sentence is not None else [""] * len(self.tokens)
        self.special = list(special) if special is not None else [False] * len(self.tokens)
        self.total = len(self.tokens)  # before cropping

    def crop(self, n):
        if n is not None and len(self.tokens) > n:
            self.tokens, self.sentence, self.special = self.tokens[:n], self.sentence[:n], self.special[:n]
        return self

    def colour(self, i):
        return COLOURS["special"] if self.special[i] else COLOURS["B"] if self.sentence[i] == "B" else COLOURS["A"]

    def b_start(self):
        return self.sentence.index("B") if "B" in self.sentence else None

    def label_inches(self, font):
        """The longest label's length on the page (a character is ~0.6 em)."""
        return 0.6 * font / 72 * max((len(t) for t in self.tokens), default=1) + 0.08

    def upright(self):
        """Column labels of one or two characters stand upright; longer ones turn 90°."""
        return max((len(t) for t in self.tokens), default=0) <= 2

    def column_label_inches(self, font):
        return 1.3 * font / 72 + 0.08 if self.upright() else self.label_inches(font)

    def cropped_note(self, name):
        return f"first {len(self.tokens)} of {self.total} {name} tokens" if len(self.tokens) < self.total else ""


def draw_map(ax, matrix, vmax):
    return ax.imshow(matrix, cmap=CMAP, vmin=0.0, vmax=max(vmax, 1e-9), aspect="auto", interpolation="nearest")


def label(ax, rows, columns, font, left=True, bottom=True):
    """Token labels on the left and bottom (outer maps only in a grid), coloured by
    sentence. Texts rather than ticks: a tick label costs matplotlib ten times more, and
    a grid has thousands."""
    from matplotlib.transforms import offset_copy

    ax.set_xticks([])
    ax.set_yticks([])
    if left:
        where = offset_copy(ax.get_yaxis_transform(), fig=ax.figure, x=-2, units="points")
        for i, token in enumerate(rows.tokens):
            ax.text(0, i, token, transform=where, ha="right", va="center", fontsize=font, color=rows.colour(i),
                    gid="row label", clip_on=False)
    if bottom:
        where = offset_copy(ax.get_xaxis_transform(), fig=ax.figure, y=-2, units="points")
        rotation = 0 if columns.upright() else 90
        for j, token in enumerate(columns.tokens):
            ax.text(j, 0, token, transform=where, ha="center", va="top", rotation=rotation, fontsize=font,
                    color=columns.colour(j), gid="column label", clip_on=False)
    for spine in ax.spines.values():
        spine.set_linewidth(0.5)
        spine.set_color("#999999")
    # Sentence B starts after this line, on either axis.
    if rows.b_start() is not None:
        ax.axhline(rows.b_start() - 0.5, color=BOUNDARY, linewidth=0.9)
    if columns.b_start() is not None:
        ax.axvline(columns.b_start() - 0.5, color=BOUNDARY, linewidth=0.9)


def labels_of(ax, which):
    """The token labels drawn on ax: "row label" or "column label" texts."""
    return [t for t in ax.texts if t.get_gid() == which]


def legend_note(rows, columns):
    notes = []
    if rows.b_start() is not None or columns.b_start() is not None:
        notes.append("sentence B in blue, after the orange line")
    if any(rows.special) or any(columns.special):
        notes.append("special tokens in grey")
    return "; ".join(notes)


def colour_bar(fig, image, rect, scale):
    bar = fig.colorbar(image, cax=fig.add_axes(rect, label="colour bar"))
    bar.ax.tick_params(labelsize=7)
    bar.set_label("share of each map's maximum" if scale == "head" else "attention weight", fontsize=8)
    return bar


def grid_figure(w, cells, shape, rows, columns, scale, title, header, row_name, column_name):
    """Maps of w[layer, head] for each (layer, head) of `cells`, `shape` = (grid rows,
    grid columns), laid out in inches so that every label has its pitch."""
    g_rows, g_cols = shape
    pitch, font = GRID["pitch"], GRID["font"]
    map_w = max(GRID["min_map"], pitch * len(columns.tokens))
    map_h = max(GRID["min_map"], pitch * len(rows.tokens))
    left, bottom = rows.label_inches(font) + 0.4, columns.column_label_inches(font) + 0.35
    gap_x, gap_y, right, top = 0.22, 0.32, 1.5, 1.0
    width = left + g_cols * map_w + (g_cols - 1) * gap_x + right
    height = bottom + g_rows * map_h + (g_rows - 1) * gap_y + top
    fig = plt.figure(figsize=(width, height))
    global_max = float(w.max()) if w.size else 0.0
    image = None
    for n, (layer, head) in enumerate(cells):
        r, c = divmod(n, g_cols)
        x = left + c * (map_w + gap_x)
        y = height - top - (r + 1) * map_h - r * gap_y
        ax = fig.add_axes((x / width, y / height, map_w / width, map_h / height))
        matrix = w[layer, head, :len(rows.tokens), :len(columns.tokens)]
        peak = float(matrix.max()) if matrix.size else 0.0
        shown = matrix / max(peak, 1e-9) if scale == "head" else matrix
        image = draw_map(ax, shown, 1.0 if scale == "head" else global_max)
        label(ax, rows, columns, font, left=c == 0, bottom=r == g_rows - 1)
        ax.set_title(header(layer, head, r, c) + (f"max {peak:.2f}" if scale == "head" else ""), fontsize=6.5, pad=2)
    fig.text(0.1 / width, 1 - (top + (height - top - bottom) / 2) / height, f"rows: {row_name}", rotation=90,
             va="center", fontsize=8, color="#555555")
    fig.text((left + (width - left - right) / 2) / width, 0.05 / height, f"columns: {column_name}",
             ha="center", va="bottom", fontsize=8, color="#555555")
    bar_h = min(4.0, g_rows * map_h + (g_rows - 1) * gap_y)
    colour_bar(fig, image, ((width - right + 0.35) / width, (height - top - bar_h) / height, 0.14 / width,
                            bar_h / height), scale)
    fig.text(0.1 / width, 1 - 0.12 / height, title, va="top", fontsize=9.5, fontweight="bold")
    note = legend_note(rows, columns)
    fig.text(0.1 / width, 1 - 0.42 / height, header.subtitle + ("; " + note if note else ""), va="top",
             fontsize=8, color="#444444")
    return fig


class Header:
    """Per-map titles: "head h" on the top row of a grid of every head, and so on."""

    def __init__(self, mode, subtitle):
        self.mode, self.subtitle = mode, subtitle

    def __call__(self, layer, head, r, c):
        if self.mode == "grid":
            return (f"head {head}\n" if r == 0 else "") + (f"layer {layer} · " if c == 0 else "")
        if self.mode == "layer":
            return f"head {head} · "
        return f"layer {layer} · "


def single_figure(matrix, rows, columns, vmax, scale, title, subtitle, row_name, column_name):
    """One map large, every token labelled."""
    pitch, font = SINGLE["pitch"], SINGLE["font"]
    map_w = max(SINGLE["min_map"], pitch * len(columns.tokens))
    map_h = max(SINGLE["min_map"], pitch * len(rows.tokens))
    left, bottom = rows.label_inches(font) + 0.45, columns.column_label_inches(font) + 0.45
    right, top = 1.4, 0.95
    width, height = max(left + map_w + right, 6.0), bottom + map_h + top
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((left / width, bottom / height, map_w / width, map_h / height))
    image = draw_map(ax, matrix, vmax)
    label(ax, rows, columns, font)
    fig.text(0.12 / width, (bottom + map_h / 2) / height, row_name, rotation=90, va="center", fontsize=9)
    fig.text((left + map_w / 2) / width, 0.1 / height, column_name, ha="center", va="bottom", fontsize=9)
    bar = colour_bar(fig, image, ((left + map_w + 0.25) / width, bottom / height, 0.16 / width,
                                  min(map_h, 4.0) / height), "global")
    bar.set_label("attention weight" + (" (to this map's maximum)" if scale == "head" else ""), fontsize=8)
    fig.text(0.1 / width, 1 - 0.12 / height, title, va="top", fontsize=10, fontweight="bold")
    note = legend_note(rows, columns)
    fig.text(0.1 / width, 1 - 0.45 / height, subtitle + ("; " + note if note else ""), va="top", fontsize=8.5,
             color="#444444")
    return fig


def shorten(text, n=90):
    return text if len(text) <= n else text[:n - 1] + "…"


def heads_figure(data, path, kind, layer, head, scale, max_tokens):
    """The figure of a .npz: the grid, one layer, one head across layers, or one head."""
    w = attention_file.weights(data, path, kind)
    attention_file.check_layer_head(w, path, kind, layer, head)
    if w.shape[2] == 0 or w.shape[3] == 0:
        raise attention_file.AttentionFileError(f"{path}: {kind} has no rows (an empty input line is not run)")
    (row_tokens, column_tokens), marks = attention_file.axes(data, kind), attention_file.axis_marks(data, kind)
    rows = Axis(row_tokens, *marks[0]).crop(max_tokens)
    columns = Axis(column_tokens, *marks[1]).crop(max_tokens)
    line = attention_file.line_of(data)
    title = " · ".join(x for x in (attention_file.model_name(data, path), f"line {line}" if line is not None else "",
                                   f"“{shorten(attention_file.sentence(data))}”") if x)
    row_name, column_name = attention_file.AXIS_NAMES[kind]
    cropped = "; ".join(dict.fromkeys(x for x in (rows.cropped_note(row_name), columns.cropped_note(column_name)) if x))
    scale_text = "each map to its own maximum" if scale == "head" else f"one scale, 0 – {float(w.max()):.2f} (all layers and heads)"
    what = attention_file.TITLES[kind]
    if layer is not None and head is not None:
        matrix = w[layer, head, :len(rows.tokens), :len(columns.tokens)]
        vmax = float(matrix.max()) if scale == "head" else float(w.max())
        subtitle = f"{what}, layer {layer}, head {head}; colour scale: {scale_text}" + (f"; {cropped}" if cropped else "")
        return single_figure(matrix, rows, columns, vmax, scale, title, subtitle, row_name, column_name)
    layers, heads = w.shape[0], w.shape[1]
    if layer is not None:
        cells, shape, mode, which = [(layer, h) for h in range(heads)], (1, heads), "layer", f"every head of layer {layer}"
    elif head is not None:
        cells, shape, mode, which = [(l, head) for l in range(layers)], (1, layers), "head", f"head {head} of every layer"
    else:
        cells, shape, mode, which = [(l, h) for l in range(layers) for h in range(heads)], (layers, heads), "grid", \
            "every layer (rows) and head (columns)"
    subtitle = f"{what}, {which}; colour scale: {scale_text}" + (f"; {cropped}" if cropped else "")
    return grid_figure(w, cells, shape, rows, columns, scale, title, Header(mode, subtitle), row_name, column_name)


def read_sentence(path, line):
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f):
            record = json.loads(text)
            if record.get("line", number) == line:
                return record
    sys.exit(f"{TOOL}: {path} has no line {line}")


def alignment_figure(record, scale, max_tokens):
    import numpy as np

    matrix, source, target = record["attention"], record["source"], record["target"]
    if not matrix:
        sys.exit(f"{TOOL}: line {record.get('line')} has no attention (an empty input or output)")
    if len(matrix) != len(target) or any(len(r) != len(source) for r in matrix):
        sys.exit(f"{TOOL}: line {record.get('line')}: attention is not {len(target)} x {len(source)}")
    special = attention_file.SPECIAL
    rows = Axis(target, special=[bool(special.match(t)) for t in target]).crop(max_tokens)
    columns = Axis(source, special=[bool(special.match(t)) for t in source]).crop(max_tokens)
    matrix = np.array(matrix, dtype=np.float64)[:len(rows.tokens), :len(columns.tokens)]
    vmax = float(matrix.max()) if scale == "head" else 1.0
    title = f"line {record.get('line')} · score {record.get('score', 0):.3f}"
    scale_text = "to its maximum" if scale == "head" else "0 – 1"
    cropped = "; ".join(x for x in (rows.cropped_note("target"), columns.cropped_note("source")) if x)
    subtitle = f"the alignment head (--attention); colour scale: {scale_text}" + (f"; {cropped}" if cropped else "")
    return single_figure(matrix, rows, columns, vmax, scale, title, subtitle, "target", "source")


def save(fig, output, dpi):
    fig.savefig(output, dpi=dpi)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="an .npz from --attention-all, or JSON lines from --attention")
    p.add_argument("--kind", choices=attention_file.KINDS, help="(.npz) which attention (default: cross if present)")
    p.add_argument("--layer", type=int, help="(.npz) this layer's heads; with --head, that head alone")
    p.add_argument("--head", type=int, help="(.npz) this head in every layer; with --layer, that head alone")
    p.add_argument("--scale", choices=("head", "global"), default="head",
                   help="colour scale: each map to its own maximum (default), or one for the whole attention")
    p.add_argument("--max-tokens", type=int, help="draw only the first N tokens of each axis (long lines)")
    p.add_argument("--dpi", type=int, default=100, help="resolution (default 100: labels legible at 100 %%)")
    p.add_argument("--line", type=int, default=0, help="(JSON lines) 0-based input line to draw (default 0)")
    p.add_argument("-o", "--output", default="attention.png", help="PNG to write (default attention.png)")
    args = p.parse_args()
    if args.max_tokens is not None and args.max_tokens < 1:
        p.error(f"--max-tokens {args.max_tokens}: must be ≥ 1")
    if args.dpi < 10 or args.dpi > 1200:
        p.error(f"--dpi {args.dpi}: must be in 10..1200")
    try:
        is_npz = zipfile.is_zipfile(args.file)
    except OSError as e:
        sys.exit(f"{TOOL}: {e}")
    try:
        if is_npz:
            data = attention_file.load(args.file)
            kind = args.kind or ("cross" if "cross" in data else "encoder_self")
            fig = heads_figure(data, args.file, kind, args.layer, args.head, args.scale, args.max_tokens)
        else:
            fig = alignment_figure(read_sentence(args.file, args.line), args.scale, args.max_tokens)
        save(fig, args.output, args.dpi)
    except attention_file.AttentionFileError as e:
        attention_file.fail(TOOL, e)
    except OSError as e:
        sys.exit(f"{TOOL}: cannot write {args.output}: {e.strerror or e}")
    print(args.output)


if __name__ == "__main__":
    main()
