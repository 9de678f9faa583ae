#!/usr/bin/env bash
# The GPU check: on a machine with a GPU and the CUDA toolkit, builds the CUDA
# bundle of every fixture model and every sample (bench) model with nvcc alone,
# verifies each against its eager reference (the bundle runner's `verify`:
# compare's rounding verdicts), and benchmarks the kernels:
#   - memory-bound kernels: achieved bandwidth (bytes read + written / time)
#     against a device-to-device cudaMemcpy timed in the same run;
#   - MatMul/Gemm kernels: time against cuBLASLt with the bias + ReLU epilogue
#     on the same M x N x K (tests/gpu/gpu_baselines.cu).
# Prints one table and writes it to OUT/results.tsv.
#
#   tests/gpu/run_on_gpu.sh [--cli build/app/fuselens-cli] [--bundles DIR] [--out DIR]
#                           [--export-only] [--jobs N] [--only REGEX]
#
# With a FuseLens build (--cli, default build/app/fuselens-cli) the bundles are
# exported first; --bundles DIR uses bundles exported elsewhere (each a folder
# with build.sh), so the GPU machine needs only the toolkit. --export-only
# stops after exporting (run it where FuseLens is built, copy OUT/bundles over).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
cli=build/app/fuselens-cli bundles="" out=/tmp/fuselens-gpu export_only=0 jobs=$(nproc) only=.
while [ $# -gt 0 ]; do
  case "$1" in
    --cli) cli="$2"; shift 2 ;;
    --bundles) bundles="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --export-only) export_only=1; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;  # bundle names (fixture_NAME, sample_NAME) matching REGEX
    *) echo "run_on_gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
command -v nvcc > /dev/null || { echo "run_on_gpu.sh: nvcc is not on the PATH (set CUDA_HOME)" >&2; exit 2; }
mkdir -p "$out"

# 1. Bundles.
if [ -z "$bundles" ]; then
  [ -x "$cli" ] || { echo "run_on_gpu.sh: no fuselens-cli at $cli; build it or pass --bundles DIR" >&2; exit 2; }
  bundles="$out/bundles"
  mkdir -p "$bundles"
  list="$out/models.txt"
  : > "$list"
  for m in tests/fixtures/*/model.onnx; do echo "fixture_$(basename "$(dirname "$m")") $root/$m" >> "$list"; done
  for m in samples/*.onnx; do echo "sample_$(basename "$m" .onnx) $root/$m" >> "$list"; done
  grep -E "^($only)[^ ]* " "$list" > "$list.sel"; mv "$list.sel" "$list"
  echo "exporting $(wc -l < "$list") models into $bundles ($jobs at a time)"
  export cli bundles
  xargs -r -P "$jobs" -L 1 sh -c '
    d="$bundles/$0"; rm -rf "$d"
    if ! "$cli" export "$1" --target cuda --out "$d" --ptxas none > /dev/null 2> "$bundles/$0.export.err"; then
      mkdir -p "$d"; cp "$bundles/$0.export.err" "$d/NOT_EXPORTED"
    fi' < "$list"
fi
[ "$export_only" -eq 1 ] && { echo "bundles in $bundles"; exit 0; }

# 2. Baselines, built with nvcc.
arch=""
if cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1); then
  [ -n "$cap" ] && arch="-gencode arch=compute_${cap/./},code=sm_${cap/./}"
fi
nvcc -O2 -std=c++17 $arch -o "$out/gpu_baselines" tests/gpu/gpu_baselines.cu -lcublasLt \
  || { echo "run_on_gpu.sh: the baselines do not build" >&2; exit 2; }
copy=$("$out/gpu_baselines" copy $((256 << 20)) 2>&1) || { echo "run_on_gpu.sh: $copy" >&2; exit 2; }
copy_gbps=${copy#copy_gbps }
echo "device-to-device copy: $copy_gbps GB/s"

# 3. Build, verify and bench every bundle.
export ARCH="${arch:-}"
results="$out/results.tsv"
printf "model\tbuild\tverify\tkernels\tmem_bound_median_pct_of_copy\tmem_bound_best_pct\tgemm_vs_cublaslt\n" > "$results"
for d in "$bundles"/*/; do
  name=$(basename "$d")
  [[ "$name" =~ ^($only) ]] || continue
  if [ -f "$d/NOT_EXPORTED" ]; then
    printf "%s\tnot exported\t-\t-\t-\t-\t%s\n" "$name" "$(tail -1 "$d/NOT_EXPORTED" | cut -c1-80)" >> "$results"
    continue
  fi
  base=$(ls "$d"/*_runner.cu 2>/dev/null | head -1); base=$(basename "${base%_runner.cu}")
  if ! (cd "$d" && sh build.sh > build.log 2>&1); then
    printf "%s\tFAILED\t-\t-\t-\t-\t-\n" "$name" >> "$results"; continue
  fi
  verify=$(cd "$d" && ./"${base}_runner" verify . 2>&1 | tail -1)
  bench=$(cd "$d" && ./"${base}_runner" bench 20 . 2>&1)
  # Kernel lines: name, ms/run, bytes[, gemm=MxNxK].
  mem=$(echo "$bench" | awk -v c="$copy_gbps" 'NR > 1 && $2 ~ /^[0-9.]+$/ && $3 ~ /^[0-9]+$/ && $4 !~ /^gemm=/ && $2 > 0 {
           print 100 * ($3 / ($2 * 1e6)) / c }' | sort -g)
  n=$(echo "$mem" | grep -c . || true)
  med=$( [ "$n" -gt 0 ] && echo "$mem" | sed -n "$(( (n + 1) / 2 ))p" | xargs printf "%.1f" || echo -)
  best=$( [ "$n" -gt 0 ] && echo "$mem" | tail -1 | xargs printf "%.1f" || echo -)
  gemm=""
  while read -r ms shape; do
    IFS=x read -r M N K <<< "${shape#gemm=}"
    lt=$("$out/gpu_baselines" lt "$M" "$N" "$K" 2>/dev/null) || continue
    gemm="$gemm $(awk -v a="$ms" -v b="${lt#lt_ms }" 'BEGIN { printf "%.2fx", a / b }')@${M}x${N}x${K}"
  done < <(echo "$bench" | awk '$4 ~ /^gemm=/ { print $2, $4 }')
  kernels=$(echo "$bench" | awk 'NR > 1 && $2 ~ /^[0-9.]+$/' | grep -vc "^run" || true)
  printf "%s\tbuilt\t%s\t%s\t%s\t%s\t%s\n" "$name" "$verify" "$kernels" "$med" "$best" "${gemm:- -}" >> "$results"
done

# 4. The table, and the targets: memory-bound >= 80% of the copy, GEMM within 1.25x of cuBLASLt.
column -t -s $'\t' "$results" 2>/dev/null || cat "$results"
total=$(($(wc -l < "$results") - 1))
built=$(grep -c $'\tbuilt\t' "$results" || true)
passed=$(grep -c $'\tbuilt\tPASS' "$results" || true)
echo "bundles: $total, built: $built, verify PASS: $passed; copy $copy_gbps GB/s; table in $results"
[ "$passed" -eq "$built" ]
