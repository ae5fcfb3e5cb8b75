#!/bin/sh
# Runs the service named by SERVICE (gateway, orchestrator, tool-executor, memory, approvals, cli).
set -eu
cd "$(dirname "$0")/.."

: "${SERVICE:?SERVICE must name a service: gateway, orchestrator, tool-executor, memory, approvals or cli}"
main="apps/${SERVICE}/dist/main.js"
if [ ! -f "$main" ]; then
  echo "docker-entrypoint: unknown SERVICE \"${SERVICE}\" (no ${main} in the image)" >&2
  exit 64
fi
exec node --enable-source-maps "$main" "$@"
