#!/usr/bin/python3
"""Draws attention as heat maps (darker = more attention), to a PNG.

Every layer and head, from `attend translate --attention-all DIR --attention-lines N`
(one .npz per line): a grid, layers as rows and heads as columns, tokens on the outer
axes — or one head large with --layer L --head H. --kind picks the attention:
encoder_self (source x source), decoder_self (decoder inputs x decoder inputs, causal)
or cross (produced target tokens x source; the default where the file has it).

    attend translate -m MODEL --attention-all att/ --attention-lines 0 < input.txt > output.txt
    tools/plot_attention.py att/line-0.npz --kind cross -o grid.png
    tools/plot_attention.py att/line-0.npz --kind encoder_self --layer 2 --head 5 -o head.png

The alignment head alone, from `attend translate --attention FILE` (JSON lines): one
sentence's rows of target tokens over source tokens.

    tools/plot_attention.py att.jsonl --line 0 -o attention.png

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


def read_sentence(path, line):
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f):
            record = json.loads(text)
            if record.get("line", number) == line:
                return record
    sys.exit(f"{TOOL}: {path} has no line {line}")


def heat_map(ax, matrix, rows, columns, font, vmax=None):
    """One matrix on `ax`, tokens as tick labels (empty lists: no labels)."""
    image = ax.imshow(matrix, cmap="Greys", vmin=0.0, vmax=vmax if vmax else max(float(matrix.max()), 1e-9),
                      aspect="auto", interpolation="nearest")
    ax.set_xticks(range(len(columns)) if columns else [])
    ax.set_xticklabels(columns, rotation=90 if max(map(len, columns), default=0) > 2 else 0, fontsize=font)
    ax.set_yticks(range(len(rows)) if rows else [])
    ax.set_yticklabels(rows, fontsize=font)
    ax.tick_params(length=0, pad=1)
    return image


def plot_alignment(record, output, title=None):
    import numpy as np

    rows, source, target = record["attention"], record["source"], record["target"]
    if not rows:
        sys.exit(f"{TOOL}: line {record.get('line')} has no attention (an empty input or output)")
    if len(rows) != len(target) or any(len(r) != len(source) for r in rows):
        sys.exit(f"{TOOL}: line {record.get('line')}: attention is not {len(target)} x {len(source)}")
    width = max(4.0, 0.45 * len(source) + 2.0)
    height = max(3.0, 0.4 * len(target) + 1.5)
    fig, ax = plt.subplots(figsize=(width, height))
    image = heat_map(ax, np.array(rows), target, source, 9)
    ax.xaxis.tick_top()
    plt.setp(ax.get_xticklabels(), rotation=60, ha="left")
    ax.set_xlabel("source")
    ax.set_ylabel("target")
    ax.xaxis.set_label_position("top")
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="attention")
    if title:
        ax.set_title(title, y=-0.12)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)


AXIS_NAMES = {"encoder_self": ("source", "source"), "decoder_self": ("decoder input", "decoder input"),
              "cross": ("target (produced)", "source")}


def plot_one_head(w, rows, columns, kind, layer, head, output, title):
    matrix = w[layer, head]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.4 * len(columns) + 2.0), max(3.0, 0.35 * len(rows) + 1.8)))
    image = heat_map(ax, matrix, rows, columns, 9)
    ylabel, xlabel = AXIS_NAMES[kind]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="attention")
    ax.set_title(f"{title}: {attention_file.TITLES[kind]}, layer {layer}, head {head}", fontsize=10)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    plt.close(fig)


def plot_grid(w, rows, columns, kind, output, title, dpi):
    layers, heads = w.shape[0], w.shape[1]
    cell = max(1.0, 0.11 * max(len(rows), len(columns)) + 0.45)
    font = 7 if max(len(rows), len(columns)) <= 16 else 4
    fig, grid = plt.subplots(layers, heads, figsize=(cell * heads + 1.2, cell * layers + 1.0), squeeze=False)
    for layer in range(layers):
        for head in range(heads):
            ax = grid[layer][head]
            # Tokens on the outer axes only: rows on the left column, columns on the bottom row.
            heat_map(ax, w[layer, head], rows if head == 0 else [], columns if layer == layers - 1 else [], font, 1.0)
            if layer == 0:
                ax.set_title(f"head {head}", fontsize=8)
            if head == heads - 1:
                ax.yaxis.set_label_position("right")
                ax.set_ylabel(f"layer {layer}", fontsize=8, rotation=270, labelpad=10)
    ylabel, xlabel = AXIS_NAMES[kind]
    fig.suptitle(f"{title}: {attention_file.TITLES[kind]} (rows: {ylabel}, columns: {xlabel})", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97), pad=0.4, h_pad=0.3, w_pad=0.3)
    fig.savefig(output, dpi=dpi)
    plt.close(fig)


def plot_heads(path, kind, layer, head, output, dpi):
    try:
        data = attention_file.load(path)
        kind = kind or ("cross" if "cross" in data else "encoder_self")
        w = attention_file.weights(data, path, kind)
        attention_file.check_layer_head(w, path, kind, layer, head)
    except attention_file.AttentionFileError as e:
        attention_file.fail(TOOL, e)
    rows, columns = attention_file.axes(data, kind)
    if w.shape[2] == 0 or w.shape[3] == 0:
        sys.exit(f"{TOOL}: {path}: {kind} has no rows (an empty input line is not run)")
    title = f"line {int(data['line'])}" if "line" in data else path
    if (layer is None) != (head is None):
        sys.exit(f"{TOOL}: give both --layer and --head to draw one head, or neither for the grid")
    if layer is None:
        plot_grid(w, rows, columns, kind, output, title, dpi)
    else:
        plot_one_head(w, rows, columns, kind, layer, head, output, title)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="an .npz from --attention-all, or JSON lines from --attention")
    p.add_argument("--kind", choices=attention_file.KINDS, help="(.npz) which attention (default: cross if present)")
    p.add_argument("--layer", type=int, help="(.npz) draw this layer's --head alone")
    p.add_argument("--head", type=int, help="(.npz) the head to draw with --layer")
    p.add_argument("--dpi", type=int, default=100, help="(.npz grid) resolution (default 100)")
    p.add_argument("--line", type=int, default=0, help="(JSON lines) 0-based input line to draw (default 0)")
    p.add_argument("-o", "--output", default="attention.png", help="PNG to write (default attention.png)")
    args = p.parse_args()
    try:
        is_npz = zipfile.is_zipfile(args.file)
    except OSError as e:
        sys.exit(f"{TOOL}: {e}")
    if is_npz:
        plot_heads(args.file, args.kind, args.layer, args.head, args.output, args.dpi)
    else:
        record = read_sentence(args.file, args.line)
        plot_alignment(record, args.output, f"line {args.line}, score {record.get('score', 0):.3f}")
    print(args.output)


if __name__ == "__main__":
    main()
