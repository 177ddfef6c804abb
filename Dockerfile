# toolwire: a TrustGraph-compatible tool-service worker.
#   docker build -t toolwire:local .
#   docker run --rm toolwire:local --help
# Built and run in CI (npm run test:containers): the image, the compose stack, a tool call
# from the host through both, a stdio MCP server kept from the worker's secrets, and
# `docker stop` with requests in flight.
#
# Who runs as whom: the worker is uid 0 holding only CAP_SETUID, CAP_SETGID and CAP_KILL,
# with no_new_privs (the entrypoint drops the rest, whatever `docker run` gave; why uid 0:
# scripts/docker/toolwire-entrypoint.sh). The programs it starts (stdio MCP servers, slim)
# run as `tools`, uid and gid 10001, with no capabilities: they cannot read the worker's
# /proc/<pid>/environ, nor a secrets file of mode 0400 owned by uid 0. Set MCP_STDIO_UID and
# MCP_STDIO_GID (DIFY_SLIM_UID and _GID) to another user, or empty to keep the worker's.
# Run under another user (--user), the worker has no capabilities and cannot switch: empty
# them then, and know that its stdio servers can read its environment.

FROM node:20-slim AS build
WORKDIR /app
# build-ca.pem, when the build context has one: the CA of a TLS-inspecting proxy between the
# build and the npm registry (scripts/containers-ci.sh writes it from NODE_EXTRA_CA_CERTS).
# A certificate, not a secret; it stays in this stage.
COPY package.json package-lock.json build-ca.pe[m] ./
# --ignore-scripts: `prepare` would build before the sources are in; no dependency needs an
# install script. --omit=optional: the native pulsar-client is not used by --transport pulsar-ws.
RUN if [ -f build-ca.pem ]; then export NODE_EXTRA_CA_CERTS="$PWD/build-ca.pem"; fi \
 && npm ci --ignore-scripts --omit=optional --no-audit --no-fund \
 && rm -f build-ca.pem
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM node:20-slim
# The HTTP surface listens on loopback unless told otherwise: to publish it, set
# TOOLWIRE_HTTP_HOST=0.0.0.0 and TOOLWIRE_HTTP_TOKEN (without a token, /v1/ refuses callers
# beyond loopback anyway). The shutdown grace fits docker stop's default 10 s.
ENV NODE_ENV=production \
    TOOLWIRE_CONFIG_DIR=/app/config \
    TOOLWIRE_SHUTDOWN_GRACE_MS=8000 \
    MCP_STDIO_UID=10001 \
    MCP_STDIO_GID=10001 \
    DIFY_SLIM_UID=10001 \
    DIFY_SLIM_GID=10001
RUN groupadd --gid 10001 tools \
 && useradd --uid 10001 --gid tools --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin tools
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Default descriptors; docker-compose mounts ./config over them.
COPY config ./config
COPY scripts/docker/toolwire-entrypoint.sh /usr/local/bin/toolwire-entrypoint
USER 0:0
EXPOSE 8787
# Probes the surface from inside the container, so loopback is enough.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=5 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.TOOLWIRE_HTTP_PORT || 8787}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/toolwire-entrypoint"]
CMD ["run", "--transport", "pulsar-ws"]
