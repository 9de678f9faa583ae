#!/usr/bin/env python3
"""Dynamic shapes: one compile per shape against one compile per bucket, as a
user meets it: `fuselens-cli run --sweep ... --check-eager --json` over a
range of lengths, all in one run of this script so the figures compare like
with like. Models:

  transformer  a BERT-shaped encoder block, x[1, seq, 256], 4 heads
               (tests/cli/data/make_dynamic_models.py --kind transformer)
  bert2        make_bert.py --layers 2 --symbolic-seq: the exporter's form, with
               reshape targets computed from Shape and an additive padding mask
  ocr          an OCR-style CNN over x[1, 1, 32, width], per-column classes
               (make_dynamic_models.py --kind ocr)

For each: per shape (every length compiled), buckets (lengths padded up to
the next power of two from 32, masked by pad-mask) and symbolic (--dynamic:
kernels generalized over the dim, compiled once for every length; the graph
is still planned per length), each cold (an empty cache folder) and again
warm (a second process on the cache the cold run filled).
Columns: compiles, compile cache hits, kernels LLVM compiled, symbolic
kernels (of the kernels per run), total compile seconds (for symbolic: the
samples' lowering, per-length planning and linking included), total run
seconds, padding waste (padded elements over elements computed), whether every
run matched eager (rounding verdicts; with --check-eager, else None), and the
whole process's seconds.

    python3 bench/dynamic_shapes.py --cli build/app/fuselens-cli [--only transformer,ocr] [--check-eager]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DYN = os.path.join(HERE, "..", "tests", "cli", "data", "make_dynamic_models.py")

MODELS = {  # name: (generator, its arguments, swept dim, sweep, buckets)
    "transformer": (DYN, ["--kind", "transformer", "--hidden", "256"], "seq", "1:512:17",
                    "32,64,128,256,512"),
    "bert2": (os.path.join(HERE, "make_bert.py"), ["--layers", "2", "--symbolic-seq"], "seq",
              "1:512:17", "32,64,128,256,512"),
    "ocr": (DYN, ["--kind", "ocr"], "width", "8:512:24", "32,64,128,256,512"),
}


def host():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{platform.node()}: {cpu}, {os.cpu_count()} hardware threads, {platform.system()}"


def generate(name, folder):
    script, args = MODELS[name][:2]
    path = os.path.join(folder, name + ".onnx")
    if not os.path.exists(path):
        subprocess.run([sys.executable, script, *args, "--out", path], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def sweep(cli, path, dim, values, buckets, cache_home, check):
    cmd = [cli, "run", path, "--engine", "cpu", "--random-inputs", "--sweep", f"{dim}={values}",
           "--json"] + (["--check-eager"] if check else [])
    if buckets == "dynamic":
        cmd += ["--dynamic"]
    elif buckets:
        cmd += ["--buckets", f"{dim}={buckets}"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=dict(os.environ, XDG_CACHE_HOME=cache_home), capture_output=True,
                       text=True)
    seconds = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{path}: fuselens-cli failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout), seconds


def symbolic(j):
    """'30/34': symbolic kernels of the kernels per run (the most in any run)."""
    rows = j.get("rows", [])
    if j.get("mode") != "symbolic" or not rows:
        return "-"
    best = max(rows, key=lambda r: r["symbolic_kernels"])
    return f"{best['symbolic_kernels']}/{best['kernels']}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "app", "fuselens-cli"))
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "fuselens_dyn_bench"))
    ap.add_argument("--check-eager", action="store_true",
                    help="check every run against eager (three reference runs per length: slow)")
    a = ap.parse_args()
    os.makedirs(a.models, exist_ok=True)
    print(host())
    print(f"{'model':12} {'sweep':18} {'mode':10} {'cache':5} {'runs':>4} {'compiles':>8} {'hits':>4} "
          f"{'kern comp':>9} {'symbolic':>8} {'compile s':>9} {'run s':>8} {'waste':>6} "
          f"{'match':>5} {'wall s':>7}")
    for name in a.only.split(","):
        path = generate(name, a.models)
        dim, values, buckets = MODELS[name][2:]
        for mode, b in (("per-shape", ""), ("buckets", buckets), ("symbolic", "dynamic")):
            with tempfile.TemporaryDirectory() as cache:
                for state in ("cold", "warm"):
                    j, wall = sweep(a.cli, path, dim, values, b, cache, a.check_eager)
                    print(f"{name:12} {dim + '=' + values:18} {mode:10} {state:5} {j['runs']:4d} "
                          f"{j['compiles']:8d} {j['cache_hits']:4d} {j['kernel_compiles']:9d} "
                          f"{symbolic(j):>8} {j['compile_seconds']:9.2f} "
                          f"{j['run_seconds']:8.3f} {100 * j['padding_waste']:5.1f}% "
                          f"{str(j['all_match']):>5} {wall:7.1f}", flush=True)


if __name__ == "__main__":
    main()
