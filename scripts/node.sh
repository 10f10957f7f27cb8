#!/usr/bin/env bash
# `bash scripts/node.sh ARGS`: runs node ARGS on Node 24 (see node-env.sh). The bench scripts use it.
set -euo pipefail
source "$(dirname "$0")/node-env.sh"
exec node "$@"
