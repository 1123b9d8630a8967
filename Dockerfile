# plumb: build with the full toolchain, run on a small image with git (the controller follows git remotes).
# Node 24 LTS: the supported runtime (Node 20.19+ still works from a checkout; see README "Install").
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bench ./bench
COPY schemas ./schemas
RUN npm run build && npm prune --omit=dev

FROM node:24-slim AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends git ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schemas ./schemas
COPY examples ./examples
RUN ln -s /app/dist/src/cli/main.js /usr/local/bin/plumb && chmod +x /app/dist/src/cli/main.js \
  && useradd --create-home --uid 10001 plumb && mkdir -p /work && chown plumb /work
USER plumb
WORKDIR /work
EXPOSE 9400
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:9400/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["plumb"]
# Follow PLUMB_GIT_REPO (set it, or override the command with `controller --dir /manifests ...`).
CMD ["controller", "--listen", "0.0.0.0:9400", "--workdir", "/work/checkout", "--drift-schedule", "*/10 * * * *"]
