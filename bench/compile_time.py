#!/usr/bin/env python3
"""Compile time as a user meets it: the whole `fuselens-cli run --engine cpu
--random-inputs` process, cold (an empty kernel cache) and warm (the cache the
cold run filled), against ONNX Runtime creating a session for the same file
(in this process, after `import onnxruntime`), all in one run so the ratios
compare like with like. Models come from the bench generators:

  bert12     make_bert.py --layers 12             (~1,000 nodes, target cold <= 1 s)
  bert10k    make_bert.py --layers 117 --hidden 64 (~10,000 nodes)
  chain20k   make_chain.py --nodes 20000           (20,000 nodes)

Targets (issue 13): cold <= 2x ORT, warm <= 0.5x ORT. Each figure is the
median of --repeat runs; the cold runs each get a fresh cache folder.

    python3 bench/compile_time.py --cli build/app/fuselens-cli [--only bert12,chain20k]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

MODELS = {
    "bert12": ("make_bert.py", ["--layers", "12"]),
    "bert10k": ("make_bert.py", ["--layers", "117", "--hidden", "64"]),
    "chain20k": ("make_chain.py", ["--nodes", "20000"]),
}


def generate(name, folder):
    script, args = MODELS[name]
    path = os.path.join(folder, name + ".onnx")
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, script), *args, "--out", path],
                       check=True, stdout=subprocess.DEVNULL)
    return path


def ort_session_seconds(path, repeat):
    import onnxruntime as ort
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fuselens_seconds(cli, path, cache_home, out_dir):
    env = dict(os.environ, XDG_CACHE_HOME=cache_home)
    t0 = time.perf_counter()
    r = subprocess.run([cli, "run", path, "--engine", "cpu", "--random-inputs", "--output-dir", out_dir],
                       env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{path}: fuselens-cli failed:\n{r.stderr[-2000:]}")
    summary = next((l[len("compiled: "):] for l in r.stderr.splitlines() if l.startswith("compiled: ")), "")
    return seconds, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "app", "fuselens-cli"))
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default=os.path.join(tempfile.gettempdir(), "fuselens_compile_bench"))
    a = ap.parse_args()
    os.makedirs(a.models, exist_ok=True)
    print(f"{'model':10} {'nodes':>6} {'ORT s':>7} {'cold s':>7} {'cold/ORT':>8} {'warm s':>7} "
          f"{'warm/ORT':>8}  kernels (cold run | warm run)")
    for name in a.only.split(","):
        path = generate(name, a.models)
        import onnx
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        ort_s = ort_session_seconds(path, a.repeat)
        cold, warm = [], []
        with tempfile.TemporaryDirectory() as out_dir:
            for _ in range(a.repeat):
                with tempfile.TemporaryDirectory() as cache:
                    s, cold_summary = fuselens_seconds(a.cli, path, cache, out_dir)
                    cold.append(s)
                    s, warm_summary = fuselens_seconds(a.cli, path, cache, out_dir)
                    warm.append(s)
        c, w = statistics.median(cold), statistics.median(warm)
        print(f"{name:10} {nodes:6d} {ort_s:7.2f} {c:7.2f} {c / ort_s:8.2f} {w:7.2f} {w / ort_s:8.2f}  "
              f"{cold_summary} | {warm_summary}", flush=True)


if __name__ == "__main__":
    main()
