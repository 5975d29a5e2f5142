#!/usr/bin/python3
"""tools/attention_view.py's page in a real browser (headless Chromium through the DevTools
protocol, input events hit-tested as a user's):

  - two lines of the test translation model (attend translate --attention-all) in one
    page: the title naming the model, line, sentence and attention; the tokens
    SentencePiece's pieces (spm_encode); the model view first (every layer x head), a
    thumbnail hovered (its maximum the .npz's) and clicked → that head's view, the line
    switched with a key and from the picker, layer and head moved with the arrows, Esc
    back; a token hovered (its lines only); a matrix cell hovered, its tooltip's value
    equal to the .npz's (NumPy reads it); the matrix's row and column labels (the tokens,
    drawn) and its colour legend (white to the head's colour, up to the head's maximum);
    the scale switched to global (the legend up to the largest weight, the map lighter);
  - a BERT cross-encoder's sentence pair (attend classify --attention-all): the
    tokenizer's tokens on the page, the A → B filter and hiding the special tokens;
  - render time, on attention shaped like real models (MiniLM's 6 layers x 12 heads at
    512 tokens, BERT-base's 12 x 12 at 128, real tokens from the test tokenizer): the
    first render within 1 s at 128 tokens and 3 s at 512, and so the head view after a
    click and all heads at once — a page that takes longer is frozen to its reader.

Skips (exit 77) where Chromium is not installed or does not start.

    test_attention_view.py ATTEND MODEL_DIR SOURCE_DIR
"""
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import devtools  # noqa: E402
from checks import check, run  # noqa: E402

LIMITS = {128: 1.0, 512: 3.0}  # seconds: first render, head view, all heads


def dataset(browser):
    return browser.evaluate("Object.assign({}, document.body.dataset)")


def wait_for(browser, expression, what, timeout=20):
    deadline = time.time() + timeout
    while not browser.evaluate(expression):
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what} ({expression})")
        time.sleep(0.02)


def open_page(browser, page):
    browser.open(page)
    wait_for(browser, "document.body.dataset.ready === 'true'", "the first render")
    return browser.evaluate("attendTimings.firstRender") / 1000


def canvas_point(browser, canvas, x, y):
    """Viewport coordinates of (x, y) CSS pixels inside a canvas, scrolled into view."""
    return browser.evaluate(f"""(() => {{ const c = document.getElementById('{canvas}');
      window.scrollTo(0, Math.max(0, c.getBoundingClientRect().top + window.scrollY + {y} - 200));
      const r = c.getBoundingClientRect(); return [r.left + {x}, r.top + {y}]; }})()""")


def mouse(browser, point, click=False):
    x, y = point
    browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    if click:
        for kind in ("mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def key(browser, name, code=None):
    codes = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40, "Escape": 27, "Enter": 13, "]": 221, "[": 219}
    for kind in ("keyDown", "keyUp"):
        browser.call("Input.dispatchKeyEvent", type=kind, key=name, code=code or name,
                     windowsVirtualKeyCode=codes.get(name, ord(name.upper()[0])),
                     text=name if len(name) == 1 and kind == "keyDown" else "")


def canvas_ink(browser, canvas, box=None):
    """A fingerprint of what a canvas holds, or its box (x, y, width, height in CSS
    pixels): (non-white pixels, sum of their darkness)."""
    box = "null" if box is None else "[" + ", ".join(str(float(v)) for v in box) + "]"
    return browser.evaluate(f"""(() => {{ const c = document.getElementById('{canvas}'), b = {box}, r = c.ratio || 1;
      const [x, y, w, h] = b ? [Math.round(b[0] * r), Math.round(b[1] * r), Math.max(1, Math.round(b[2] * r)),
                                Math.max(1, Math.round(b[3] * r))] : [0, 0, c.width, c.height];
      const d = c.getContext('2d').getImageData(x, y, w, h).data; let n = 0, s = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] < 250 || d[i + 1] < 250 || d[i + 2] < 250))
        {{ ++n; s += 765 - d[i] - d[i + 1] - d[i + 2]; }} return [n, s]; }})()""")


def canvas_pixel(browser, canvas, x, y):
    """The [r, g, b] a canvas holds at (x, y) CSS pixels."""
    return browser.evaluate(f"""(() => {{ const c = document.getElementById('{canvas}'), r = c.ratio || 1;
      return [...c.getContext('2d').getImageData(Math.round({x} * r), Math.round({y} * r), 1, 1).data.slice(0, 3)]; }})()""")


