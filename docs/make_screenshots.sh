#!/usr/bin/env bash
# Redraws the images of docs/tour.md and README.md with FuseLens itself:
# `fuselens --tour N --screenshot` opens chapter N of Help > Tour offscreen
# (sample, pass, view and selected op as the menu does) and saves the window;
# `fuselens-cli render` draws a graph headlessly. pngquant, where installed
# (apt-get install pngquant), brings each PNG under 150 KB.
#
#   bash docs/make_screenshots.sh [BUILD_DIR]   # default: build
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=docs/images
mkdir -p "$out"
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}

shrink() {
  if command -v pngquant >/dev/null; then
    pngquant --quality=60-85 --speed 1 --force --strip --output "$1" "$1"
  fi
  echo "$1: $(($(stat -c %s "$1") / 1024)) KB"
}

# One image per tour chapter, in the order of docs/tour.md.
names=(tour_const_fold tour_fusion tour_layout tour_lowering tour_limits tour_numerics)
for i in "${!names[@]}"; do
  "$build/app/fuselens" --tour $((i + 1)) --screenshot "$out/${names[$i]}.png" >/dev/null
  shrink "$out/${names[$i]}.png"
done

# The headless graph drawing (README): the ResNet bottleneck after layout{block=8}.
"$build/app/fuselens-cli" render samples/resnet_bottleneck.onnx --after layout \
  -o "$out/render_resnet_layout.png" >/dev/null
shrink "$out/render_resnet_layout.png"
