#!/usr/bin/env bash
# Fetch, start, stop a real Apache Pulsar standalone broker without Docker.
#   scripts/pulsar-broker.sh fetch|start [--keep-data]|stop|restart|status|url
#
# The server distribution comes from Maven Central (through `mvn`, so a configured mirror is
# honoured; plain curl when mvn is missing) and is cached outside the repo in
# ${TOOLWIRE_CACHE:-~/.cache/toolwire}. Everything binds to 127.0.0.1; the JVM is sized for
# tests (1 GB heap, 512 MB direct memory, 2 cores).
#
# `start` is idempotent and safe to run concurrently (a lock serialises starters). It prints
# one line on stdout: `started <pulsar-url> <admin-url>` when it started the broker, or
# `reused <pulsar-url> <admin-url>` when one already answered; logs go to stderr.
# `stop` stops only a broker this script started (its pid file), never another one.
# `start` begins from empty data (topics, subscriptions and messages of an earlier run are
# wiped); `start --keep-data` (or TOOLWIRE_PULSAR_KEEP_DATA=1) starts on the data a stopped
# broker left, so persistent topics keep their messages; `restart` is stop + start --keep-data.
#
# A second broker beside the first needs its own TOOLWIRE_PULSAR_RUN, TOOLWIRE_PULSAR_PORT and
# TOOLWIRE_PULSAR_WEB_PORT. Nothing else collides: metadata (RocksDB) and bookie data live in
# the run dir, the bookie takes a free port (kept across restarts, it is in the bookie's
# cookie), and ZooKeeper, stream storage and the functions worker are not started.
#
# Environment: PULSAR_VERSION (3.3.6), TOOLWIRE_CACHE, TOOLWIRE_PULSAR_RUN (run dir: conf,
# data, logs, pid), TOOLWIRE_PULSAR_PORT (6650), TOOLWIRE_PULSAR_WEB_PORT (8080),
# TOOLWIRE_PULSAR_KEEP_DATA (0; 1 = start --keep-data), TOOLWIRE_PULSAR_CONF_EXTRA (standalone.conf
# lines appended last, for an experiment), PULSAR_START_TIMEOUT (seconds, 180), PULSAR_JAVA_HOME, PULSAR_MEM, PULSAR_GC,
# MAVEN_CENTRAL_URL (for the curl fallback), PULSAR_ADMIN_TOKEN (sent by the readiness check, for
# a broker with authentication on).
set -euo pipefail

PULSAR_VERSION="${PULSAR_VERSION:-3.3.6}"
CACHE="${TOOLWIRE_CACHE:-$HOME/.cache/toolwire}"
HOME_DIR="$CACHE/apache-pulsar-$PULSAR_VERSION"
RUN_DIR="${TOOLWIRE_PULSAR_RUN:-$CACHE/pulsar-run}"
BROKER_PORT="${TOOLWIRE_PULSAR_PORT:-6650}"
WEB_PORT="${TOOLWIRE_PULSAR_WEB_PORT:-8080}"
ADMIN="http://127.0.0.1:$WEB_PORT"
SERVICE="pulsar://127.0.0.1:$BROKER_PORT"
START_TIMEOUT="${PULSAR_START_TIMEOUT:-180}"
KEEP_DATA="${TOOLWIRE_PULSAR_KEEP_DATA:-0}"

log() { echo "[pulsar-broker] $*" >&2; }
die() { log "$*"; exit 1; }

# A broker with authentication on answers the check only with a token: PULSAR_ADMIN_TOKEN.
ready() {
  local auth=()
  if [ -n "${PULSAR_ADMIN_TOKEN:-}" ]; then auth=(-H "Authorization: Bearer $PULSAR_ADMIN_TOKEN"); fi
  curl -fsS --max-time 2 "${auth[@]}" "$ADMIN/admin/v2/clusters" 2>/dev/null | grep -q '"'
}

# Hold an exclusive lock on the run dir for the rest of the calling command.
lock() {
  mkdir -p "$RUN_DIR"
  exec 9>"$RUN_DIR/lock"
  if ! flock -w "$((START_TIMEOUT + 60))" 9; then die "could not lock $RUN_DIR/lock"; fi
}

