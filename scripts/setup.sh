#!/usr/bin/env bash
# Makes a fresh Debian machine ready: NGINX with its Lua module from Debian, npm deps, the native
# checks, build.
# Idempotent: each step is skipped when its result is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# ModSecurity, its Core Rule Set and brotli are loaded only by configurations that use them.
# gcc and the -dev packages build the native addon (the image purges them afterwards).
DEB_PACKAGES=(nginx libnginx-mod-http-lua lua-resty-core lua-cjson libnginx-mod-stream
  libnginx-mod-http-headers-more-filter libnginx-mod-http-geoip2
  libnginx-mod-http-modsecurity modsecurity-crs libnginx-mod-http-brotli-filter openssl ca-certificates
  gcc libc6-dev libpcre2-dev)
# What only the tests need, not the image (the Dockerfile runs this script with SETUP_PROFILE=image):
# prometheus for the dashboards test; chromium for the browser tests (test/e2e/browser-*.test.ts, Debian's
# headless Chromium); curl for scripts/quickstart.sh and the lines it prints (a fresh Debian has none); php-fpm for the FastCGI test (its own php-fpm on loopback, never the system service); buildah, mmdebstrap, bubblewrap and iproute2 build the image
# and run it as the kubelet would (scripts/image.sh, test/e2e/image-pod.test.ts).
if [ "${SETUP_PROFILE:-}" != image ]; then
  DEB_PACKAGES+=(curl prometheus chromium php-fpm buildah mmdebstrap bubblewrap iproute2)
fi
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  # Debian's packages start system services (nginx on :80, prometheus on :9090); ingress-rx and
  # its tests run their own. A policy-rc.d (when the machine has none) keeps them from starting.
  own_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null && $SUDO chmod 755 /usr/sbin/policy-rc.d
    own_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ -n "$own_policy" ] && $SUDO rm -f /usr/sbin/policy-rc.d
  { $SUDO nginx -s quit 2>/dev/null || true; } >/dev/null
  if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
    $SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
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
