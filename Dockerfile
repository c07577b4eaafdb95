# ingress-rx controller image: Node 20 on Debian bookworm, with NGINX and its Lua modules (and
# the ModSecurity, OWASP Core Rule Set and brotli packages, loaded only when a configuration uses
# them) installed by the same scripts/setup.sh the tests use. Runs as uid 101 under tini.
FROM node:20-bookworm-slim

ENV DEBIAN_FRONTEND=noninteractive \
    NODE_ENV=production
WORKDIR /app

# What scripts/setup.sh needs: the lock file for `npm ci`, the sources and tsconfig to build.
COPY package.json package-lock.json tsconfig.json ./
COPY scripts/ ./scripts/
COPY bin/ ./bin/
COPY src/ ./src/
COPY nginx/ ./nginx/
COPY lua/ ./lua/
COPY native/ ./native/

# tini reaps NGINX's processes and forwards signals; setcap lets the non-root NGINX bind 80/443.
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends tini libcap2-bin \
 && NODE_ENV=development bash scripts/setup.sh \
 && setcap cap_net_bind_service=+ep /usr/sbin/nginx \
 && npm prune --omit=dev --no-audit --no-fund \
 && apt-get purge -y -qq libcap2-bin gcc libc6-dev libpcre2-dev \
 && apt-get autoremove -y -qq \
 && rm -rf /var/lib/apt/lists/* /root/.npm /tmp/*

RUN groupadd --system --gid 101 ingress-rx \
 && useradd --system --uid 101 --gid 101 --home-dir /app --no-create-home --shell /usr/sbin/nologin ingress-rx \
 && mkdir -p /tmp/ingress-rx /etc/ingress-controller/geoip /var/log/nginx /var/lib/nginx \
 && chown -R 101:101 /tmp/ingress-rx /etc/ingress-controller /var/log/nginx /var/lib/nginx

# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 101:101
EXPOSE 80 443 10254

ENTRYPOINT ["/usr/bin/tini", "--", "/app/bin/ingress-rx", "controller"]
