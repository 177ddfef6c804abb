#!/usr/bin/env bash
# Make sure the images this project uses are in the local Docker engine, under the names and
# tags the Dockerfile, docker-compose.yml and the testcontainers setup use:
#   debian:bookworm-slim   node:20-slim   apachepulsar/pulsar:$PULSAR_VERSION
# Each is used as it is when present, pulled when a registry answers, and otherwise built
# here as an offline stand-in from what the reachable registries carry:
#   - debian:bookworm-slim: debootstrap (minbase) from Debian's archive, then `docker import`;
#   - node:20-slim: that base with this machine's Node 20 and npm, laid out as the official
#     image's (scripts/docker/node-slim.Dockerfile);
#   - apachepulsar/pulsar: that base with Debian's OpenJDK 17 JRE and the Pulsar distribution
#     from Maven Central (scripts/pulsar-broker.sh fetch), laid out as the official image
#     (scripts/docker/pulsar.Dockerfile).
# A machine that can pull gets the official images and never builds a stand-in.
#   scripts/docker-images.sh            ensure all three
# Environment: PULSAR_VERSION (3.3.6), TOOLWIRE_CACHE (~/.cache/toolwire: the rootfs and
# the distribution), DEBIAN_MIRROR (http://deb.debian.org/debian), TOOLWIRE_DOCKER_PULL=0 to
# skip pull attempts (they time out after 30 s each where no registry answers).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PULSAR_VERSION="${PULSAR_VERSION:-3.3.6}"
CACHE="${TOOLWIRE_CACHE:-$HOME/.cache/toolwire}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
BASE=debian:bookworm-slim
NODE=node:20-slim
PULSAR="apachepulsar/pulsar:$PULSAR_VERSION"

log() { echo "[docker-images] $*" >&2; }
die() { log "$*"; exit 1; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
pull() {
  [ "${TOOLWIRE_DOCKER_PULL:-1}" = 1 ] || return 1
  log "pulling $1"
  timeout 30 docker pull -q "$1" >/dev/null 2>&1
}

docker info >/dev/null 2>&1 || die "no Docker engine answers (start dockerd first)"

# One builder at a time: CI steps and a developer may run this together.
mkdir -p "$CACHE"
exec 9>"$CACHE/docker-images.lock"
flock -w 1800 9 || die "could not lock $CACHE/docker-images.lock"

build_base() {
  command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"
  local rootfs="$CACHE/rootfs/bookworm-minbase"
  if [ ! -f "$rootfs/.complete" ]; then
    log "debootstrap bookworm (minbase) from $MIRROR into $rootfs"
    rm -rf "$rootfs"; mkdir -p "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >&2
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    touch "$rootfs/.complete"
  fi
  log "importing $BASE"
  tar -C "$rootfs" --exclude=./.complete -c . | docker import -c 'CMD ["bash"]' - "$BASE" >/dev/null
}

build_node() {
  local ctx; ctx="$(mktemp -d)"
  local node; node="$(command -v node)"
  "$node" -e 'process.exit(process.versions.node.split(".")[0] === "20" ? 0 : 1)' || die "this machine's node is not Node 20: $("$node" --version)"
  local npm; npm="$(dirname "$(readlink -f "$(command -v npm)")")/.."
  cp "$(readlink -f "$node")" "$ctx/node"
  cp -r "$(cd "$npm" && pwd)" "$ctx/npm"
  log "building $NODE (stand-in: $("$node" --version) from $node)"
  docker build -q -t "$NODE" -f "$ROOT/scripts/docker/node-slim.Dockerfile" "$ctx" >/dev/null
  rm -rf "$ctx"
}

build_pulsar() {
  bash "$ROOT/scripts/pulsar-broker.sh" fetch >/dev/null
  local dist="$CACHE/apache-pulsar-$PULSAR_VERSION"
  [ -x "$dist/bin/pulsar" ] || die "no Pulsar distribution at $dist"
  local ctx; ctx="$(mktemp -d)"
  cp -r "$dist" "$ctx/pulsar"
  cp "$ROOT/scripts/docker/apply-config-from-env.py" "$ctx/"
  log "building $PULSAR (stand-in: Debian's OpenJDK 17 and the distribution from Maven Central)"
  docker build -q -t "$PULSAR" -f "$ROOT/scripts/docker/pulsar.Dockerfile" "$ctx" >/dev/null
  rm -rf "$ctx"
}

start=$SECONDS
have "$BASE" || pull "$BASE" || build_base
have "$NODE" || pull "$NODE" || build_node
have "$PULSAR" || pull "$PULSAR" || build_pulsar
log "ready in $((SECONDS - start)) s: $BASE $NODE $PULSAR"
