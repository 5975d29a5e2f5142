#!/usr/bin/env python3
"""Turns bench/compare.sh's JSON into Markdown tables of median ratios (stdlib only).

The "% of peak" columns divide by the per-core rate of the step attend's kernels run at
the ISA of the run (machine_limits' "attend at" bounds: $ATTEND_ISA, else the best);
where a peak was not measured they say n/a.
"""
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine_peaks  # noqa: E402


def natural(name):
    """Sort key: numbers in the name compare as numbers."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def medians(path):
    """{run_name: {counter or 'time': median}} from a Google Benchmark JSON file."""
    out = {}
    for b in json.loads(Path(path).read_text())["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].replace("/real_time", "")
        name = re.sub(r"/iterations:\d+", "", name)
        row = {k: v for k, v in b.items() if isinstance(v, (int, float))}
        row["time"] = b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        out[name] = row
    return dict(sorted(out.items(), key=lambda kv: natural(kv[0])))


def kernel_isas(paths):
    """'attend avx2, oneDNN avx2' from the first benchmark file whose context names them."""
    for path in paths:
        if path.exists():
            context = json.loads(path.read_text()).get("context", {})
            if "attend_isa" in context:
                return f"attend {context['attend_isa']}, oneDNN {context.get('onednn_isa', '?')}"
    return None


def machine(directory):
    """Per-core peaks of the steps attend ran ('fma', 'vnni', 'bf16': the fp32, int8 and bf16
    GEMMs' bounds, None where not measured), their step names, the ISA and the copy GB/s —
    from machine.json, or the machine.txt of older runs."""
    path = directory / "machine.json"
    if not path.exists():
        path = directory / "machine.txt"
    data = machine_peaks.parse(path.read_text()) if path.exists() else {}
    peaks = {"isa": (data.get("attend") or {}).get("isa"), "copy": data.get("copy_gbytes_per_s")}
    for key, ctype in (("fma", "float32"), ("vnni", "int8"), ("bf16", "bfloat16")):
        value, step = machine_peaks.attend_peak(data, ctype)
        peaks[key] = value / 1e9 if value else None
        peaks[key + "_step"] = step
    return peaks


def share(value, peak, threads):
    """value as a percentage of peak × threads, or n/a where the peak is unknown."""
    return f"{100 * value / (peak * int(threads)):.0f}%" if peak else "n/a"


def gemm_table(m, peak):
    print("## GEMM: attend vs oneDNN matmul (fp32), median GFLOP/s\n")
    print("| M | N | K | threads | attend | oneDNN | attend/oneDNN | attend/naive | % of peak×threads | weights GB/s | 2T/1T |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in m:
        g = re.match(r"gemm/attend/M=(\d+)/N=(\d+)/K=(\d+)/threads=(\d)", name)
        if not g or f"gemm/onednn/M={g.group(1)}/N={g.group(2)}/K={g.group(3)}/threads={g.group(4)}" not in m:
            continue
        M, N, K, t = g.groups()
        shape = f"M={M}/N={N}/K={K}"
        ours = m[name]["FLOP/s"] / 1e9
        onednn = m[f"gemm/onednn/{shape}/threads={t}"]["FLOP/s"] / 1e9
        naive = m.get(f"gemm/naive/{shape}/threads=1", {}).get("FLOP/s", float("nan")) / 1e9
        one = m[f"gemm/attend/{shape}/threads=1"]["FLOP/s"] / 1e9
        scaling = f"{ours / one:.2f}" if t == "2" else ""
        weight_gbs = 4.0 * int(N) * int(K) / m[name]["time"] / 1e9
        print(f"| {M} | {N} | {K} | {t} | {ours:.1f} | {onednn:.1f} | **{ours / onednn:.2f}** | "
              f"{ours / naive:.0f} | {share(ours, peak, t)} | {weight_gbs:.1f} | {scaling} |")
    print()


def typed_gemm_table(m, peaks):
    """int8 and bf16 rows: ratios to oneDNN and to attend's fp32 GEMM, % of the dot-product peak."""
    kinds = [("gemm_s8", "int8 (attend s8 weights vs oneDNN u8s8)", "vnni", "int8"),
             ("gemm_bf16", "bf16 (both bf16 weights, fp32 output)", "bf16", "bf16")]
    for prefix, title, peak_key, peak_name in kinds:
        rows = [n for n in m if re.match(prefix + r"/attend/", n)]
        if not rows:
            continue
        print(f"## GEMM {title}: median GOP/s (2·M·N·K per call)\n")
        print(f"| M | N | K | threads | attend | oneDNN | attend/oneDNN | attend / attend fp32 | "
              f"% of {peak_name} peak×threads ({peaks[peak_key + '_step'] or 'not measured'}) | weights GB/s |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        weight_bytes = 1 if prefix == "gemm_s8" else 2
        for name in rows:
            g = re.match(prefix + r"/attend/M=(\d+)/N=(\d+)/K=(\d+)/threads=(\d)", name)
            M, N, K, t = g.groups()
            tail = f"M={M}/N={N}/K={K}/threads={t}"
            ours = m[name]["FLOP/s"] / 1e9
            theirs = m.get(f"{prefix}/onednn/{tail}", {}).get("FLOP/s")
            versus = f"{theirs / 1e9:.1f} | **{ours / (theirs / 1e9):.2f}**" if theirs else "skipped | —"
            fp32 = m.get(f"gemm/attend/{tail}", {}).get("FLOP/s")
            weight_gbs = weight_bytes * int(N) * int(K) / m[name]["time"] / 1e9
            print(f"| {M} | {N} | {K} | {t} | {ours:.1f} | {versus} | "
                  f"{f'{ours / (fp32 / 1e9):.2f}' if fp32 else '—'} | {share(ours, peaks[peak_key], t)} | {weight_gbs:.1f} |")
        print()


def decoder_table(m, peaks):
    """One decoder step's GEMMs (cold weights): attend vs oneDNN per precision."""
    print("## One decoder step's GEMMs (Transformer-base, cold weights): attend vs oneDNN\n")
    print("| precision | M | threads | attend ms/step | oneDNN ms/step | attend/oneDNN speed | attend GOP/s | "
          "% of peak×threads | attend weights GB/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    peak_of = {"f32": peaks["fma"], "bf16": peaks["bf16"], "s8": peaks["vnni"]}
    for name in m:
        g = re.match(r"decoder_step/attend/(\w+)/M=(\d+)/threads=(\d)", name)
        if not g:
            continue
        p, M, t = g.groups()
        ours, theirs = m[name], m.get(f"decoder_step/onednn/{p}/M={M}/threads={t}")
        versus = f"{theirs['time'] * 1e3:.2f} | **{theirs['time'] / ours['time']:.2f}**" if theirs else "skipped | —"
        print(f"| {p} | {M} | {t} | {ours['time'] * 1e3:.2f} | {versus} | {ours['FLOP/s'] / 1e9:.0f} | "
              f"{share(ours['FLOP/s'] / 1e9, peak_of[p], t)} | {ours['weights_GB/s']:.1f} |")
    print()


def attention_table(m, peak):
    print("## Attention: fused (online softmax) vs unfused (GEMM → softmax → GEMM), H=8, d=64\n")
    print("| case | threads | fused GFLOP/s | unfused GFLOP/s | speed-up | fused extra MiB | unfused extra MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in m:
        g = re.match(r"(attention|decode)/fused/(.*)/threads=(\d)", name)
        if not g or f"{g.group(1)}/unfused/{g.group(2)}/threads={g.group(3)}" not in m:
            continue
        kind, case, t = g.groups()
        f, u = m[name], m[f"{kind}/unfused/{case}/threads={t}"]
        print(f"| {kind} {case} | {t} | {f['FLOP/s'] / 1e9:.1f} | {u['FLOP/s'] / 1e9:.1f} | "
              f"**{u['time'] / f['time']:.2f}×** | {f['extra_MiB']:.2f} | {u['extra_MiB']:.2f} |")
    for name in m:
        if name.startswith("attention_16k/"):
            r = m[name]
            print(f"\n`{name}`: {r['time']:.2f} s, measured extra memory {r['measured_extra_MiB']:.1f} MiB "
                  f"(unfused would need {r['unfused_would_need_MiB']:.0f} MiB of scores).")
    print()


def rows_table(m):
    print("## Memory-bound ops vs a plain copy of the same bytes (read + write)\n")
    print("| op | shape | threads | op GB/s | copy GB/s | op time / copy time |")
    print("|---|---|---:|---:|---:|---:|")
    for name in m:
        g = re.match(r"rows/(\w+)/(\w+)/(\d+x\d+)/threads=(\d)", name)
        if not g:
            continue
        op, _, shape, t = g.groups()
        copy = m[f"rows/copy/{op}/{shape}"]
        print(f"| {op} | {shape} | {t} | {m[name]['GB/s'] / 1e9:.1f} | {copy['GB/s'] / 1e9:.1f} | "
              f"**{m[name]['time'] / copy['time']:.2f}** |")
    print()


def describe_machine(peaks):
    def rate(key, unit):
        return f"{peaks[key]:.1f} {unit} ({peaks[key + '_step']})" if peaks[key] else "not measured"

    copy = f"{peaks['copy']:.1f} GB/s" if peaks["copy"] else "not measured"
    return (f"Machine: attend's kernels at {peaks['isa'] or 'the best ISA'}; per-core peaks of the steps they run: "
            f"fp32 {rate('fma', 'GFLOP/s')}, int8 {rate('vnni', 'GOP/s')}, bf16 {rate('bf16', 'GFLOP/s')}; "
            f"one-thread copy {copy} (a 256 MiB memcpy, read + write).\n")


def main():
    d = Path(sys.argv[1])
    peaks = machine(d)
    print(describe_machine(peaks))
    isas = kernel_isas([d / "gemm.json", d / "decoder_gemms.json"])
    if isas:
        print(f"Kernels of this run: {isas} (ATTEND_ISA, ONEDNN_MAX_CPU_ISA).\n")
    if (d / "gemm.json").exists():
        gemm = medians(d / "gemm.json")
        gemm_table(gemm, peaks["fma"])
        typed_gemm_table(gemm, peaks)
    if (d / "decoder_gemms.json").exists():
        decoder_table(medians(d / "decoder_gemms.json"), peaks)
    if (d / "attention.json").exists():
        attention_table(medians(d / "attention.json"), peaks["fma"])
    if (d / "rows.json").exists():
        rows_table(medians(d / "rows.json"))


if __name__ == "__main__":
    main()
