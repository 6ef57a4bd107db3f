#!/usr/bin/env bash
# Runs openai_sdk_test.mjs: installs the official SDK first (scripts/install-sdk-clients)
# and exits 77 (ctest: skipped) with the reason when it cannot.
# Usage: openai_sdk_test.sh REINS_BINARY SOURCE_DIR
set -uo pipefail
"$2/scripts/install-sdk-clients" || exit $?
exec node "$2/tests/server/openai_sdk_test.mjs" "$1" "$2" "$2/.cache/sdk-clients"
