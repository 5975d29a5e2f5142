#!/usr/bin/python3
"""Writes one self-contained HTML page to explore a line's attention, as bertviz draws it:
every layer and head of the encoder self-attention, decoder self-attention and
cross-attention that `attend translate --attention-all` wrote.

    attend translate -m MODEL --attention-all att/ --attention-lines 3 < input.txt > output.txt
    tools/attention_view.py att/line-3.npz -o view.html

Open view.html in any browser — no network, no server: the weights, the script and the
style are inside the file. Pick the attention (encoder / decoder / cross), a layer, a
head or all heads (one colour each); lines join each token on the left (the one that
attends: a source token, or the decoder step, named by the token it produced for cross)
to the tokens on the right it attends to, darker for more. Hover a token on the left to
see only what it attends to (the right tokens shade by weight), one on the right to see
what attends to it. The matrix below is the chosen head (all heads: their mean).
Needs NumPy (Debian: python3-numpy).
"""
import argparse
import html
import json
import sys

import attention_file  # tools/, beside this script

TOOL = "attention_view"
LABELS = {"encoder_self": "encoder self", "decoder_self": "decoder self", "cross": "cross"}

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>__TITLE__</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 16px 24px; color: #222; background: #fff; }
h1 { font-size: 17px; margin: 0 0 10px; }
.group { margin: 4px 0; }
.group > span { display: inline-block; width: 64px; color: #666; }
button { font: inherit; margin: 2px 2px; padding: 3px 9px; border: 2px solid #ccc; border-radius: 5px;
         background: #f6f6f6; cursor: pointer; }
button.active { background: #333; color: #fff; border-color: #333; }
button.head { border-color: var(--colour); }
button.head.active { background: var(--colour); border-color: var(--colour); }
#view { position: relative; display: flex; margin-top: 14px; }
.column { display: flex; flex-direction: column; position: relative; z-index: 1; }
.column .caption { color: #666; font-size: 12px; margin-bottom: 4px; }
.token { padding: 1px 8px; margin: 1px 0; border-radius: 3px; cursor: default; white-space: pre; min-height: 20px; }
#left .token { text-align: right; }
.token.hovered { outline: 2px solid #333; }
#lines { position: absolute; left: 0; top: 0; pointer-events: none; }
#gap { width: 240px; }
#status { margin-top: 12px; color: #555; }
#matrix { margin-top: 10px; display: inline-grid; gap: 1px; background: #eee; }
#matrix div { width: 14px; height: 14px; }
</style></head>
<body>
<h1>__TITLE__</h1>
<div id="controls">
  <div class="group" id="kinds"><span>attention</span></div>
  <div class="group" id="layers"><span>layer</span></div>
  <div class="group" id="heads"><span>head</span></div>
</div>
<div id="view">
  <div class="column" id="left"></div>
  <div id="gap"></div>
  <div class="column" id="right"></div>
  <svg id="lines" xmlns="http://www.w3.org/2000/svg"></svg>
</div>
<div id="status"></div>
<div id="matrix"></div>
<script id="attention-data" type="application/json">__DATA__</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("attention-data").textContent);
const kinds = Object.keys(data.kinds);
const state = { kind: kinds.includes("cross") ? "cross" : kinds[0], layer: 0, head: "all", hover: null };
const $ = (id) => document.getElementById(id);
const colour = (h, heads) => `hsl(${Math.round(360 * h / heads)}, 70%, 42%)`;

function button(parent, text, cls, active, onclick) {
  const b = document.createElement("button");
  b.textContent = text;
  b.className = cls + (active ? " active" : "");
  b.addEventListener("click", onclick);
  parent.appendChild(b);
  return b;
}

function controls() {
  const k = data.kinds[state.kind];
  for (const id of ["kinds", "layers", "heads"])
    while ($(id).children.length > 1) $(id).removeChild($(id).lastChild);
  for (const kind of kinds)
    button($("kinds"), data.labels[kind], "kind", kind === state.kind, () => {
      state.kind = kind;
      state.layer = Math.min(state.layer, data.kinds[kind].layers - 1);
      render();
    }).dataset.kind = kind;
  for (let l = 0; l < k.layers; ++l)
    button($("layers"), String(l), "layer", l === state.layer, () => { state.layer = l; render(); }).dataset.layer = l;
  button($("heads"), "all", "head-all", state.head === "all", () => { state.head = "all"; render(); }).dataset.head = "all";
  for (let h = 0; h < k.heads; ++h) {
    const b = button($("heads"), String(h), "head", state.head === h, () => { state.head = h; render(); });
    b.dataset.head = h;
    b.style.setProperty("--colour", colour(h, k.heads));
  }
}

// The heads drawn: the chosen one, or all of them.
const shown = (k) => (state.head === "all" ? [...Array(k.heads).keys()] : [state.head]);
const weight = (k, h, i, j) => k.w[state.layer][h][i][j];

function tokens(id, caption, list, side) {
  const column = $(id);
  column.innerHTML = "";
  const c = document.createElement("div");
  c.className = "caption";
  c.textContent = caption;
  column.appendChild(c);
  list.forEach((text, index) => {
    const t = document.createElement("div");
    t.className = "token";
    t.textContent = text;
    t.dataset.index = index;
    t.addEventListener("mouseenter", () => { state.hover = { side, index }; highlight(); });
    t.addEventListener("mouseleave", () => { state.hover = null; highlight(); });
    column.appendChild(t);
  });
}

function lines() {
  const k = data.kinds[state.kind], svg = $("lines"), view = $("view").getBoundingClientRect();
  svg.setAttribute("width", view.width);
  svg.setAttribute("height", view.height);
  svg.innerHTML = "";
  const left = [...$("left").querySelectorAll(".token")], right = [...$("right").querySelectorAll(".token")];
  const anchor = (el, side) => {
    const r = el.getBoundingClientRect();
    return [(side === "left" ? r.right : r.left) - view.left, (r.top + r.bottom) / 2 - view.top];
  };
  const heads = shown(k);
  for (const h of heads)
    for (let i = 0; i < k.rows.length; ++i)
      for (let j = 0; j < k.columns.length; ++j) {
        const w = weight(k, h, i, j);
        if (w < 0.01) continue;
        const [x1, y1] = anchor(left[i], "left"), [x2, y2] = anchor(right[j], "right");
        const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
        line.setAttribute("x1", x1); line.setAttribute("y1", y1);
        line.setAttribute("x2", x2); line.setAttribute("y2", y2);
        line.setAttribute("stroke", heads.length > 1 ? colour(h, k.heads) : "#1f4e9c");
        line.setAttribute("stroke-width", 2);
        line.setAttribute("stroke-opacity", heads.length > 1 ? w * 0.8 : w);
        line.dataset.i = i; line.dataset.j = j; line.dataset.head = h; line.dataset.weight = w;
        svg.appendChild(line);
      }
}

// Hovering a left token keeps its lines and shades the right tokens by what it gives
// them (the mean over the heads shown); a right token, the other way round.
function highlight() {
  const k = data.kinds[state.kind], heads = shown(k), hover = state.hover;
  for (const line of $("lines").children) {
    const keep = !hover || (hover.side === "left" ? +line.dataset.i === hover.index : +line.dataset.j === hover.index);
    line.style.display = keep ? "" : "none";
  }
  for (const side of ["left", "right"])
    for (const t of $(side).querySelectorAll(".token")) {
      const index = +t.dataset.index;
      t.classList.toggle("hovered", !!hover && hover.side === side && hover.index === index);
      let shade = 0;
      if (hover && hover.side !== side) {
        const [i, j] = side === "right" ? [hover.index, index] : [index, hover.index];
        for (const h of heads) shade += weight(k, h, i, j) / heads.length;
      }
      t.style.background = shade > 0 ? `rgba(31, 78, 156, ${Math.min(1, shade).toFixed(3)})` : "";
      t.style.color = shade > 0.5 ? "#fff" : "";
      t.dataset.shade = shade.toFixed(4);
    }
}

function matrix() {
  const k = data.kinds[state.kind], heads = shown(k), m = $("matrix");
  m.innerHTML = "";
  m.style.gridTemplateColumns = `repeat(${k.columns.length}, 14px)`;
  for (let i = 0; i < k.rows.length; ++i)
    for (let j = 0; j < k.columns.length; ++j) {
      let w = 0;
      for (const h of heads) w += weight(k, h, i, j) / heads.length;
      const cell = document.createElement("div");
      cell.style.background = `rgba(0, 0, 0, ${w.toFixed(3)})`;
      cell.title = `${k.rows[i]} → ${k.columns[j]}: ${w.toFixed(3)}`;
      m.appendChild(cell);
    }
}

function render() {
  const k = data.kinds[state.kind];
  if (state.head !== "all" && state.head >= k.heads) state.head = "all";
  controls();
  tokens("left", k.row_caption, k.rows, "left");
  tokens("right", k.column_caption, k.columns, "right");
  lines();
  highlight();
  matrix();
  const head = state.head === "all" ? `all ${k.heads} heads` : `head ${state.head}`;
  $("status").textContent = `${data.titles[state.kind]} · layer ${state.layer} · ${head} · ` +
    `${k.rows.length} × ${k.columns.length}` + (k.rows.length ? "" : " (an empty line: nothing was run)");
}

window.addEventListener("resize", () => { lines(); highlight(); });
render();
</script>
</body></html>
"""

CAPTIONS = {"encoder_self": ("source", "source"), "decoder_self": ("decoder input", "decoder input"),
            "cross": ("target (produced)", "source")}


def page_data(data, path):
    kinds = {}
    for kind in attention_file.kinds(data):
        w = attention_file.weights(data, path, kind)
        rows, columns = attention_file.axes(data, kind)
        kinds[kind] = {
            "layers": int(w.shape[0]), "heads": int(w.shape[1]),
            "rows": list(rows), "columns": list(columns),
            "row_caption": CAPTIONS[kind][0], "column_caption": CAPTIONS[kind][1],
            # Four decimals: what a shade or a line can show, at a third of the bytes.
            "w": [[[[round(float(x), 4) for x in row] for row in head] for head in layer] for layer in w],
        }
    return {"kinds": kinds, "labels": LABELS, "titles": attention_file.TITLES,
            "line": int(data["line"]) if "line" in data else None}


def write_page(data, path, output):
    info = page_data(data, path)
    title = f"attend — attention of line {info['line']}" if info["line"] is not None else f"attend — attention, {path}"
    # Inside <script>, "</" would end the element: JSON allows "<\/" for it.
    payload = json.dumps(info, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    text = PAGE.replace("__TITLE__", html.escape(title)).replace("__DATA__", payload)
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="an .npz from attend translate --attention-all")
    p.add_argument("-o", "--output", default="attention.html", help="HTML file to write (default attention.html)")
    args = p.parse_args()
    try:
        data = attention_file.load(args.file)
        write_page(data, args.file, args.output)
    except attention_file.AttentionFileError as e:
        attention_file.fail(TOOL, e)
    except OSError as e:
        sys.exit(f"{TOOL}: cannot write {args.output}: {e.strerror}")
    print(args.output)


if __name__ == "__main__":
    main()
