#!/usr/bin/env bash
# Makes Node.js base images for deploy/Dockerfile from Debian packages, for machines that reach no
# image registry (only Debian's mirror and the npm registry):
#   localhost/ratchet-node:20         runtime base: Debian minbase with Debian's nodejs, nothing else
#   localhost/ratchet-node-build:20   build base: the same plus npm (from the npm registry) and this
#                                     machine's CA bundle, so `npm ci` inside a build trusts what the host trusts
# Then:
#   podman build -f deploy/Dockerfile --network=host \
#     --build-arg NODE_IMAGE=localhost/ratchet-node:20 \
#     --build-arg BUILD_IMAGE=localhost/ratchet-node-build:20 -t ratchet .
# Where a registry is reachable, none of this is needed: the Dockerfile's default is the official image.
#
# Needs root, debootstrap, npm and podman (or docker). Environment:
#   SUITE (trixie: its nodejs is 20.19, what the project needs), MIRROR (from the apt sources),
#   NPM_VERSION (10), CONTAINER_CLI (podman, else docker), BASE_IMAGE, BUILD_BASE_IMAGE, WORK_DIR.
set -euo pipefail

SUITE=${SUITE:-trixie}
NPM_VERSION=${NPM_VERSION:-10}
BASE_IMAGE=${BASE_IMAGE:-localhost/ratchet-node:20}
BUILD_BASE_IMAGE=${BUILD_BASE_IMAGE:-localhost/ratchet-node-build:20}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}

log() { printf '[make-base-image] %s\n' "$*" >&2; }

if [ -z "${CONTAINER_CLI:-}" ]; then
  if command -v podman >/dev/null 2>&1; then CONTAINER_CLI=podman; else CONTAINER_CLI=docker; fi
fi

mirror_from_apt_sources() {
  local uri
  uri=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
    grep -oE 'https?://[^ ]*debian/?' | grep -v security | head -n1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}
MIRROR=${MIRROR:-$(mirror_from_apt_sources)}

if [ "$(id -u)" != 0 ]; then
  log "debootstrap needs root"
  exit 1
fi
command -v debootstrap >/dev/null 2>&1 || {
  log "debootstrap is missing (apt-get install -y debootstrap)"
  exit 1
}

WORK_DIR=${WORK_DIR:-$(mktemp -d /tmp/ratchet-base.XXXXXX)}
trap 'rm -rf "$WORK_DIR"' EXIT
rootfs="$WORK_DIR/rootfs"

log "debootstrap $SUITE from $MIRROR"
debootstrap --variant=minbase --include=nodejs,ca-certificates "$SUITE" "$rootfs" "$MIRROR" >"$WORK_DIR/debootstrap.log" 2>&1 || {
  tail -n 20 "$WORK_DIR/debootstrap.log" >&2
  exit 1
}

# What a runtime never uses: package caches and lists, docs, man pages, locales.
rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*
find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'C.*' -exec rm -rf {} +
: >"$rootfs/etc/resolv.conf"

import() { # dir image
  log "importing $2"
  tar -C "$1" -c . | "$CONTAINER_CLI" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$2" >/dev/null
}

import "$rootfs" "$BASE_IMAGE"

log "adding npm@$NPM_VERSION and the host's CA bundle for the build base"
npm install --global --prefix "$rootfs/usr/local" --no-audit --no-fund --loglevel=error "npm@$NPM_VERSION" >/dev/null
cp "$CA_BUNDLE" "$rootfs/etc/ssl/certs/ca-certificates.crt"
import "$rootfs" "$BUILD_BASE_IMAGE"

"$CONTAINER_CLI" run --rm "$BASE_IMAGE" node --version >&2
log "done: $BASE_IMAGE, $BUILD_BASE_IMAGE"
