# syntax=docker/dockerfile:1
# The dxs image: the compiled build (TypeScript → dist/, the web application) and production dependencies
# only, on Node 24 LTS (slim), run as the unprivileged `node` user. The command is `dxs start all|api|worker|graphql`.

FROM node:24-slim AS build
WORKDIR /app
RUN npm install --global --no-audit --no-fund pnpm@10.34.8
COPY . .
# Everything to build, then the build, then only what production needs (development dependencies pruned).
RUN pnpm install --frozen-lockfile \
  && node tooling/build/build.mjs \
  && CI=true pnpm install --frozen-lockfile --prod --offline \
  && rm -rf .tools **/.turbo

FROM node:24-slim
ENV NODE_ENV=production \
  DATA_DIR=/data \
  HOST=0.0.0.0 \
  PORT=8080 \
  LOG_FORMAT=json
WORKDIR /app
COPY --from=build --chown=node:node /app /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", "apps/cli/dist/main.js"]
CMD ["start", "all"]
