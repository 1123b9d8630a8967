# plumb: build with the full toolchain, run on a small image with git (the controller follows git remotes).
# Node 24 LTS: the supported runtime (Node 20.19+ still works from a checkout; see README "Install").
# BASE: any Debian image with Node 24 and npm; CI builds an equivalent one from Debian's packages
# (scripts/image-test.sh) because it cannot pull from Docker Hub.
ARG BASE=node:24-slim

FROM ${BASE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
# Everything `npm run build` reads (test/shipping/dockerfile-copy.test.ts checks this list).
COPY tsconfig.json tsconfig.build.json tsconfig.page.json ./
COPY src ./src
COPY bench ./bench
COPY scripts ./scripts
COPY schemas ./schemas
RUN npm run build && npm prune --omit=dev

FROM ${BASE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schemas ./schemas
COPY --from=build /app/scripts/image-healthcheck.mjs ./healthcheck.mjs
COPY examples ./examples
RUN ln -s /app/dist/src/cli/main.js /usr/local/bin/plumb && chmod +x /app/dist/src/cli/main.js \
  && useradd --create-home --uid 10001 plumb && mkdir -p /work && chown plumb /work
# Numeric, so Kubernetes' runAsNonRoot can check it without reading /etc/passwd.
USER 10001
WORKDIR /work
EXPOSE 9400
# Probes the address the controller was started with (its --listen), whatever the command line.
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 CMD ["node", "/app/healthcheck.mjs"]
ENTRYPOINT ["plumb"]
# Follow PLUMB_GIT_REPO (set it, or override the command with `controller --dir /manifests ...`).
# It listens on every interface, so it needs PLUMB_STATUS_TOKEN (or --status-token-file).
CMD ["controller", "--listen", "0.0.0.0:9400", "--workdir", "/work/checkout", "--drift-schedule", "*/10 * * * *"]