fetch() {
  if [ -x "$HOME_DIR/bin/pulsar" ]; then return 0; fi
  mkdir -p "$CACHE/dl"
  exec 8>"$CACHE/dl/.lock"
  flock -w 1800 8 || die "could not lock $CACHE/dl/.lock"
  if [ -x "$HOME_DIR/bin/pulsar" ]; then return 0; fi
  local name="pulsar-server-distribution-$PULSAR_VERSION-bin.tar.gz"
  local tgz="$CACHE/dl/$name"
  if [ ! -s "$tgz" ]; then
    log "downloading Pulsar $PULSAR_VERSION from Maven Central (about 210 MB, once)"
    if command -v mvn >/dev/null 2>&1; then
      mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
        "-Dartifact=org.apache.pulsar:pulsar-server-distribution:$PULSAR_VERSION:tar.gz:bin" \
        "-DoutputDirectory=$CACHE/dl" >&2 || die "mvn could not fetch the Pulsar distribution"
    else
      local base="${MAVEN_CENTRAL_URL:-https://repo1.maven.org/maven2}/org/apache/pulsar/pulsar-server-distribution/$PULSAR_VERSION"
      curl -fSL --retry 3 -o "$tgz.part" "$base/$name" || die "curl could not fetch $base/$name"
      local want; want=$(curl -fsSL --retry 3 "$base/$name.sha1" | cut -c1-40) || die "no checksum at $base/$name.sha1"
      local got; got=$(sha1sum "$tgz.part" | cut -c1-40)
      [ "$want" = "$got" ] || { rm -f "$tgz.part"; die "checksum mismatch for $name (want $want, got $got)"; }
      mv "$tgz.part" "$tgz"
    fi
  fi
  log "unpacking $tgz"
  local tmp="$CACHE/.unpack.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  tar -xzf "$tgz" -C "$tmp" || { rm -rf "$tmp"; die "could not unpack $tgz (delete it to download again)"; }
  rm -rf "$HOME_DIR"
  mv "$tmp/apache-pulsar-$PULSAR_VERSION" "$HOME_DIR"
  rm -rf "$tmp"
}

java_home() {
  # The broker runs on 17 (and 21); prefer a 17 JDK when several are installed.
  if [ -n "${PULSAR_JAVA_HOME:-}" ]; then echo "$PULSAR_JAVA_HOME"; return; fi
  local d
  for d in /usr/lib/jvm/java-17-openjdk-amd64 /usr/lib/jvm/java-17-openjdk-arm64 /usr/lib/jvm/temurin-17-jdk-amd64 \
           /usr/lib/jvm/java-21-openjdk-amd64 /usr/lib/jvm/java-21-openjdk-arm64 /usr/lib/jvm/temurin-21-jdk-amd64; do
    [ -x "$d/bin/java" ] && { echo "$d"; return; }
  done
  echo "${JAVA_HOME:-}"
}

