#!/usr/bin/env bash
# Makes a fresh Debian machine ready: NGINX with its Lua module from Debian, npm deps, the native
# checks, build.
# Idempotent: each step is skipped when its result is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

DEB_PACKAGES=(nginx libnginx-mod-http-lua lua-resty-core lua-cjson libnginx-mod-stream
  libnginx-mod-http-headers-more-filter libnginx-mod-http-geoip2 openssl ca-certificates
  gcc libc6-dev libpcre2-dev)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's package starts a system nginx on :80; ingress-rx runs its own.
  { $SUDO nginx -s quit 2>/dev/null || true; } >/dev/null
fi

lock_hash=$(sha256sum package-lock.json | cut -c1-16)
if [ ! -f node_modules/.setup-hash ] || [ "$(cat node_modules/.setup-hash)" != "$lock_hash" ]; then
  echo "setup: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$lock_hash" > node_modules/.setup-hash
fi

# The in-process PCRE2/OpenSSL checks (native/nginx-compat.c), against the libraries NGINX links.
bash scripts/build-native.sh

newest_src=$(find src nginx -type f -newer dist/.build-stamp 2>/dev/null | head -1 || true)
if [ ! -f dist/.build-stamp ] || [ -n "$newest_src" ]; then
  echo "setup: building" >&2
  node node_modules/typescript/bin/tsc -p tsconfig.json
  touch dist/.build-stamp
fi
