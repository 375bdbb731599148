#!/usr/bin/env bash
# Every test: make sure PostgreSQL and Redis run on loopback, then run vitest once.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
exec npx vitest run "$@"
