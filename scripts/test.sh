#!/usr/bin/env bash
# The whole test suite: set up what is missing, type-check, then run every test file.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node node_modules/typescript/bin/tsc -p tsconfig.test.json
exec node scripts/run-tests.mjs "$@"
