#!/usr/bin/env bash
# `npm run up`: installs what is missing, builds, then runs nats-server, every service and the
# gateway as separate processes on embedded storage under .data/ (see scripts/run-local.js).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Node 24 first on PATH (installed into .tools/node when the machine's node is older): the runner and
# every process it starts run on it.
source "$root/scripts/node-env.sh"
# Refuse at once when a runner already uses the data directory (before installing and building).
node "$root/scripts/run-local.js" --check
bash "$root/scripts/setup.sh"
exec node "$root/scripts/run-local.js"