def tooltip(browser):
    return browser.evaluate("document.getElementById('tip').style.display === 'block' ? "
                            "document.getElementById('tip').textContent : ''")


def translation_page(browser, attend, model, tool, scratch):
    """Two lines of the translation model: the model view, clicks, keys, hover values."""
    text = "The quick brown fox jumps over the lazy dog.\nA small red house.\nShe was in the old tree.\n"
    att = os.path.join(scratch, "att")
    run([attend, "translate", "-m", model, "-q", "--max-length", "12", "--attention-all", att, "--attention-lines", "0,2"],
        input=text)
    page = os.path.join(scratch, "translation.html")
    run(tool + [att, "-o", page])
    html = open(page, encoding="utf-8").read()
    for outside in ("src=", "href=", "@import", "url(", "fetch(", "XMLHttpRequest", "http://", "https://"):
        check(outside not in html, f"the page loads nothing from elsewhere, yet has {outside}")
    files = {n: np.load(os.path.join(att, f"line-{n}.npz")) for n in (0, 2)}
    layers, heads = files[0]["cross"].shape[:2]

    open_page(browser, page)
    d = dataset(browser)
    check(d["view"] == "model" and d["kind"] == "cross" and d["line"] == "0", f"the model view of line 0 first: {d}")
    kinds = browser.evaluate("[...document.querySelectorAll('#kinds button')].map(b => b.dataset.kind)")
    check(kinds == ["encoder_self", "decoder_self", "cross"], f"kinds: {kinds}")
    title = browser.evaluate("document.title")
    check("model" in title and "line 0" in title and "The quick brown fox" in title and "cross-attention" in title,
          f"the title names the model, the line, the sentence and what is shown: {title}")
    # The tokens are the model's SentencePiece pieces, as spm_encode (Debian's, which made
    # the fixture's source.spm) cuts the sentence, and the end token the model appends.
    pieces = run(["spm_encode", "--model", os.path.join(model, "source.spm")], input=text.splitlines()[0] + "\n").stdout.split()
    check(browser.evaluate("kind().columns") == pieces + ["</s>"] and [str(t) for t in files[0]["source_tokens"]] == pieces + ["</s>"],
          f"the source tokens are SentencePiece's pieces: {browser.evaluate('kind().columns')} != {pieces} + </s>")
    check("The quick brown fox" in browser.evaluate("document.getElementById('sentence').textContent"),
          "the sentence is on the page")
    grid = browser.evaluate("(() => { const c = document.getElementById('grid'); return [c.clientWidth, c.clientHeight]; })()")
    geometry = browser.evaluate("[grid.x0, grid.y0, grid.cell, grid.gap]")
    x0, y0, cell, gap = geometry
    check(grid[0] >= x0 + heads * cell and grid[1] >= y0 + layers * cell, f"a thumbnail per layer and head: {grid}, {geometry}")
    check(canvas_ink(browser, "grid")[0] > 0.2 * layers * heads * cell * cell * 0.05, "the thumbnails are drawn")

    # Hover layer 1, head 2's thumbnail: its statistics, the file's; click it: its head view.
    thumb = canvas_point(browser, "grid-overlay", x0 + 2 * (cell + gap) + cell / 2, y0 + 1 * (cell + gap) + cell / 2)
    mouse(browser, thumb)
    tip = tooltip(browser)
    check(tip.startswith("layer 1, head 2") and "max " in tip, f"the hovered thumbnail's tooltip: {tip!r}")
    shown_max = float(tip.split("max ")[1].split()[0])
    check(abs(shown_max - float(files[0]["cross"][1, 2].max())) <= 6e-4, f"the thumbnail's maximum {shown_max}")
    mouse(browser, thumb, click=True)
    wait_for(browser, "document.body.dataset.view === 'head'", "the head view")
    d = dataset(browser)
    check(d["layer"] == "1" and d["heads"] == "2", f"the clicked head: {d}")
    check(canvas_ink(browser, "lines")[0] > 0 and canvas_ink(browser, "matrix")[0] > 0, "lines and matrix are drawn")
    what = browser.evaluate("document.getElementById('what').textContent")
    check("cross-attention" in what and "layer 1" in what and "head 2" in what, f"what is shown: {what}")

    # The matrix: a cell hovered shows its tokens and its weight, the .npz's.
    mx = browser.evaluate("[mx.left, mx.top, mx.cell, mx.nr, mx.nc]")
    left, top, size, rows, columns = mx
    z = files[0]
    check(rows == len(z["target_tokens"]) and columns == len(z["source_tokens"]), f"the matrix is target x source: {mx}")
    a, b = rows - 1, 1
    mouse(browser, canvas_point(browser, "matrix-overlay", left + b * size + size / 2, top + a * size + size / 2))
    tip = tooltip(browser)
    want = float(z["cross"][1, 2, a, b])
    check(f"{z['target_tokens'][a]}  →  {z['source_tokens'][b]}" in tip, f"the hovered cell's tokens: {tip!r}")
    got = float(tip.split("weight ")[1].split()[0])
    check(abs(got - want) <= 1e-4, f"the hovered weight {got} is the file's {want}")

    # Its labels: every row and column named by its token, drawn left of and above the map.
    labels = browser.evaluate("[mx.rowLabels, mx.colLabels]")
    check(labels == [[str(t) for t in z["target_tokens"]], [str(t) for t in z["source_tokens"]]],
          f"the matrix's labels are the tokens: {labels}")
    check(canvas_ink(browser, "matrix", (0, top, left - 4, rows * size))[0] > 20 * rows and
          canvas_ink(browser, "matrix", (left, 0, columns * size, top - 4))[0] > 20 * columns, "the labels are drawn")
    # Its colour legend: a ramp from white to the head's colour, up to this head's maximum.
    legend = browser.evaluate("mx.legend")
    low = canvas_pixel(browser, "matrix", legend["x"] + 1, legend["y"] + 6)
    high = canvas_pixel(browser, "matrix", legend["x"] + legend["width"] - 2, legend["y"] + 6)
    check(min(low) >= 235 and sum(high) < 3 * 140, f"the legend runs from white {low} to dark {high}")
    check(legend["text"] == "this head's maximum" and abs(browser.evaluate("mx.scale") - float(z["cross"][1, 2].max())) <= 2e-5,
          f"the legend's scale is the head's maximum: {legend}, {browser.evaluate('mx.scale')}")

    # A token hovered: only its lines; the tokens it attends to get their weights.
    g = browser.evaluate("[lv.g.xl, lv.g.top, lv.g.rowH]")
    mouse(browser, canvas_point(browser, "lines-focus", g[0] - 12, g[1] + 0.5 * g[2]))
    check(browser.evaluate("state.hover && state.hover.side === 'left' && state.hover.index === 0"), "token 0 hovered")
    check(canvas_ink(browser, "lines-focus")[0] > 0 and
          browser.evaluate("document.getElementById('lines').style.visibility") == "hidden",
          "hovering a token shows its own lines instead of every line")
    check(tooltip(browser).startswith(str(z["target_tokens"][0])), f"the hovered token's tooltip: {tooltip(browser)!r}")

    # Keys: head and layer, the scale, the line, back to the model view.
    key(browser, "ArrowRight")
    key(browser, "ArrowDown")
    layer, head = (1 + 1) % layers, (2 + 1) % heads  # the arrows wrap around
    d = dataset(browser)
    check(d["layer"] == str(layer) and d["heads"] == str(head), f"→ and ↓ move to layer {layer}, head {head}: {d}")
    heat = (left, top, columns * size, rows * size)
    per_head = canvas_ink(browser, "matrix", heat)
    browser.click('#scales button[data-scale="global"]')
    d = dataset(browser)
    check(d["scale"] == "global" and "one scale" in browser.evaluate("document.getElementById('what').textContent"),
          f"the global scale: {d}")
    # One scale: the largest weight of every layer and head, which lightens this head's map.
    check(browser.evaluate("mx.legend.text") == "global scale" and
          abs(browser.evaluate("mx.scale") - float(z["cross"].max())) <= 2e-5, f"the global scale: {browser.evaluate('mx.scale')}")
    if z["cross"][layer, head].max() < 0.95 * z["cross"].max():
        check(canvas_ink(browser, "matrix", heat)[1] < per_head[1], "the global scale draws this head lighter")
    key(browser, "]")
    d = dataset(browser)
    check(d["line"] == "2" and d["view"] == "head" and d["layer"] == str(layer), f"] switches to line 2, same view: {d}")
    check("She was in the old tree" in browser.evaluate("document.getElementById('sentence').textContent"),
          "line 2's sentence")
    check(browser.evaluate("mx.nc") == len(files[2]["source_tokens"]), "line 2's tokens")
    browser.evaluate("(() => { const s = document.getElementById('line-picker'); s.value = '0';"
                     " s.dispatchEvent(new Event('change')); })()")
    check(dataset(browser)["line"] == "0", "the picker switches back to line 0")
    key(browser, "Escape")
    check(dataset(browser)["view"] == "model", "Esc: the model view")
    key(browser, "ArrowDown")
    key(browser, "Enter")
    d = dataset(browser)
    check(d["view"] == "head" and d["layer"] == str((layer + 1) % layers) and d["heads"] == str(head),
          f"↓ Enter opens the head under the cursor: {d}")
    browser.click('#heads button[data-head="all"]')
    check(dataset(browser)["heads"] == ",".join(str(h) for h in range(heads)), "all heads")
    check(not browser.errors(), f"the page reported errors: {browser.errors()}")
    return browser.screenshot()


