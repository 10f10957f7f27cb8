#!/usr/bin/env bash
# `npm test`: installs what is missing, builds, and runs every test (unit and integration against
# real processes: nats-server, the services and the gateway). Extra arguments go to jest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Node 24 first on PATH for everything below (jest and the processes tests start with process.execPath).
source "$root/scripts/node-env.sh"
bash "$root/scripts/setup.sh"
# Chromium (Debian package) for the browser tests (/docs, reader pages, landing pages): installed
# when missing and running as root, else a loud failure with the command to run (@mailer/testing/browser).
node "$root/packages/testing/dist/browser.js"
cd "$root"
export PATH="/usr/sbin:$PATH" # Debian installs nats-server there
if [ -z "${MONGODB_URI:-}" ]; then
  echo "test: MONGODB_URI is unset: the MongoDB adapter's contract tests will not run (embedded only)" >&2
fi
exec npx jest --maxWorkers=2 "$@"
