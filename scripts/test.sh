#!/usr/bin/env bash
# The whole test suite: set up what is missing, type-check, build the image, then run every test file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node node_modules/typescript/bin/tsc -p tsconfig.test.json
# The container image, built from the Dockerfile (test/e2e/image-pod*.test.ts run it as the kubelet would).
bash scripts/image.sh
exec node scripts/run-tests.mjs "$@"
