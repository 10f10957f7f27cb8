#!/usr/bin/env bash
# `npm run up`: installs what is missing, builds, then runs nats-server, every service and the
# gateway as separate processes on embedded storage under .data/ (see scripts/run-local.js).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Refuse at once when a runner already uses the data directory (before installing and building).
node "$root/scripts/run-local.js" --check
bash "$root/scripts/setup.sh"
exec node "$root/scripts/run-local.js"
