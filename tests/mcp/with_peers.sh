#!/usr/bin/env bash
# Runs a command that needs the real MCP servers from npm: installs them first
# (scripts/install-mcp-peers), exits 77 (ctest: skipped) with the reason when it cannot,
# and gives server-memory a fresh graph file so every run starts from nothing.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/scripts/install-mcp-peers" || exit $?
export REINS_MCP_PEERS="$root/.cache/mcp-peers"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MEMORY_FILE_PATH="$tmp/memory.jsonl"
"$@"
