# An offline stand-in for node:20-slim, built only where that image cannot be pulled
# (scripts/docker-images.sh): Debian bookworm with this machine's Node 20 and npm copied in,
# where the official image unpacks its Node tarball: /usr/local/bin/node and npm under
# /usr/local/lib/node_modules, and a `node` user (uid 1000) as in the official image.
FROM debian:bookworm-slim
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
ENV NODE_VERSION=20
CMD ["node"]
