# toolwire: a TrustGraph-compatible tool-service worker.
#   docker build -t toolwire:local .
#   docker run --rm toolwire:local --help
# Untested here (no Docker engine on the build machines); see docker-compose.yml.

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are in; no dependency needs an
# install script. --omit=optional: the native pulsar-client is not used by --transport pulsar-ws.
RUN npm ci --ignore-scripts --omit=optional --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production \
    TOOLWIRE_CONFIG_DIR=/app/config \
    TOOLWIRE_HTTP_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Default descriptors; docker-compose mounts ./config over them.
COPY config ./config
USER node
EXPOSE 8787
ENTRYPOINT ["node", "bin/toolwire.js"]
CMD ["run", "--transport", "pulsar-ws"]
