"""A headless Chromium driven through the Chrome DevTools protocol, with the Python
standard library only (a WebSocket client of a few lines, a PNG reader), for the tests
of the pages attend's tools write. Input events go through the browser's own hit testing,
as a user's clicks do.
"""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib


class Unavailable(Exception):
    """No Chromium here, or it would not start: the caller skips."""


class WebSocket:
    """RFC 6455 client, text frames only: enough for the DevTools protocol."""

    def __init__(self, url, timeout):
        match = re.fullmatch(r"ws://([^/:]+):(\d+)(/.*)", url)
        host, port, path = match.group(1), int(match.group(2)), match.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("DevTools closed the connection during the handshake")
            response += chunk
        head, self.buffer = response.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"DevTools refused the WebSocket: {head.decode(errors='replace')}")

    def send(self, text):
        payload = text.encode()
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
                                  if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n))
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))  # clients must mask
        self.sock.sendall(header + mask + masked)

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def receive(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if b0 & 0x0F == 8:
                raise RuntimeError("DevTools closed the WebSocket")
            if b0 & 0x0F in (9, 10):  # ping, pong
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Browser:
    """`with Browser() as b:` a headless Chromium with one page; b.call(method, **params)."""

    def __init__(self, width=1200, height=900, timeout=60):
        self.binary = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
        if self.binary is None:
            raise Unavailable("Chromium is not installed (tools/bootstrap.sh installs Debian's 'chromium')")
        self.size, self.timeout, self.events, self.next_id = (width, height), timeout, [], 0

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="attend-chromium-")
        # --no-sandbox: root (CI, containers) cannot use the sandbox, and the page is our own file.
        self.process = subprocess.Popen(
            [self.binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage", "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             f"--window-size={self.size[0]},{self.size[1]}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        endpoint, seen, deadline = None, [], time.time() + self.timeout
        while endpoint is None and time.time() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            seen.append(line)
            match = re.search(r"DevTools listening on (ws://\S+)", line)
            endpoint = match.group(1) if match else None
        if endpoint is None:
            self.__exit__(None, None, None)
            raise Unavailable("Chromium did not start: " + "".join(seen[-5:]).strip())
        port = re.match(r"ws://[^:]+:(\d+)/", endpoint).group(1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=self.timeout) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        self.ws = WebSocket(pages[0]["webSocketDebuggerUrl"], self.timeout)
        self.call("Runtime.enable")
        self.call("Page.enable")
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.receive())
            if reply.get("id") != self.next_id:
                self.events.append(reply)  # events: kept for errors() and waits
                continue
            if "error" in reply:
                raise RuntimeError(f"{method}: {reply['error']}")
            return reply.get("result", {})

    def open(self, path):
        self.call("Page.navigate", url="file://" + os.path.abspath(path))
        deadline = time.time() + self.timeout
        while self.evaluate("document.readyState") != "complete":
            if time.time() > deadline:
                raise RuntimeError(f"{path} did not finish loading")
            time.sleep(0.05)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def centre(self, selector):
        rect = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                             " if (!e) return null; const r = e.getBoundingClientRect();"
                             " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if rect is None:
            raise AssertionError(f"the page has no {selector}")
        return rect

    def click(self, selector):
        x, y = self.centre(selector)
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def hover(self, selector):
        x, y = self.centre(selector)
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def errors(self):
        """Exceptions the page threw and errors it logged."""
        out = []
        for e in self.events:
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(e["params"]["exceptionDetails"].get("text", "exception"))
            if e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                out.append(" ".join(str(a.get("value", "")) for a in e["params"]["args"]))
        return out


def png_pixels(png):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG, as Chromium writes them."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    at, idat, width = 8, b"", None
    while at < len(png):
        length, kind = struct.unpack(">I4s", png[at:at + 8])
        body = png[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6) or body[12] != 0:
                raise ValueError(f"PNG of depth {depth}, colour type {colour}, interlace {body[12]}: not read here")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, row = line[0], bytearray(line[1:])
        for i in range(stride):
            a = row[i - channels] if i >= channels else 0
            b, c = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                row[i] = (row[i] + a) & 0xFF
            elif kind == 2:
                row[i] = (row[i] + b) & 0xFF
            elif kind == 3:
                row[i] = (row[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(row))
        previous = row
    return width, height, channels, rows
