#!/usr/bin/env python3
"""Real models, FuseLens against ONNX Runtime, as a user meets them: for every
model of tests/realworld whose package is installed, the default pipeline's
compiled run (`fuselens-cli profile --runs N --threads T --json`: the median
whole run through the CPU executor) and an ONNX Runtime CPU session (all graph
optimizations, intra-op threads T, median of N runs after 5 warm-up runs), on
the same seeded inputs, at 1 and 2 threads, all in one run so the ratios
compare like with like. The two sides alternate for --rounds rounds (3) and
each keeps its best round. Prints the host first; ratio = ORT ms / FuseLens ms
(>= 1.0 means FuseLens is at least as fast). Also the kernel count and the
profiler's first verdict, which says where the time goes.

    python3 bench/realworld_speed.py [--cli build/app/fuselens-cli] [--only det] [--runs 50]
        [--threads 1,2] [--passes P] [--rounds R] [--json out.json]

The models stay in their pip packages (tests/realworld/run_realworld.py says
which); a model whose package is missing is skipped with a line.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "realworld"))
import run_realworld as rw  # noqa: E402  (models, inputs, cli lookup)

# The shapes the speed table uses where they differ from the correctness run's.
SPEED_SHAPES = {"ppocr_v4_det": (1, 3, 96, 160), "ppocr_v4_rec": (1, 3, 48, 320)}


def host_line():
    cpu = "unknown CPU"
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu == "unknown CPU":
                    cpu = line.split(":", 1)[1].strip()
                if line.startswith("flags") and not flags:
                    flags = line
    except OSError:
        pass
    isa = "avx512" if "avx512f" in flags else ("avx2" if "avx2" in flags else "sse")
    return (f"host: {platform.node()}, {cpu}, {os.cpu_count()} hardware threads, {isa}, "
            f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3  # unused-initializer warnings would bury the table
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_ms(s, feeds, runs):
    for _ in range(5):
        s.run(None, feeds)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        s.run(None, feeds)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def fuselens_profile(cli, path, files, threads, runs, passes=None):
    args = [cli, "profile", path, "--runs", str(runs), "--threads", str(threads), "--json"]
    if passes:
        args += ["--passes", passes]
    for name, f in files.items():
        args += ["--input", f"{name}={f}"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or ["no message"])[0])
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli")
    ap.add_argument("--only", help="models whose name contains this")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--json")
    ap.add_argument("--passes", help="FuseLens pipeline instead of the default (-O2)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating FuseLens / ONNX Runtime rounds; each side's best counts")
    a = ap.parse_args()
    cli = rw.find_cli(a.cli)
    threads = [int(t) for t in a.threads.split(",")]
    print(host_line(), flush=True)
    print(f"{'model':26s} {'thr':>3s} {'ORT ms':>9s} {'FuseLens ms':>12s} {'ORT/FL':>7s} "
          f"{'kernels':>7s}  first verdict", flush=True)
    rows = []
    for pkg, rel, name, make, _atol, _rtol in rw.MODELS:
        if (a.only and a.only not in name) or "@" in rel:
            continue
        base = rw.package_dir(pkg)
        path = os.path.join(base, rel) if base else None
        if not path or not os.path.exists(path):
            print(f"{name:26s} skipped: package {pkg} is not installed", flush=True)
            continue
        rng = np.random.default_rng(2024)
        inputs = rw.image(SPEED_SHAPES[name])(rng) if name in SPEED_SHAPES else make(rng)
        import onnxruntime as ort
        quiet = ort.SessionOptions()
        quiet.log_severity_level = 3
        want = {i.name for i in ort.InferenceSession(
            path, quiet, providers=["CPUExecutionProvider"]).get_inputs()}
        feeds = {k: v for k, v in inputs.items() if k in want}
        with tempfile.TemporaryDirectory() as d:
            files = {}
            for k, v in feeds.items():
                files[k] = os.path.join(d, f"in_{k}.npy")
                np.save(files[k], v)
            for t in threads:
                row = {"model": name, "threads": t, "rounds": a.rounds}
                # Rounds alternate the two sides and each keeps its best: on a
                # shared host a burst of other work then lands in one round of
                # one side, not in the ratio.
                session = ort_session(path, t)
                for _ in range(max(1, a.rounds)):
                    if "error" not in row:
                        try:
                            prof = fuselens_profile(cli, path, files, t, a.runs, a.passes)
                            ms = prof["run_seconds"] * 1e3
                            if ms < row.get("fuselens_ms", float("inf")):
                                row["fuselens_ms"] = ms
                                row["kernels"] = len(prof["kernels"])
                                row["verdict"] = (prof.get("verdicts") or [""])[0]
                        except RuntimeError as e:
                            row["error"] = str(e)
                    row["ort_ms"] = min(row.get("ort_ms", float("inf")),
                                        ort_ms(session, feeds, a.runs))
                if "fuselens_ms" in row and row["fuselens_ms"] > 0:
                    row["ratio"] = row["ort_ms"] / row["fuselens_ms"]
                rows.append(row)
                if "error" in row:
                    print(f"{name:26s} {t:3d} {row['ort_ms']:9.3f} {'-':>12s} {'-':>7s} "
                          f"{'-':>7s}  FuseLens: {row['error']}", flush=True)
                else:
                    print(f"{name:26s} {t:3d} {row['ort_ms']:9.3f} {row['fuselens_ms']:12.3f} "
                          f"{row['ratio']:7.2f} {row['kernels']:7d}  {row['verdict'][:90]}",
                          flush=True)
    behind = [r for r in rows if r.get("ratio", 0) < 1.0]
    print(f"{len(rows) - len(behind)} of {len(rows)} rows at least as fast as ONNX Runtime")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"host": host_line(), "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
