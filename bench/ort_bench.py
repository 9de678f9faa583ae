#!/usr/bin/env python3
"""ONNX Runtime timing for fuselens-bench: same model, same inputs (.npy), same
thread count. Prints one JSON object {"median_us": ...}; exits 1 when
onnxruntime does not import, so the caller reports it as missing."""
import argparse
import json
import sys
import time

try:
    import numpy as np
    import onnxruntime as ort
except ImportError:
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--input", action="append", default=[], help="name=path.npy")
    ap.add_argument("--runs", type=int, default=51)
    a = ap.parse_args()
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    feeds = {}
    for item in a.input:
        name, path = item.split("=", 1)
        feeds[name] = np.load(path)
    for _ in range(5):
        s.run(None, feeds)
    times = []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        s.run(None, feeds)
        times.append(time.perf_counter() - t0)
    times.sort()
    print(json.dumps({"median_us": times[len(times) // 2] * 1e6, "threads": a.threads}))


if __name__ == "__main__":
    main()
