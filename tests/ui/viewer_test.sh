#!/usr/bin/env bash
# Runs viewer_test.mjs: installs puppeteer-core and axe-core first
# (scripts/install-browser-tools) and exits 77 (ctest: skipped) with the reason when it
# cannot, or when there is no chromium.
# Usage: viewer_test.sh REINS_BINARY SOURCE_DIR OUT_DIR
set -uo pipefail
browser=$(command -v chromium || command -v chromium-browser) || { echo "SKIP: no chromium (scripts/install-deps installs it)"; exit 77; }
"$2/scripts/install-browser-tools" || exit $?
CHROMIUM="$browser" exec node "$2/tests/ui/viewer_test.mjs" "$1" "$2" "$2/.cache/browser-tools" "$3"
