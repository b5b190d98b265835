# Engram as a container image: `engram serve` on port 8787, the memory in the /data volume.
# The image must never serve an open memory: it listens on all interfaces with --auth
# token, and `engram serve` itself refuses --host 0.0.0.0 with --auth none. Run it with a
# volume, or the memory goes with the container (docs/container.md):
#
#   docker build -t engram .            (podman: podman build --format docker -t engram .,
#                                        or podman drops the HEALTHCHECK)
#   docker run -d --name engram -v engram-data:/data -p 127.0.0.1:8787:8787 engram
#   docker exec engram engram token create --user ada --label laptop
#
# Three stages: `build` compiles dist/ (TypeScript, the CLI bundle, the web UI) with every
# dev dependency; `deps` installs the production dependencies alone, without the optional
# better-sqlite3: on Node 22.16 and newer Engram keeps its SQLite file through the
# built-in node:sqlite, so the image holds no native addon and its build no compiler. The
# runtime image takes dist/ and those node_modules: no sources, no dev dependency.
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
ENV npm_config_update_notifier=false
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the build needs no native addon, and `prepare` would build before the sources are here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim AS deps
ENV npm_config_update_notifier=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
  && node -e "require('node:sqlite')" \
  && npm cache clean --force

FROM node:${NODE_VERSION}-bookworm-slim
# The MCP Registry's name for Engram: package.json's mcpName (npm run test:container checks they agree).
ARG ENGRAM_MCP_NAME=io.github.engram-mcp/engram
LABEL org.opencontainers.image.title="Engram" \
  org.opencontainers.image.description="One persistent memory for every LLM assistant you use, through three MCP tools." \
  org.opencontainers.image.licenses="MIT" \
  org.opencontainers.image.documentation="https://github.com/engram-mcp/engram/blob/main/docs/container.md" \
  org.opencontainers.image.source="https://github.com/engram-mcp/engram" \
  io.modelcontextprotocol.server.name="${ENGRAM_MCP_NAME}"
# The memory is /data/engram/memory.db and the optional config file /data/engram/config.json,
# Engram's default paths under these two folders: so ENGRAM_DATABASE_URL alone moves the
# memory to PostgreSQL (ENGRAM_DB would have to be unset), and ENGRAM_DB or ENGRAM_CONFIG
# still name other files.
# `engram serve` is configured by variables (a flag after the image's name wins over its
# variable): on all interfaces of the container, port 8787, with tokens. ENGRAM_AUTH=oauth
# with ENGRAM_PUBLIC_URL serves ChatGPT and Claude (compose.yaml); ENGRAM_AUTH=none is
# refused on 0.0.0.0.
ENV NODE_ENV=production \
  XDG_DATA_HOME=/data \
  XDG_CONFIG_HOME=/data \
  ENGRAM_HOST=0.0.0.0 \
  ENGRAM_PORT=8787 \
  ENGRAM_AUTH=token
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/package.json ./
COPY --from=build /src/spec ./spec
COPY --from=build /src/dist ./dist
# /data belongs to the user Engram runs as (node, 1000:1000 in the node images); a new
# named volume takes this owner, a bind-mounted folder must be given it (chown 1000:1000).
RUN chmod +x dist/cli/main.js \
  && ln -s /app/dist/cli/main.js /usr/local/bin/engram \
  && mkdir -p /data \
  && chown 1000:1000 /data \
  && chmod 0700 /data
USER 1000:1000
VOLUME /data
EXPOSE 8787
# /healthz answers without a token, on the port Engram listens on (ENGRAM_PORT; a --port
# given in the command is not seen here: set the variable instead).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.ENGRAM_PORT || 8787}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["engram"]
CMD ["serve"]
