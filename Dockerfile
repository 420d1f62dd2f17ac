# service-sandbox: local emulator of the payments and accounts API.
#
#   docker build -t service-sandbox:0.2.0 -t service-sandbox .     # the version tag the kits' Testcontainers modules default to
#   docker run -p 4010:4010 service-sandbox                                   # state in memory
#   docker run -p 4010:4010 -v sandbox-data:/data -e DB_PATH=/data/sandbox.db service-sandbox   # state kept
#   docker run --rm service-sandbox sign GET /v1/accounts                    # any sub-command (docs/cli.md)
#
# docs/docker.md: volumes, compose with a test runner, webhooks to the host with `listen`.
#
# Every flag has an environment variable (README "Configuration"): PORT, DB_PATH, SEED, CLOCK, WEBHOOK_URL,
# LOG_LEVEL, ADMIN_TOKEN, FIXTURES, ...

# ---- build stage: compilers for better-sqlite3's native addon live only here ----
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, so a source change does not rebuild better-sqlite3.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
COPY fixtures ./fixtures
# The shipped scenario files (docs/sessions.md#scenarios), found beside fixtures/.
COPY scenarios ./scenarios
# The OpenAPI examples (openapi/examples.json) are read when the document is first built.
COPY openapi ./openapi
# Then what the server never reads leaves the production node_modules (docs/docker.md#image-size): pdfjs's
# optional canvas package (rendering, never done: it only checks uploaded PDFs), pdfjs's other builds, viewer,
# types and source maps, and better-sqlite3's C sources and object files (its compiled addon stays).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@napi-rs \
      node_modules/pdfjs-dist/build node_modules/pdfjs-dist/web node_modules/pdfjs-dist/types node_modules/pdfjs-dist/image_decoders \
      node_modules/pdfjs-dist/legacy/web node_modules/pdfjs-dist/legacy/image_decoders \
 && find node_modules/pdfjs-dist/legacy/build -name '*.map' -o -name '*.min.mjs' -o -name 'pdf.sandbox*' | xargs rm -f \
 && mv node_modules/better-sqlite3/build/Release/better_sqlite3.node /tmp/ \
 && rm -rf node_modules/better-sqlite3/build node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && mkdir -p node_modules/better-sqlite3/build/Release && mv /tmp/better_sqlite3.node node_modules/better-sqlite3/build/Release/

# ---- runtime stage: node, the compiled server and production dependencies only ----
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4010
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/fixtures ./fixtures
COPY --from=build /app/scenarios ./scenarios
COPY --from=build /app/openapi ./openapi
# Runtime assets such as the dashboard's static files are read from src/ (src/emulator/dashboard).
COPY --from=build /app/src ./src
COPY --from=build /app/scripts/healthcheck.mjs ./scripts/healthcheck.mjs
# A database file given with DB_PATH=/data/sandbox.db survives container restarts on this volume.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
# The official image's unprivileged user (uid 1000).
USER node
EXPOSE 4010
# No curl in the slim image: node's own fetch checks the control plane's health route; a container that runs `listen`,
# `sign` or `check-receiver` serves nothing and is healthy (scripts/healthcheck.mjs, docs/docker.md#healthcheck).
# Podman without systemd never runs a HEALTHCHECK: the kits wait on an HTTP answer of /_emulator/health instead.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "scripts/healthcheck.mjs"]
# The CLI is the entry point: no arguments serves; `docker run --rm IMAGE sign ...`, `check-receiver ...` and
# `listen ...` run that sub-command (docs/cli.md).
ENTRYPOINT ["node", "--max-semi-space-size=4", "dist/service-sandbox.mjs"]
