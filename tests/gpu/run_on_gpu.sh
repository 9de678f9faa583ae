#!/usr/bin/env bash
# The GPU check: on a machine with a GPU and the CUDA toolkit, builds the CUDA
# bundle of every fixture model and every sample (bench) model with nvcc alone,
# verifies each against its eager reference (the bundle runner's `verify`:
# compare's rounding verdicts), and benchmarks the kernels:
#   - memory-bound kernels: achieved bandwidth (bytes read + written / time)
#     against a device-to-device cudaMemcpy timed in the same run;
#   - MatMul/Gemm kernels: time against cuBLASLt with the bias + ReLU epilogue
#     on the same M x N x K (tests/gpu/gpu_baselines.cu);
#   - generated vs cuBLASLt per MatMul group: a model with MatMul/Gemm groups is
#     also exported with --cuda-library cublaslt (bundle NAME.cublaslt, built,
#     verified and benched like the others); each group's generated kernel time
#     is set beside the same group run as cublasLtMatmul with its epilogue in
#     that bundle, and beside gpu_baselines' standalone call of that epilogue.
#   - Conv groups (implicit GEMMs): achieved GFLOP/s of each tiled conv kernel.
# Prints the tables and writes them to OUT/results.tsv, OUT/gemm_vs_cublaslt.tsv
# and OUT/conv.tsv.
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
    elif grep -q "\"gemm\"" "$d/manifest.json"; then
      rm -rf "$d.cublaslt"
      "$cli" export "$1" --target cuda --out "$d.cublaslt" --ptxas none --cuda-library cublaslt \
        > /dev/null 2> "$bundles/$0.cublaslt.export.err" || { mkdir -p "$d.cublaslt"; cp "$bundles/$0.cublaslt.export.err" "$d.cublaslt/NOT_EXPORTED"; }
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
  echo "$bench" > "$d/bench.txt"
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

# 3b. Conv groups run as implicit GEMMs (codegen/cuda/cuda_conv.cpp): each
# tiled conv stage's first comment line gives its M=.. N=.. K=.. groups=..;
# its kernel's time in bench.txt gives the achieved GFLOP/s (2*M*N*K*groups).
conv_tsv="$out/conv.tsv"
printf "model\tkernel\tMxNxK*groups\tms\tGFLOP/s\n" > "$conv_tsv"
for d in "$bundles"/*/; do
  name=$(basename "$d")
  [[ "$name" =~ ^($only) ]] && [ -f "$d/bench.txt" ] || continue
  for cu in "$d"/*.cu; do
    case "$cu" in *_launcher.cu|*_runner.cu) continue ;; esac
    awk '/__global__ void / { f = $0; sub(/.*__global__ void /, "", f); sub(/\(.*/, "", f); sub(/_s[0-9]+$/, "", f) }
         /\/\/ tiled Conv \(implicit GEMM\) M=/ {
           for (i = 1; i <= NF; i++) if ($i ~ /^[A-Za-z]+=/) { split($i, kv, "="); sub(/:$/, "", kv[2]); v[kv[1]] = kv[2] }
           print f, v["M"], v["N"], v["K"], v["groups"] }' "$cu"
  done | while read -r kname M N K G; do
    ms=$(awk -v k="${kname:0:40}" '$1 == k { print $2; exit }' "$d/bench.txt")
    gflops=$(awk -v ms="$ms" -v f="$((2 * M * N * K * G))" 'BEGIN { if (ms > 0) printf "%.1f", f / (ms * 1e6); else print "-" }')
    printf "%s\t%s\t%sx%sx%s*%s\t%s\t%s\n" "$name" "$kname" "$M" "$N" "$K" "$G" "${ms:--}" "$gflops" >> "$conv_tsv"
  done
done

# 4. Generated vs cuBLASLt, one row per MatMul group: the kernel's time in the
# plain bundle, the same group as cublasLtMatmul in NAME.cublaslt (library.tsv
# says which engine and epilogue), and gpu_baselines' standalone call.
gemm_tsv="$out/gemm_vs_cublaslt.tsv"
printf "model\tkernel\tshape\tepilogue\tgenerated_ms\tcublaslt_ms\tgenerated/cublaslt\tstandalone_lt_ms\n" > "$gemm_tsv"
for lt_dir in "$bundles"/*.cublaslt/; do
  [ -f "$lt_dir/library.tsv" ] || continue
  lt_dir=${lt_dir%/}; gen_dir=${lt_dir%.cublaslt}; name=$(basename "$gen_dir")
  [[ "$name" =~ ^($only) ]] || continue
  [ -f "$gen_dir/bench.txt" ] && [ -f "$lt_dir/bench.txt" ] || continue
  # Kernel lines of bench.txt are in launch order, the rows of library.tsv too.
  kernel_ms() { awk -v k="$2" 'NR > 1 && $2 ~ /^[0-9.]+$/ && $1 != "run" { if (n++ == k) print $2 }' "$1"; }
  tail -n +2 "$lt_dir/library.tsv" | while IFS=$'\t' read -r k kname engine epi M N K batch why; do
    [ "$engine" = "cublaslt" ] || { grep -q "gemm=" <(sed -n "$((k + 2))p" "$gen_dir/bench.txt") && \
      printf "%s\t%s\t-\tgenerated: %s\t%s\t-\t-\t-\n" "$name" "$kname" "$why" "$(kernel_ms "$gen_dir/bench.txt" "$k")" >> "$gemm_tsv"; continue; }
    g=$(kernel_ms "$gen_dir/bench.txt" "$k"); l=$(kernel_ms "$lt_dir/bench.txt" "$k")
    s=$("$out/gpu_baselines" lt "$M" "$N" "$K" 50 "$epi" "$batch" 2>/dev/null); s=${s#lt_ms }
    ratio=$(awk -v a="$g" -v b="$l" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
    printf "%s\t%s\t%sx%sx%s*%s\t%s\t%s\t%s\t%s\t%s\n" "$name" "$kname" "$M" "$N" "$K" "$batch" "${epi#CUBLASLT_EPILOGUE_}" \
      "${g:--}" "${l:--}" "$ratio" "${s:--}" >> "$gemm_tsv"
  done
done

# 5. The tables, and the targets: memory-bound >= 80% of the copy, GEMM within 1.25x of cuBLASLt.
column -t -s $'\t' "$results" 2>/dev/null || cat "$results"
echo
echo "generated vs cuBLASLt per MatMul group ($gemm_tsv):"
column -t -s $'\t' "$gemm_tsv" 2>/dev/null || cat "$gemm_tsv"
echo
echo "conv groups as implicit GEMMs, achieved GFLOP/s ($conv_tsv):"
column -t -s $'\t' "$conv_tsv" 2>/dev/null || cat "$conv_tsv"
total=$(($(wc -l < "$results") - 1))
built=$(grep -c $'\tbuilt\t' "$results" || true)
passed=$(grep -c $'\tbuilt\tPASS' "$results" || true)
echo "bundles: $total, built: $built, verify PASS: $passed; copy $copy_gbps GB/s; table in $results"
[ "$passed" -eq "$built" ]
