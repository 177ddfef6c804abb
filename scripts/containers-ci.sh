#!/usr/bin/env bash
# The container half of CI (npm run test:containers; .ci/run runs it after npm test):
#   0. the product and the bench built (two tsc runs, about 15 s, even when npm test just did;
#      right after `npm ci` only dist/ exists, and the drills run from build/bench);
#   1. a Docker engine: Debian's docker.io, debootstrap and docker-compose installed when
#      missing (as root), dockerd started when none answers;
#   2. the images (scripts/docker-images.sh: pulled, or offline stand-ins under the same names);
#   3. the integration suite once more, its broker from testcontainers (npm test got its broker
#      from scripts/pulsar-broker.sh, or the environment, so both paths stay tested), less the
#      files that start brokers of their own (bench/own-broker.ts): they never touch the shared
#      one, ran in npm test, and were a third of this pass's time;
#   4. the project's image (docker build), then the compose stack driven from the host
#      (test/containers/stack.test.ts): the worker's privileges, tool calls through the gateway
#      and over the broker (tokens from the stack's volumes), anonymous broker clients refused,
#      a stdio MCP server kept from the worker's secrets, and `docker stop` with requests in flight.
# Environment: TOOLWIRE_CACHE (~/.cache/toolwire), NODE_EXTRA_CA_CERTS (copied into the build
# context as build-ca.pem, for a TLS-inspecting proxy in front of the npm registry).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${TOOLWIRE_CACHE:-$HOME/.cache/toolwire}"
mkdir -p "$CACHE"
log() { echo "[containers-ci] $*" >&2; }
die() { log "$*"; exit 1; }
start=$SECONDS

log "building dist/ and build/bench/"
npm run build --silent
npm run build:bench --silent

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || need+=(docker-compose)
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing ${need[*]} and not root to install them"
  log "installing ${need[*]} from Debian's packages"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2; }
fi

if ! docker info >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "no Docker engine answers, and only root can start dockerd here"
  log "starting dockerd (log: $CACHE/dockerd.log)"
  nohup dockerd >"$CACHE/dockerd.log" 2>&1 &
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || die "dockerd did not answer within 60 s; see $CACHE/dockerd.log"
fi

bash scripts/docker-images.sh

trap 'rm -f build-ca.pem' EXIT
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then cp "$NODE_EXTRA_CA_CERTS" build-ca.pem; fi
log "docker build -t toolwire:local ."
t=$SECONDS
docker build -q -t toolwire:local . >/dev/null 2>"$CACHE/docker-build.log" || { cat "$CACHE/docker-build.log" >&2; die "docker build failed"; }
rm -f build-ca.pem
log "image built in $((SECONDS - t)) s"

# testcontainers' reaper image (ryuk) cannot be pulled offline; the setup stops its container itself.
# The files that stop and start a broker of their own (bench/own-broker.ts).
# The consumer-project test meets no broker at all: it too ran in npm test, and would only repeat.
own=(test/integration/broker-restart.test.ts test/integration/drills/broker-restart.test.ts test/integration/drills/broker-outage.test.ts
     test/integration/secured-broker.test.ts test/integration/consumer-project.test.ts)
for f in "${own[@]}"; do [ -f "$f" ] || die "$f is gone: update the list of files with brokers of their own"; done
log "the integration suite on a testcontainers broker (less ${#own[@]} files with brokers of their own)"
TOOLWIRE_TEST_BROKER=docker TESTCONTAINERS_RYUK_DISABLED=true npx vitest run --project integration $(printf -- '--exclude %s ' "${own[@]}")

log "the compose stack"
npx vitest run --project containers
log "done in $((SECONDS - start)) s"