# The pid in the pid file, if that process is still a Pulsar started from our distribution.
our_pid() {
  [ -f "$RUN_DIR/pid" ] || return 1
  local pid; pid=$(cat "$RUN_DIR/pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$HOME_DIR" || return 1
  echo "$pid"
}

start() {
  lock
  if ready; then log "a broker already answers at $ADMIN"; echo "reused $SERVICE $ADMIN"; return 0; fi
  fetch
  local jh; jh=$(java_home)
  if [ -z "$jh" ] && ! command -v java >/dev/null 2>&1; then die "no Java found: install a JDK 17 or set PULSAR_JAVA_HOME"; fi
  if our_pid >/dev/null; then
    log "a broker started here earlier is running but not answering; stopping it first"
    stop_pid
  fi
  local wipe=(--wipe-data)
  if [ "$KEEP_DATA" = 1 ]; then wipe=(); else rm -rf "$RUN_DIR/data"; fi
  mkdir -p "$RUN_DIR/logs" "$RUN_DIR/data"
  local conf="$RUN_DIR/standalone.conf"
  cp "$HOME_DIR/conf/standalone.conf" "$conf"
  {
    echo
    echo "# --- toolwire: loopback only, small, quorum 1 ---"
    echo "bindAddress=127.0.0.1"
    echo "advertisedAddress=127.0.0.1"
    echo "listeningInterface=lo"
    echo "brokerServicePort=$BROKER_PORT"
    echo "webServicePort=$WEB_PORT"
    echo "webSocketServiceEnabled=true"
    echo "bookkeeperNumberOfChannelsPerBookie=4"
    echo "managedLedgerDefaultEnsembleSize=1"
    echo "managedLedgerDefaultWriteQuorum=1"
    echo "managedLedgerDefaultAckQuorum=1"
    echo "managedLedgerCacheSizeMB=64"
    echo "dbStorage_writeCacheMaxSizeMb=32"
    echo "dbStorage_readAheadCacheMaxSizeMb=32"
    echo "# Request/response traffic: hand a caught-up consumer new entries at once instead of"
    echo "# polling every 10 ms (docs/benchmarks.md, \"Latency of one call\")."
    echo "managedLedgerNewEntriesCheckDelayInMillis=0"
    echo "# The embedded bookie writes a lone entry's journal at once instead of waiting up to"
    echo "# journalMaxGroupWaitMSec for company; under load the queue is never empty and writes"
    echo "# still group. Durability is unchanged (journalSyncData decides that)."
    echo "journalFlushWhenQueueEmpty=true"
    # Extra standalone.conf lines for an experiment (one key=value per line), last so they win.
    if [ -n "${TOOLWIRE_PULSAR_CONF_EXTRA:-}" ]; then printf '%s\n' "$TOOLWIRE_PULSAR_CONF_EXTRA"; fi
  } >>"$conf"
  log "starting Pulsar $PULSAR_VERSION on 127.0.0.1:$BROKER_PORT (admin $ADMIN)$([ "$KEEP_DATA" = 1 ] && echo ', keeping its data'), logs in $RUN_DIR/logs"
  (
    cd "$RUN_DIR"
    export JAVA_HOME="$jh" PATH="${jh:+$jh/bin:}$PATH"
    export PULSAR_STANDALONE_CONF="$conf" PULSAR_LOG_DIR="$RUN_DIR/logs"
    export PULSAR_MEM="${PULSAR_MEM:--Xms256m -Xmx1g -XX:MaxDirectMemorySize=512m}"
    export PULSAR_GC="${PULSAR_GC:--XX:+UseG1GC -XX:ParallelGCThreads=2 -XX:ConcGCThreads=1}"
    export PULSAR_EXTRA_OPTS="${PULSAR_EXTRA_OPTS:--XX:ActiveProcessorCount=2 -Dpulsar.allocator.exit_on_oom=true}"
    # setsid: the broker outlives this shell and the test run that asked for it.
    # bin/pulsar runs from $HOME_DIR, so every data dir is given in full: the default
    # metadata dir (data/metadata) would be the distribution's, shared by (and wiped for)
    # every broker started from it.
    nohup setsid "$HOME_DIR/bin/pulsar" standalone -nfw -nss "${wipe[@]}" \
      --metadata-dir "$RUN_DIR/data/metadata" \
      --bookkeeper-dir "$RUN_DIR/data/bookkeeper" --zookeeper-dir "$RUN_DIR/data/zookeeper" \
      >"$RUN_DIR/logs/stdout.log" 2>&1 </dev/null 8>&- 9>&- &
    echo $! >"$RUN_DIR/pid"
  )
  local deadline=$((SECONDS + START_TIMEOUT))
  until ready; do
    if ! kill -0 "$(cat "$RUN_DIR/pid")" 2>/dev/null; then
      log "the broker exited during start; last log lines:"; tail -n 40 "$RUN_DIR/logs/stdout.log" >&2; return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      log "not ready after ${START_TIMEOUT}s; last log lines:"; tail -n 40 "$RUN_DIR/logs/stdout.log" >&2
      stop_pid; return 1
    fi
    sleep 1
  done
  log "ready after $((SECONDS + START_TIMEOUT - deadline))s"
  echo "started $SERVICE $ADMIN"
}

stop_pid() {
  local pid
  if ! pid=$(our_pid); then rm -f "$RUN_DIR/pid"; return 0; fi
  kill "$pid" 2>/dev/null || true
  local i
  for i in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then log "broker $pid did not stop in 30s; killing it"; kill -9 "$pid" 2>/dev/null || true; fi
  rm -f "$RUN_DIR/pid"
}

stop() {
  lock
  if ! our_pid >/dev/null; then
    rm -f "$RUN_DIR/pid"
    log "no broker started by this script is running (run dir $RUN_DIR)"
    return 0
  fi
  stop_pid
  log "stopped"
}

case "${1:-}" in
  fetch) fetch ;;
  start)
    case "${2:-}" in
      "") ;;
      --keep-data) KEEP_DATA=1 ;;
      *) echo "usage: $0 start [--keep-data]" >&2; exit 2 ;;
    esac
    start ;;
  stop) stop ;;
  restart) stop; KEEP_DATA=1; start ;;
  status) if ready; then echo "ready $SERVICE $ADMIN"; else echo "down $SERVICE $ADMIN"; exit 1; fi ;;
  url) echo "$SERVICE $ADMIN" ;;
  *) echo "usage: $0 fetch|start [--keep-data]|stop|restart|status|url" >&2; exit 2 ;;
esac
