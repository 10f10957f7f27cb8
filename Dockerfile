# syntax=docker/dockerfile:1
# The one Dockerfile of every workload: the build argument WORKSPACE names the workload's folder
# (gateway, services/subscriber, ...). Built with the repository root as context (the npm
# workspaces share the root lockfile):
#   docker build --build-arg WORKSPACE=services/segment -t mailer-segment .
# skaffold.yaml builds the seven images from it; charts/test checks the wiring.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG WORKSPACE

FROM ${NODE_IMAGE} AS build
ARG WORKSPACE
# No default: an image of nothing in particular would be a mistake.
RUN test -n "${WORKSPACE}" || { echo 'build with --build-arg WORKSPACE=<gateway|services/NAME>' >&2; exit 1; }
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
# Manifests before sources, so the dependency layer is reused until a manifest changes. Only
# the workspaces this image compiles are present; npm ci installs their dependencies.
COPY package.json package-lock.json tsconfig.base.json ./
COPY proto/package.json proto/
COPY packages/telemetry/package.json packages/telemetry/
COPY packages/kit/package.json packages/kit/
COPY packages/store/package.json packages/store/
COPY packages/nats/package.json packages/nats/
COPY packages/tokens/package.json packages/tokens/
COPY packages/reports/package.json packages/reports/
COPY packages/outbound/package.json packages/outbound/
COPY packages/templates/package.json packages/templates/
COPY ${WORKSPACE}/package.json ${WORKSPACE}/
# No install scripts: nothing at runtime depends on one (dev tools' postinstall downloads are skipped).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY proto/ proto/
COPY packages/telemetry/ packages/telemetry/
COPY packages/kit/ packages/kit/
COPY packages/store/ packages/store/
COPY packages/nats/ packages/nats/
COPY packages/tokens/ packages/tokens/
COPY packages/reports/ packages/reports/
COPY packages/outbound/ packages/outbound/
COPY packages/templates/ packages/templates/
COPY ${WORKSPACE}/ ${WORKSPACE}/
# tsc -b builds the workspace's project references (proto, packages) first.
RUN npx tsc -b ${WORKSPACE} \
 && npm prune --omit=dev --ignore-scripts

FROM ${NODE_IMAGE} AS runtime
ARG WORKSPACE
ENV NODE_ENV=production
WORKDIR /app
# A fixed numeric uid, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
RUN groupadd --system --gid 10001 mailer \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin mailer
# Root-owned and read-only to the process; the chart also mounts the root filesystem read-only
# with an emptyDir at /tmp. Workspace folders keep their package.json (and any nested
# node_modules) so the @mailer/* links in node_modules resolve.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/proto/ proto/
COPY --from=build /app/packages/ packages/
COPY --from=build /app/${WORKSPACE}/ ${WORKSPACE}/
USER 10001:10001
# The workload's folder as working directory, so the exec-form CMD (node as PID 1, receiving
# SIGTERM) is the same for every image.
WORKDIR /app/${WORKSPACE}
CMD ["node", "--enable-source-maps", "dist/main.js"]
