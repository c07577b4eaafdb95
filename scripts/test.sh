#!/usr/bin/env bash
# The whole test suite: set up what is missing, type-check, build the image, then run every test file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node node_modules/typescript/bin/tsc -p tsconfig.test.json
# The container image, built from the Dockerfile while the other test files run (most of its time
# is mmdebstrap and npm waiting on the network); test/e2e/image-pod*.test.ts run it as the kubelet
# would, after the build (scripts/run-tests.mjs waits for its status).
if [ $# -eq 0 ] || printf '%s\n' "$@" | grep -q image; then
  mkdir -p build
  rm -f build/image.status
  ( bash scripts/image.sh >build/image.log 2>&1; echo $? >build/image.status ) &
  export IMAGE_BUILD_STATUS=$PWD/build/image.status IMAGE_BUILD_LOG=$PWD/build/image.log
fi
exec node scripts/run-tests.mjs "$@"
