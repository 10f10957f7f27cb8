#!/usr/bin/env bash
# `npm test`: installs what is missing, builds, and runs every test (unit and integration against
# real processes: nats-server, the services and the gateway). Extra arguments go to jest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
# Chromium (Debian package): the /docs test opens the page in a real headless browser.
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "test: installing chromium from Debian (for the /docs browser test)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "test: /usr/bin/chromium is missing (the /docs browser test needs it); install it with: sudo apt-get install -y chromium" >&2
    exit 1
  fi
fi
cd "$root"
export PATH="/usr/sbin:$PATH" # Debian installs nats-server there
if [ -z "${MONGODB_URI:-}" ]; then
  echo "test: MONGODB_URI is unset: the MongoDB adapter's contract tests will not run (embedded only)" >&2
fi
exec npx jest --maxWorkers=2 "$@"
