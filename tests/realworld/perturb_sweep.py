#!/usr/bin/env python3
"""Plants a known error in one kernel at a time (`compare --perturb KERNEL=EPS`)
and checks that localization names that kernel: end to end, the first tensor
beyond rounding must come from it; isolated, it must be the first kernel whose
own error is beyond rounding; bisected (`bisect --by groups`), a fused kernel's
group must be the one group to split, and a single-op kernel's fault must be
called not fusion's. Not part of CTest (it needs the models of
tests/realworld/run_realworld.py and minutes per model).

    python3 tests/realworld/perturb_sweep.py [--cli build/app/fuselens-cli] [--only det]
        [--eps 1e-3] [--max-eps 0.1] [--every N] [--isolated-every M] [--bisect-every B]
        [--kernels k3,k17] [--json out.json]

Prints one line per planted kernel and a hit rate per model.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_realworld as rw  # noqa: E402  (the models, inputs and cli lookup)


def cli_json(cli, args):
    p = subprocess.run([cli] + args + ["--json"], capture_output=True, text=True, timeout=3600)
    if p.returncode not in (0, 1):
        raise RuntimeError(p.stderr.strip().splitlines()[-1:] or p.stdout[-300:])
    return json.loads(p.stdout)


def sweep(cli, pkg, rel, name, make_inputs, eps, max_eps, every, isolated_every, bisect_every,
          only_kernels=()):
    base = rw.package_dir(pkg)
    if not base or not os.path.exists(os.path.join(base, rel)):
        return None
    path = os.path.join(base, rel)
    rng = np.random.default_rng(2024)
    inputs = make_inputs(rng)
    import onnxruntime as ort
    want = {i.name for i in ort.InferenceSession(path, providers=["CPUExecutionProvider"]).get_inputs()}
    results = []
    with tempfile.TemporaryDirectory() as d:
        feeds = []
        for k, v in inputs.items():
            if k not in want:
                continue
            f = os.path.join(d, f"in_{k}.npy")
            np.save(f, v)
            feeds += ["--input", f"{k}={f}"]
        clean = cli_json(cli, ["compare", path, "--isolated"] + feeds)
        node_kernel = {t["node"]: t["kernel"] for t in clean["tensors"]}
        value_kernel = {t["value"]: t["kernel"] for t in clean["tensors"]}
        kernels = [k["id"] for k in clean["kernels"]
                   if all(not o.get("skipped") for o in k["outputs"])]
        for i, kernel in enumerate(kernels):
            if i % every or (only_kernels and kernel.split("_")[0] not in only_kernels):
                continue
            kid = kernel.split("_")[0]
            # A planted error smaller than the rounding noise of its tensor is not a
            # fault by compare's own definition (it says "within rounding" and names
            # no kernel). Such a plant is raised tenfold, up to --max-eps, and the EPS
            # that was needed is reported; naming a wrong kernel is a miss at any EPS.
            used = eps
            while True:
                e2e = cli_json(cli, ["compare", path, "--perturb", f"{kid}={used}"] + feeds)
                first = e2e.get("first_divergent")
                if first or used * 10 > max_eps * 1.0001:
                    break
                used *= 10
            rows = {t["value"]: t for t in e2e["tensors"]}
            got = value_kernel.get(first) or node_kernel.get(rows.get(first, {}).get("producer"))
            r = {"kernel": kernel, "eps": used, "end_to_end": got, "end_to_end_hit": got == kernel}
            if isolated_every and i % isolated_every == 0:
                iso = cli_json(cli, ["compare", path, "--isolated", "--perturb", f"{kid}={used}"] + feeds)
                r["isolated"] = iso.get("first_divergent")
                r["isolated_hit"] = r["isolated"] == kernel
            if bisect_every and i % bisect_every == 0:
                # Bisection judges the graph outputs: a plant that downstream kernels
                # damp to within rounding there ("within") is raised the same way.
                beps = used
                while True:
                    b = cli_json(cli, ["bisect", path, "--perturb", f"{kid}={beps}"] + feeds)
                    if b["outcome"] != "within" or beps * 10 > max_eps * 1.0001:
                        break
                    beps *= 10
                r["bisect_eps"] = beps
                if b["outcome"] == "within":
                    # Even at --max-eps the fault is damped to within rounding at the
                    # outputs: bisection rightly has nothing to find (not a miss).
                    r["bisect_unreached"] = True
                fused = "_fused_" in kernel
                r["bisect"] = b["kernels"] if b["outcome"] == "found" else b["outcome"]
                if not r.get("bisect_unreached"):
                    r["bisect_hit"] = ((b["kernels"] == [kernel]) if fused
                                       else b["outcome"] == "not_fusion")
            results.append(r)
            print(f"{name:24s} {kernel:40.40s} eps {used:g} e2e -> {got} "
                  + (f"isolated -> {r['isolated']} " if "isolated" in r else "")
                  + (f"bisect -> {r['bisect']} (eps {r['bisect_eps']:g})" if "bisect" in r else ""),
                  flush=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli")
    ap.add_argument("--only", help="models whose name contains this")
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--max-eps", type=float, default=1e-1,
                    help="raise a plant that compare calls within rounding tenfold up to this")
    ap.add_argument("--every", type=int, default=1, help="plant in every N-th kernel")
    ap.add_argument("--isolated-every", type=int, default=4,
                    help="also run the isolated check for every M-th planted kernel (0: never)")
    ap.add_argument("--bisect-every", type=int, default=0,
                    help="also bisect by groups for every B-th planted kernel (0: never)")
    ap.add_argument("--kernels", help="plant only in these kernel ids (k3,k17)")
    ap.add_argument("--json")
    a = ap.parse_args()
    cli = rw.find_cli(a.cli)
    summary = {}
    for pkg, rel, name, make, _atol, _rtol in rw.MODELS:
        if (a.only and a.only not in name) or "@" in rel:
            continue
        res = sweep(cli, pkg, rel, name, make, a.eps, a.max_eps, a.every, a.isolated_every, a.bisect_every,
                    a.kernels.split(",") if a.kernels else ())
        if res is None:
            continue
        e2e = sum(r["end_to_end_hit"] for r in res)
        iso = [r["isolated_hit"] for r in res if "isolated_hit" in r]
        bis = [r["bisect_hit"] for r in res if "bisect_hit" in r]
        raised = sum(r["eps"] > a.eps for r in res)
        unreached = sum(bool(r.get("bisect_unreached")) for r in res)
        summary[name] = {"planted": len(res), "end_to_end_hits": e2e, "raised_eps": raised,
                         "bisect_unreached": unreached,
                         "isolated_checked": len(iso), "isolated_hits": sum(iso),
                         "bisect_checked": len(bis), "bisect_hits": sum(bis), "rows": res}
        print(f"== {name}: end to end {e2e}/{len(res)}, isolated {sum(iso)}/{len(iso)}, "
              f"bisect {sum(bis)}/{len(bis)} ({unreached} never reach the outputs); "
              f"{raised} plants raised above EPS {a.eps:g}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=2)
    ok = all(s["end_to_end_hits"] == s["planted"] and s["isolated_hits"] == s["isolated_checked"]
             and s["bisect_hits"] == s["bisect_checked"] for s in summary.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
