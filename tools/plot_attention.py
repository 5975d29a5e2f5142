#!/usr/bin/python3
"""Draws one sentence's attention, as `attend translate --attention FILE` writes it, as a
heat map: target tokens down the side, source tokens along the top, darker = more
attention. Writes a PNG.

    attend translate -m MODEL --attention att.jsonl < input.txt > output.txt
    tools/plot_attention.py att.jsonl --line 0 -o attention.png

Each line of FILE is {"line", "source", "target", "score", "attention"}: attention has one
row per target token, one column per source token (the model's BOS/EOS included).
Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402


def read_sentence(path, line):
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f):
            record = json.loads(text)
            if record.get("line", number) == line:
                return record
    sys.exit(f"plot_attention: {path} has no line {line}")


def plot(record, output, title=None):
    rows, source, target = record["attention"], record["source"], record["target"]
    if not rows:
        sys.exit(f"plot_attention: line {record.get('line')} has no attention (an empty input or output)")
    if len(rows) != len(target) or any(len(r) != len(source) for r in rows):
        sys.exit(f"plot_attention: line {record.get('line')}: attention is not {len(target)} x {len(source)}")
    width = max(4.0, 0.45 * len(source) + 2.0)
    height = max(3.0, 0.4 * len(target) + 1.5)
    fig, ax = plt.subplots(figsize=(width, height))
    image = ax.imshow(rows, cmap="Greys", vmin=0.0, vmax=max(max(r) for r in rows), aspect="auto")
    ax.set_xticks(range(len(source)))
    ax.set_xticklabels(source, rotation=60, ha="left", fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(target)))
    ax.set_yticklabels(target, fontsize=9)
    ax.set_xlabel("source")
    ax.set_ylabel("target")
    ax.xaxis.set_label_position("top")
    fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02, label="attention")
    if title:
        ax.set_title(title, y=-0.12)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="JSON lines from `attend translate --attention FILE`")
    p.add_argument("--line", type=int, default=0, help="0-based input line to draw (default 0)")
    p.add_argument("-o", "--output", default="attention.png", help="PNG to write (default attention.png)")
    args = p.parse_args()
    record = read_sentence(args.file, args.line)
    plot(record, args.output, f"line {args.line}, score {record.get('score', 0):.3f}")
    print(args.output)


if __name__ == "__main__":
    main()