def pair_page(browser, attend, tool, source, scratch):
    """A cross-encoder's pair: tokenizer tokens, A → B, special tokens hidden."""
    model = os.path.join(source, "tests", "data", "encoders", "bert-cross-encoder")
    npz = os.path.join(scratch, "pair.npz")
    run([attend, "classify", "-m", model, "-q", "--attention-all", npz, "--attention-lines", "0"],
        input="is a model good?\ta model is a good text embedding\n")
    page = os.path.join(scratch, "pair.html")
    run(tool + [npz, "-o", page])
    z = np.load(npz)
    tokens, sequence = [str(t) for t in z["source_tokens"]], list(z["source_sequence_ids"])
    open_page(browser, page)
    check(not browser.evaluate("document.getElementById('pair-group').hidden"), "a pair offers the sentence filter")
    check(browser.evaluate("kind().rows") == tokens and tokens[0] == "[CLS]" and "model" in tokens,
          f"the tokenizer's tokens, not ids: {tokens}")
    browser.evaluate("attendView.openHead(0, 1)")
    browser.click('#pairs button[data-pair="AB"]')
    rows, cols = browser.evaluate("[mx.vis.rows, mx.vis.cols]")
    b_start = sequence.index(1)
    check(rows == list(range(b_start)) and cols == list(range(b_start, len(tokens))), f"A → B: rows {rows}, columns {cols}")
    browser.click("#hide-special")
    rows, cols = browser.evaluate("[mx.vis.rows, mx.vis.cols]")
    check(all(sequence[i] == 0 for i in rows) and all(sequence[j] == 1 for j in cols) and rows and cols,
          f"A → B without special tokens: rows {rows}, columns {cols}")
    check(not browser.errors(), f"the page reported errors: {browser.errors()}")
    # --max-tokens keeps a long line's first tokens, and the page says so.
    run(tool + [npz, "-o", page, "--max-tokens", "5"])
    open_page(browser, page)
    check(browser.evaluate("kind().rows") == tokens[:5], "--max-tokens 5: the first 5 tokens")
    what = browser.evaluate("document.getElementById('what').textContent")
    check(f"first 5 of {len(tokens)} tokens" in what, f"the crop is said: {what}")


