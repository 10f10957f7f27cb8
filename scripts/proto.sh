#!/usr/bin/env bash
# Lints proto/ with buf and regenerates the committed ts-proto output (proto/src/gen).
# Usage: scripts/proto.sh [OUTPUT_BASE]   (OUTPUT_BASE lets the staleness test generate elsewhere)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$root/node_modules/.bin:$PATH"
cd "$root/proto"
buf lint
if [ $# -ge 1 ]; then
  buf generate --output "$1"
else
  rm -rf src/gen
  buf generate
fi
