#!/usr/bin/env bash
# Builds the container image from the Dockerfile, offline, with Debian's buildah (chroot
# isolation): the same Dockerfile a user builds with docker from public registries.
#
# No container registry is reachable from CI, so the base image the Dockerfile's FROM names
# (node:20-bookworm-slim) is made here first when it is not in local storage: mmdebstrap of
# Debian bookworm (minbase, merged /usr, without docs, man pages and locales, as Debian's slim
# images are), plus this machine's Node 20 (`node -p process.execPath`), its npm and corepack and
# its headers laid out under /usr/local as the official image has them, and user `node` (1000).
# It is not the official image: no yarn and no docker-entrypoint.sh (the Dockerfile replaces the
# entrypoint anyway), and Node is whatever Node 20 this machine has (docs/image.md).
#
# Both steps are skipped when their result is in local storage with the label of its inputs, so a
# second run on one machine costs seconds. Prints the build time and the image's size.
# Usage: scripts/image.sh [IMAGE]     (default localhost/ingress-rx:dev)
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${1:-localhost/ingress-rx:dev}
BASE=docker.io/library/node:20-bookworm-slim
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
export BUILDAH_ISOLATION=chroot

[ "$(id -u)" -eq 0 ] || { echo "image: building needs root (buildah's storage, mmdebstrap)" >&2; exit 1; }
for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "image: $tool is missing; run scripts/setup.sh" >&2; exit 1; }
done
from=$(awk 'toupper($1) == "FROM" { print $2; exit }' Dockerfile)
[ "docker.io/library/$from" = "$BASE" ] || { echo "image: the Dockerfile's FROM is $from; this script makes $BASE" >&2; exit 1; }

label_of() { buildah inspect --type image --format "{{index .ImageAnnotations \"$2\"}}{{index .OCIv1.Config.Labels \"$2\"}}" "$1" 2>/dev/null || true; }

node_bin=$(node -p process.execPath)
node_prefix=$(dirname "$(dirname "$node_bin")")
node_modules=$(npm root -g)
base_recipe=$( { sed -n '/^make_base()/,/^}/p' "$0"; "$node_bin" --version; cat "$node_modules/npm/package.json"; } | sha256sum | cut -c1-16)

make_base() {
  local tmp ctr mnt
  tmp=$(mktemp -d /var/tmp/irx-base.XXXXXX)
  trap 'rm -rf "$tmp"' RETURN
  mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/groff/*' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    bookworm "$tmp/rootfs.tar" \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" "deb $SECURITY_MIRROR bookworm-security main"
  ctr=$(buildah from scratch)
  mnt=$(buildah mount "$ctr")
  tar -C "$mnt" --xattrs --xattrs-include='*' -xf "$tmp/rootfs.tar"
  # Node as the official tarball lays it out under /usr/local.
  install -D -m 0755 "$node_bin" "$mnt/usr/local/bin/node"
  mkdir -p "$mnt/usr/local/lib/node_modules" "$mnt/usr/local/include"
  cp -a "$node_modules/npm" "$node_modules/corepack" "$mnt/usr/local/lib/node_modules/"
  cp -a "$node_prefix/include/node" "$mnt/usr/local/include/"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  ln -s ../lib/node_modules/corepack/dist/corepack.js "$mnt/usr/local/bin/corepack"
  ln -s node "$mnt/usr/local/bin/nodejs"
  chroot "$mnt" groupadd --gid 1000 node
  chroot "$mnt" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  buildah umount "$ctr" >/dev/null
  buildah config --env "NODE_VERSION=$("$node_bin" --version | tr -d v)" --cmd '["node"]' \
    --label "org.ingress-rx.base-recipe=$base_recipe" \
    --label "org.ingress-rx.base-note=made locally by scripts/image.sh: Debian bookworm minbase and this machine's Node" "$ctr"
  buildah commit --quiet --rm "$ctr" "$BASE" >/dev/null
}

if [ "$(label_of "$BASE" org.ingress-rx.base-recipe)" != "$base_recipe" ]; then
  if buildah inspect --type image "$BASE" >/dev/null 2>&1 && [ -z "$(label_of "$BASE" org.ingress-rx.base-note)" ]; then
    echo "image: using $BASE from local storage (not made here)" >&2
  else
    echo "image: making $BASE locally (mmdebstrap of bookworm + Node $("$node_bin" --version))" >&2
    t0=$(date +%s)
    make_base
    echo "image: base made in $(( $(date +%s) - t0 ))s" >&2
  fi
fi

# The image's inputs: the Dockerfile, what it copies, and the base.
context=$( { cat Dockerfile .dockerignore; label_of "$BASE" org.ingress-rx.base-recipe;
  find package.json package-lock.json tsconfig.json scripts bin src nginx lua native image -type f -print0 | sort -z | xargs -0 sha256sum; } \
  | sha256sum | cut -c1-16)
if [ "$(label_of "$IMAGE" org.ingress-rx.context)" = "$context" ]; then
  echo "image: $IMAGE is up to date (context $context)" >&2
else
  echo "image: building $IMAGE from the Dockerfile" >&2
  # Where this machine reaches the npm registry through a TLS proxy of its own, npm is told to
  # trust its CA (npm's cafile) by a global npmrc mounted for the build only, never in the image.
  extra=()
  cafile=$(npm config get cafile 2>/dev/null || true)
  if [ -n "$cafile" ] && [ "$cafile" != null ] && [ -f "$cafile" ]; then
    # Over /usr/local/etc, which the base has (empty): no mount point is left in the image.
    npmrc=$(mktemp -d /var/tmp/irx-npmrc.XXXXXX)
    cp "$cafile" "$npmrc/build-ca.pem"
    printf 'cafile=/usr/local/etc/build-ca.pem\nupdate-notifier=false\n' > "$npmrc/npmrc"
    chmod -R a+rX "$npmrc"
    extra=(--volume "$npmrc:/usr/local/etc:ro")
  fi
  t0=$(date +%s)
  buildah bud --quiet --isolation chroot --pull=never --layers=false "${extra[@]}" \
    --label "org.ingress-rx.context=$context" -t "$IMAGE" -f Dockerfile . >/dev/null
  [ -z "${npmrc:-}" ] || rm -rf "$npmrc"
  echo "image: built in $(( $(date +%s) - t0 ))s" >&2
fi
size=$(buildah images --format "{{.Size}}" "$IMAGE" | head -1)
echo "image: $IMAGE, $size" >&2