def shaped_page(n, layers, heads, tokens, scratch, tool):
    """A page of attention shaped like a real model's at n tokens: peaked rows, a local
    band and [CLS]/[SEP] sinks, as trained heads have."""
    rng = np.random.default_rng(n)
    words = ["[CLS]"] + [tokens[i % len(tokens)] for i in range(n - 2)] + ["[SEP]"]
    logits = rng.standard_normal((layers, heads, n, n), dtype=np.float32) * 2.5
    index = np.arange(n)
    for h in range(heads):
        logits[:, h, index, np.clip(index + h % 3 - 1, 0, n - 1)] += 4.0
    logits[..., 0] += 2.0
    logits[..., n - 1] += 2.0
    logits -= logits.max(axis=-1, keepdims=True)
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=-1, keepdims=True)
    npz = os.path.join(scratch, f"shaped-{n}.npz")
    np.savez(npz, encoder_self=logits, source_ids=index.astype(np.int32), source_tokens=np.array(words),
             model=np.array("shaped-like-minilm"), line=np.array(0))
    del logits
    page = os.path.join(scratch, f"shaped-{n}.html")
    run(tool + [npz, "-o", page])
    os.remove(npz)
    return page


def timed_views(browser, page, n):
    """(first render, head view, all heads) of one load of the page, in seconds."""
    first = open_page(browser, page)
    browser.evaluate("attendView.openHead(3, 5)")
    wait_for(browser, "attendTimings.headView !== undefined", "the head view")
    head = browser.evaluate("attendTimings.headView") / 1000
    check(browser.evaluate("mx.nr") == n, "the head view shows every token")
    # All heads, timed as the head view is: from the choice to the frame that shows it.
    browser.evaluate("(() => { const start = performance.now(); attendView.choose({heads: [...Array(12).keys()]});"
                     " requestAnimationFrame(() => setTimeout(() => { attendTimings.allHeads = performance.now() - start; }, 0));"
                     " })()")
    wait_for(browser, "attendTimings.allHeads !== undefined", "all heads")
    every = browser.evaluate("attendTimings.allHeads") / 1000
    check(browser.evaluate("document.body.dataset.heads") == ",".join(map(str, range(12))), "all heads are shown")
    check(not browser.errors(), f"the page reported errors: {browser.errors()}")
    return first, head, every


