# ingress-rx controller image: a drop-in for ingress-nginx's controller image in its own manifests.
# They start /nginx-ingress-controller with ingress-nginx's flags as uid 101, gid 82, with only
# NET_BIND_SERVICE and no_new_privs, LD_PRELOAD=/usr/local/lib/libmimalloc.so, and /wait-shutdown
# as the preStop hook; this image has each of those. Node 20 on Debian bookworm; NGINX, its Lua
# module and the other modules (ModSecurity with the OWASP Core Rule Set, brotli, loaded only when
# a configuration uses them) from Debian, installed by the same scripts/setup.sh the tests use.
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
COPY image/ ./image/

# NET_BIND_SERVICE reaches NGINX under no_new_privs only if every program from the entrypoint on
# passes it (libcap2-bin stays: Debian's nginx needs iproute2, which needs it): tini and /nginx-ingress-controller hold it as a permitted file capability, and the
# latter raises it into the ambient set for node and NGINX (image/nginx-ingress-controller.c).
# recheck (the regex cost check) runs its linux-x64 agent; its Java fallback (23 MB) needs a JVM the image has not.
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends tini libcap2-bin libmimalloc2.0 \
 && NODE_ENV=development SETUP_PROFILE=image bash scripts/setup.sh \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/recheck-jar \
 && find node_modules dist \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete \
 && cc -O2 -Wall -Wextra -o /nginx-ingress-controller image/nginx-ingress-controller.c \
 && install -m 0755 image/wait-shutdown /wait-shutdown \
 && ln -s "$(dpkg -L libmimalloc2.0 | grep '/libmimalloc\.so\.2$')" /usr/local/lib/libmimalloc.so \
 && setcap cap_net_bind_service=+p /usr/bin/tini \
 && setcap cap_net_bind_service=+p /nginx-ingress-controller \
 && setcap -v cap_net_bind_service=+p /usr/bin/tini \
 && setcap -v cap_net_bind_service=+p /nginx-ingress-controller \
 && apt-get purge -y -qq gcc libc6-dev libpcre2-dev \
 && apt-get autoremove -y -qq \
 && nginx -v && node -e "require('/app/build/native/nginx-compat.node')" \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log /root/.npm /root/.cache /tmp/* \
      src tsconfig.json image

# ingress-nginx's user: uid 101 in group 82 (www-data on its Alpine base).
RUN groupadd --system --gid 82 ingress-rx \
 && useradd --system --uid 101 --gid 82 --home-dir /app --no-create-home --shell /usr/sbin/nologin ingress-rx \
 && mkdir -p /tmp/ingress-rx /etc/ingress-controller/geoip /var/log/nginx /var/lib/nginx \
 && chown -R 101:82 /tmp/ingress-rx /etc/ingress-controller /var/log/nginx /var/lib/nginx

# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 101:82
EXPOSE 80 443 8443 10254

# As ingress-nginx's image: the init process as entrypoint, the controller as the command that the
# manifests' args replace (their first arg is /nginx-ingress-controller).
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["/nginx-ingress-controller"]
