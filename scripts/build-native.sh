#!/usr/bin/env bash
# Builds native/nginx-compat.c (PCRE2 and OpenSSL checks in-process) into build/native/, against
# Node's own headers and the system libpcre2-8; skipped when the addon is newer than its source.
set -euo pipefail
cd "$(dirname "$0")/.."
src=native/nginx-compat.c
out=build/native/nginx-compat.node
if [ -f "$out" ] && [ "$out" -nt "$src" ]; then exit 0; fi
include="$(dirname "$(dirname "$(node -p process.execPath)")")/include/node"
[ -f "$include/node_api.h" ] || { echo "build-native: Node's headers not found in $include" >&2; exit 1; }
mkdir -p build/native
cc -O2 -Wall -Wextra -Wno-unused-parameter -shared -fPIC -I"$include" "$src" -o "$out.tmp" -lpcre2-8 -ldl
mv "$out.tmp" "$out"
echo "build-native: built $out" >&2
