#!/usr/bin/env bash
# Makes a source tree of COMMIT in DIR for bench/ab.ts: `git archive` of the commit, this
# checkout's node_modules copied (the lock file must match), and the native addon built there.
# Usage: scripts/baseline-tree.sh COMMIT DIR
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:?usage: scripts/baseline-tree.sh COMMIT DIR}
dir=${2:?usage: scripts/baseline-tree.sh COMMIT DIR}
mkdir -p "$dir"
git archive "$commit" | tar -x -C "$dir"
# A few commits (f63aa2d..a071dfe) carried a node_modules symlink by mistake; a tree needs its own.
[ ! -L "$dir/node_modules" ] || rm "$dir/node_modules"
if ! cmp -s package-lock.json "$dir/package-lock.json"; then
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
else
  cp -a node_modules "$dir/"
fi
[ ! -f "$dir/scripts/build-native.sh" ] || bash "$dir/scripts/build-native.sh"
echo "baseline tree of $(git rev-parse --short "$commit") in $dir" >&2