def render_times(browser, attend, source, tool, scratch):
    """First render, head view and all heads at 128 and 512 tokens, within LIMITS. A
    page over a limit is loaded once more and each time is the better of the two: a
    frozen page fails both, a machine busy for a moment only one."""
    bert = os.path.join(source, "tests", "data", "encoders", "bert")
    text = "The quick brown fox jumps over the lazy dog while the attention of every head is read.\n"
    tokens = run([attend, "tokenize", "-m", bert, "--output-format", "tokens"], input=text).stdout.split()[1:-1]
    times = {}
    for n, layers, heads in ((128, 12, 12), (512, 6, 12)):
        page = shaped_page(n, layers, heads, tokens, scratch, tool)
        measured = timed_views(browser, page, n)
        if max(measured) > LIMITS[n]:
            print(f"{n} tokens: {', '.join(f'{t:.2f}' for t in measured)} s, over {LIMITS[n]} s: once more",
                  file=sys.stderr)
            measured = tuple(min(a, b) for a, b in zip(measured, timed_views(browser, page, n)))
        times[n] = first, head, every = measured
        loaded = browser.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd") / 1000
        print(f"{n} tokens, {layers} x {heads} heads: first render {first:.2f} s, head view {head:.2f} s, "
              f"all heads {every:.2f} s; every weight read {loaded:.2f} s after loading began", file=sys.stderr)
        os.remove(page)
        for what, seconds in (("first render", first), ("head view", head), ("all heads", every)):
            check(seconds <= LIMITS[n], f"{n} tokens ({layers} x {heads} heads): {what} took {seconds:.2f} s, "
                                        f"more than {LIMITS[n]} s")
    return times


def luminance_spread(png):
    """(standard deviation of luminance, fraction of non-white pixels) over the screenshot."""
    width, height, channels, rows = devtools.png_pixels(png)
    values = []
    for row in rows:
        for x in range(0, width * channels, channels):
            values.append((299 * row[x] + 587 * row[x + 1] + 114 * row[x + 2]) // 1000)
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return spread, sum(v < 250 for v in values) / len(values)


def main():
    attend, model, source = sys.argv[1:4]
    scratch = tempfile.mkdtemp(prefix="attend-view-")
    tool = [sys.executable, os.path.join(source, "tools", "attention_view.py")]
    try:
        browser = devtools.Browser(width=1280, height=860)
        with browser:
            shot = translation_page(browser, attend, model, tool, scratch)
            pair_page(browser, attend, tool, source, scratch)
            times = render_times(browser, attend, source, tool, scratch)
    except devtools.Unavailable as e:
        print(f"skipped: {e}")
        return 77
    out = os.environ.get("ATTEND_VIEW_SCREENSHOT", os.path.join(scratch, "view.png"))
    with open(out, "wb") as f:
        f.write(shot)
    spread, inked = luminance_spread(shot)
    check(spread > 20 and 0.01 < inked < 0.9, f"the screenshot looks blank: luminance spread {spread:.1f}, {inked:.1%} inked")
    print("attention_view: the page works in " + browser.binary + "; render times (first, head view, all heads): " +
          "; ".join(f"{n} tokens {a:.2f} / {b:.2f} / {c:.2f} s" for n, (a, b, c) in times.items()))
    if "ATTEND_VIEW_SCREENSHOT" not in os.environ:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
