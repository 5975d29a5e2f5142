#!/usr/bin/python3
"""tools/attention_view.py's page in a real browser: a line's attention from the test model
(attend translate --attention-all), the page written, opened in headless Chromium; a
head and a layer clicked and a token hovered with the mouse, the DOM read after each,
a screenshot taken and checked not blank. Skips (exit 77) where Chromium is not
installed or does not start.

    test_attention_view.py ATTEND MODEL_DIR SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import devtools  # noqa: E402


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def state(browser):
    """What the page shows: active buttons, status, drawn lines, token shades."""
    return browser.evaluate("""(() => {
      const active = (id, key) => [...document.querySelectorAll('#' + id + ' button.active')].map(b => b.dataset[key]);
      const lines = [...document.querySelectorAll('#lines line')];
      const visible = lines.filter(l => l.style.display !== 'none');
      return {
        kinds: [...document.querySelectorAll('#kinds button')].map(b => b.dataset.kind),
        kind: active('kinds', 'kind'), layer: active('layers', 'layer'), head: active('heads', 'head'),
        status: document.getElementById('status').textContent,
        heads: [...new Set(lines.map(l => l.dataset.head))],
        lines: lines.length,
        visible_rows: [...new Set(visible.map(l => l.dataset.i))],
        weights_ok: lines.every(l => +l.dataset.weight >= 0.01 && +l.dataset.weight <= 1),
        left: document.querySelectorAll('#left .token').length,
        right: document.querySelectorAll('#right .token').length,
        shades: [...document.querySelectorAll('#right .token')].map(t => +t.dataset.shade),
        hovered: [...document.querySelectorAll('.token.hovered')].map(t => t.textContent),
        cells: document.querySelectorAll('#matrix div').length,
      };
    })()""")


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
    lines = "The quick brown fox jumps over the lazy dog.\nA small red house.\n"
    run = subprocess.run([attend, "translate", "-m", model, "-q", "--max-length", "12", "--attention-all", scratch,
                          "--attention-lines", "1"], input=lines, capture_output=True, text=True)
    check(run.returncode == 0, f"attend translate: {run.stderr}")
    page = os.path.join(scratch, "view.html")
    view = subprocess.run([sys.executable, os.path.join(source, "tools", "attention_view.py"),
                           os.path.join(scratch, "line-1.npz"), "-o", page], capture_output=True, text=True)
    check(view.returncode == 0, f"attention_view.py: {view.stderr}")
    text = open(page, encoding="utf-8").read()
    for outside in ("src=", "href=", "@import", "url(", "fetch(", "XMLHttpRequest"):
        check(outside not in text, f"the page loads nothing from elsewhere, yet has {outside}")

    try:
        browser = devtools.Browser(width=1000, height=760)
        with browser:
            browser.open(page)
            s = state(browser)
            check(s["kinds"] == ["encoder_self", "decoder_self", "cross"], f"kinds: {s['kinds']}")
            check(s["kind"] == ["cross"] and s["head"] == ["all"] and s["layer"] == ["0"], f"first view: {s}")
            check(len(s["heads"]) >= 2 and s["lines"] > 0 and s["weights_ok"], f"all heads draw lines: {s}")
            check(s["left"] >= 2 and s["right"] >= 2 and s["cells"] == s["left"] * s["right"], f"tokens: {s}")

            browser.click('#heads button[data-head="2"]')  # a real click, hit-tested by the browser
            s = state(browser)
            check(s["head"] == ["2"] and s["heads"] == ["2"] and "head 2" in s["status"], f"after clicking head 2: {s}")

            browser.click('#kinds button[data-kind="encoder_self"]')
            browser.click('#layers button[data-layer="1"]')
            s = state(browser)
            check(s["kind"] == ["encoder_self"] and s["layer"] == ["1"] and s["head"] == ["2"], f"encoder, layer 1: {s}")
            check(s["status"].startswith("encoder self-attention · layer 1 · head 2"), f"status: {s['status']}")
            check(s["left"] == s["right"], "encoder self-attention: source on both sides")

            browser.hover('#left .token[data-index="3"]')
            s = state(browser)
            check(s["hovered"] and s["visible_rows"] == ["3"], f"hovering token 3 keeps its lines only: {s}")
            # The right tokens shade by what token 3 gives them: one row of one head, a distribution.
            check(abs(sum(s["shades"]) - 1) < 1e-3 * len(s["shades"]), f"token 3's shades sum to 1: {s['shades']}")

            browser.click('#kinds button[data-kind="decoder_self"]')
            browser.hover('#left .token[data-index="0"]')
            s = state(browser)
            check(s["shades"][0] > 0.999 and sum(s["shades"][1:]) == 0, f"the first decoder step sees itself only: {s}")

            browser.hover("h1")
            shot = browser.screenshot()
            check(not browser.errors(), f"the page reported errors: {browser.errors()}")
    except devtools.Unavailable as e:
        print(f"skipped: {e}")
        return 77
    out = os.environ.get("ATTEND_VIEW_SCREENSHOT", os.path.join(scratch, "view.png"))
    with open(out, "wb") as f:
        f.write(shot)
    spread, inked = luminance_spread(shot)
    check(spread > 20 and 0.01 < inked < 0.9, f"the screenshot looks blank: luminance spread {spread:.1f}, {inked:.1%} inked")
    print(f"attention_view: the page works in {browser.binary} (screenshot {out}: spread {spread:.1f}, {inked:.1%} inked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
