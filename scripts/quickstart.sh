#!/usr/bin/env bash
# The README's main command: sets up what is missing, starts the echo backends, and runs
# `ingress-rx local` on examples/quickstart with real NGINX on loopback. Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

HTTP_PORT=${HTTP_PORT:-8080} HTTPS_PORT=${HTTPS_PORT:-8443} HEALTHZ_PORT=${HEALTHZ_PORT:-10254}
# A work directory of its own that `dbg` is pointed at below (NGINX's workers must be able to enter it).
WORKDIR=${WORKDIR:-$(mktemp -d /tmp/ingress-rx-quickstart-XXXXXX)}
chmod 755 "$WORKDIR"
node examples/quickstart/echo-backends.mjs &
echo_pid=$!
bin/ingress-rx local --manifests examples/quickstart \
  --http-port "$HTTP_PORT" --https-port "$HTTPS_PORT" --healthz-port "$HEALTHZ_PORT" --workdir "$WORKDIR" "$@" &
rx_pid=$!
stop() { kill -TERM "$rx_pid" 2>/dev/null || true; wait "$rx_pid" 2>/dev/null || true; kill "$echo_pid" 2>/dev/null || true; }
trap stop INT TERM EXIT

for _ in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$HEALTHZ_PORT/healthz" >/dev/null 2>&1; then break; fi
  kill -0 "$rx_pid" 2>/dev/null || { echo "ingress-rx exited" >&2; exit 1; }
  sleep 0.1
done
cat <<MSG

ingress-rx is serving examples/quickstart. Try:

  curl --resolve web.example.test:$HTTP_PORT:127.0.0.1 http://web.example.test:$HTTP_PORT/
  curl --resolve web.example.test:$HTTP_PORT:127.0.0.1 -H 'X-Canary: always' http://web.example.test:$HTTP_PORT/
  curl --resolve api.example.test:$HTTP_PORT:127.0.0.1 http://api.example.test:$HTTP_PORT/v1/users
  curl --resolve secure.example.test:$HTTPS_PORT:127.0.0.1 --cacert examples/quickstart/secure.example.test.crt https://secure.example.test:$HTTPS_PORT/
  curl -i --resolve secure.example.test:$HTTP_PORT:127.0.0.1 http://secure.example.test:$HTTP_PORT/
  curl --resolve shop.example.test:$HTTP_PORT:127.0.0.1 -H 'X-Version: 2' http://shop.example.test:$HTTP_PORT/api/users
  curl --http2 --resolve shop.example.test:$HTTPS_PORT:127.0.0.1 --cacert examples/quickstart/shop.example.test.crt https://shop.example.test:$HTTPS_PORT/
  curl http://127.0.0.1:$HEALTHZ_PORT/metrics
  bin/ingress-rx dbg --workdir $WORKDIR backends list
  bin/ingress-rx dbg --workdir $WORKDIR routes

shop.example.test is a Gateway API Gateway and HTTPRoute (examples/quickstart/gateway.yaml) on the
same NGINX as the Ingresses. Edit examples/quickstart/*.yaml and the changes apply live.
Ctrl-C to stop.

MSG
wait "$rx_pid"
