#!/usr/bin/env bash
# Prepares .gpu/ for a CUDA calibration on a GPU machine that has no Node.js (../shared/gpu/README.md).
# Run on the build machine (x86-64 Linux with Node 20 and a C++ compiler), from the project root:
#   bash scripts/gpu/prepare-bundle.sh
# It writes, under .gpu/ (git-ignored):
#   node.xz, enter.sh  this machine's Node and the script that unpacks it there (../shared/gpu/prepare.sh)
#   app.tar.xz         the CLI ready to run: dist/, bin/, package.json, the native addon and the
#                      production dependencies (npm ci --omit=dev), about 3 MB compressed
# Then run scripts/gpu/run-calibration.sh there, carrying ".gpu" (see scripts/gpu/README.md).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
shared=${CLUSTERSIM_SHARED:-$root/../shared}
[[ -f "$shared/gpu/prepare.sh" ]] || { echo "cannot find $shared/gpu/prepare.sh (set CLUSTERSIM_SHARED)" >&2; exit 1; }

npm run --silent build
npm run --silent build:native
bash "$shared/gpu/prepare.sh"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp package.json package-lock.json "$stage/"
# --ignore-scripts: no addon build and no TypeScript build in the stage; both are copied from here.
(cd "$stage" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
mkdir -p "$stage/native/build/Release"
cp native/build/Release/clustersim_native.node "$stage/native/build/Release/"
cp -r dist bin "$stage/"
tar -C "$stage" -cf - package.json bin dist native node_modules | xz -T2 -6 > .gpu/app.tar.xz.tmp
mv .gpu/app.tar.xz.tmp .gpu/app.tar.xz
# Where the addon will have to load: it needs glibc >= 2.34 and libstdc++ from GCC >= 12 (Ubuntu 22.04 or newer).
echo "addon needs: $(objdump -T native/build/Release/clustersim_native.node \
  | grep -o 'GLIBC_[0-9.]*\|GLIBCXX_[0-9.]*' | sort -Vu | tr '\n' ' ')"
du -sh .gpu .gpu/*
