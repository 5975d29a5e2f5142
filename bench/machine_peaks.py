"""machine_limits' measurements for the benchmark scripts (stdlib only).

build/release/bench/machine_limits measures one core's rate of every dot-product step on
every ISA the CPU has, and names the step that bounds attend's GEMM of each compute type
at the ISA its kernels run. This module runs it (`--json`) or reads its saved output —
JSON, the text lines, or the text of older versions ("fp32 FMA peak (avx512, 1 core):
…") — into one shape:

    {"rates": [{"key", "type": "fp32"|"int8"|"bf16", "isa", "step", "gops_per_core"}, …],
     "copy_gbytes_per_s": float or None,
     "attend": {"isa": name or None,
                "float32"|"int8"|"bfloat16": {"step", "kernel", "gops_per_core"} or absent}}

A peak that was not measured is None (never 0), so a report can say "n/a" instead of
dividing by it.
"""
import json
import os
import re
import subprocess

ISA_ORDER = ["sse2", "avx2", "avx512", "avx512_vnni", "avx512_bf16", "avx512_amx"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "build", "release", "bench", "machine_limits")

# attend's compute types (and CTranslate2's) → the arithmetic of their GEMMs.
ARITHMETIC = {"float32": "fp32", "int8": "int8", "int8_float32": "int8", "int8_bfloat16": "int8",
              "bfloat16": "bf16", "int8_float16": "int8"}
ATTEND_KEY = {"fp32": "float32", "int8": "int8", "bf16": "bfloat16"}


def measure(isa=None, program=PROGRAM, timeout=300):
    """Runs machine_limits (at attend's ISA `isa`, else $ATTEND_ISA or the best); None if it
    is missing or fails, with the reason in the second value."""
    if not os.path.exists(program):
        return None, f"{program} is missing (cmake --build --preset release --target machine_limits)"
    cmd = [program, "--json"] + (["--isa", isa] if isa else [])
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{' '.join(cmd)}: {e}"
    if done.returncode != 0:
        return None, f"{' '.join(cmd)} exited with {done.returncode}: {done.stderr.strip()}"
    return parse(done.stdout), None


def parse(text):
    """machine_limits' output, JSON or text (any version), in the shape above."""
    stripped = text.strip()
    if stripped.startswith("{"):
        data = json.loads(stripped)
        data.setdefault("rates", [])
        data.setdefault("copy_gbytes_per_s", None)
        data.setdefault("attend", {"isa": None})
        return data
    return parse_text(text)


def parse_text(text):
    rates, attend, copy = [], {"isa": None}, None
    for line in text.splitlines():
        # "fp32 FMA peak (avx2, vfmadd231ps ymm, 1 core): 76.1 GFLOP/s"; older versions:
        # "fp32 FMA peak (avx512, 1 core)", "int8 VNNI peak (vpdpbusd, 1 core)", "bf16 peak (vdpbf16ps, 1 core)"
        m = re.match(r"(fp32|int8|bf16)([\w+ ]*) peak \(([^)]*)\): ([\d.]+) G(?:FLOP|OP)/s", line)
        if m:
            kind, label, inside, value = m.group(1), m.group(2).strip(), m.group(3), float(m.group(4))
            parts = [p.strip() for p in inside.split(",")]
            isa = parts[0] if parts[0] in ISA_ORDER else None
            step = parts[1] if isa and len(parts) > 2 else (parts[0] if not isa else "")
            if isa is None:  # an old line names its step, not its ISA
                isa = {"vpdpbusd": "avx512_vnni", "vdpbf16ps": "avx512_bf16"}.get(step)
            if value > 0 and isa:
                key = f"{kind}_{label.lower().replace('+', '_').replace(' ', '_') or 'dot'}_{isa}"
                rates.append({"key": key, "type": kind, "isa": isa, "step": step, "gops_per_core": value})
            continue
        m = re.match(r"attend at (\w+): (\w+) GEMM bound ([\d.]+) G(?:FLOP|OP)/s per core \(([\w]+); kernel ([\w]+)\)", line)
        if m:
            attend["isa"] = m.group(1)
            attend[m.group(2)] = {"step": m.group(4), "kernel": m.group(5), "gops_per_core": float(m.group(3))}
            continue
        m = re.match(r"attend at (\w+):", line)
        if m:
            attend["isa"] = m.group(1)
            continue
        m = re.match(r"memory copy .*?: ([\d.]+) GB/s", line)
        if m:
            copy = float(m.group(1))
    if attend["isa"] is None and rates:
        attend = attend_bounds_of_old_text(rates)
    return {"rates": rates, "copy_gbytes_per_s": copy, "attend": attend}


def attend_bounds_of_old_text(rates):
    """Output of a machine_limits without "attend at" lines: the widest fp32 FMA, the VNNI and
    bf16 peaks (what those versions measured, all on the best ISA)."""
    out = {"isa": None}
    for kind in ("fp32", "int8", "bf16"):
        found = [r for r in rates if r["type"] == kind]
        if found:
            out[ATTEND_KEY[kind]] = {"step": found[0]["key"], "kernel": None, "gops_per_core": found[0]["gops_per_core"]}
    return out


def attend_peak(machine, compute_type):
    """Per-core operations/s of the step bounding attend's GEMMs of `compute_type` at the ISA
    it ran, and that step's key; (None, None) where not measured."""
    kind = ARITHMETIC.get(compute_type, "fp32")
    entry = ((machine or {}).get("attend") or {}).get(ATTEND_KEY[kind]) or {}
    value = entry.get("gops_per_core")
    return (value * 1e9, entry.get("step")) if value else (None, None)


def fastest_peak(machine, compute_type, isa_cap=None):
    """Per-core operations/s of the fastest measured step of that arithmetic at or below
    `isa_cap` (for an engine that picks its own kernels, such as CTranslate2), and its key."""
    kind = ARITHMETIC.get(compute_type, "fp32")
    cap = ISA_ORDER.index(isa_cap) if isa_cap in ISA_ORDER else len(ISA_ORDER)
    best = None
    for r in (machine or {}).get("rates", []):
        if r.get("type") == kind and r.get("gops_per_core") and ISA_ORDER.index(r["isa"]) <= cap:
            if best is None or r["gops_per_core"] > best["gops_per_core"]:
                best = r
    return (best["gops_per_core"] * 1e9, best["key"]) if best else (None, None)
