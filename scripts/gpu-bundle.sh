#!/usr/bin/env bash
# Builds the GPU check as one small archive to copy to a GPU node that has no network and no Rust
# (docs/guide/gpu.md): the CUDA binary for one architecture, stripped, with llama.cpp's libraries
# beside it; the node-side script (`gpu-check`, from scripts/gpu-node-check.sh) and its helpers;
# the `gguf` package and PyYAML as wheels; SmolLM2's tokenizer and chat template as a GGUF with no
# tensors. Not carried: the CUDA runtime and cuBLAS (~500 MB; the node has them, in a system CUDA
# or in its PyTorch environment's NVIDIA wheels — the search is gpu-check's). Runs here, on a
# login node or on any x86-64 Linux machine with this repository and cargo.
#
#   bash scripts/gpu-bundle.sh                # CUDA, CMAKE_CUDA_ARCHITECTURES=90 (H100, H200)
#   bash scripts/gpu-bundle.sh --arch 80      # another card (80: A100, 89: L4/RTX 40xx, 120: RTX 50xx)
#   bash scripts/gpu-bundle.sh --cpu          # the CPU build in the CUDA binary's place (the rehearsal)
#   --out DIR   where the bundle goes (default gpu-bundle/ in the repository, git-ignored)
#
# The CUDA build is scripts/check-cuda-build.sh's (its toolkit from PyPI's CUDA 13 wheels, its own
# target directory; the first build takes about an hour on 2 cores). At the end it prints the
# archive's size, which must stay under 60 MiB, and gpu-check's library search run against the
# toolkit's wheels laid out as in a Python environment (site-packages/nvidia/cu13/lib) with `ldd`
# of every file: every library must resolve.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=90
cpu=
out=gpu-bundle
limit_mib=60
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?--arch needs a value, e.g. 90}; shift 2 ;;
    --cpu) cpu=1; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu-bundle: unknown argument $1 (--arch N, --cpu, --out DIR)" >&2; exit 2 ;;
  esac
done
if ! command -v strip >/dev/null || ! command -v patchelf >/dev/null || ! command -v xz >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binutils patchelf xz-utils >/dev/null
  else
    echo "gpu-bundle: needs strip, patchelf and xz (apt-get install binutils patchelf xz-utils)" >&2
    exit 1
  fi
fi

# ---- the binary -----------------------------------------------------------------------------
if [ -n "$cpu" ]; then
  name=hyst-gpu-check-cpu
  echo "== build: the CPU binary (cargo build --release --locked)"
  cargo build --release --locked
  bin=${CARGO_TARGET_DIR:-target}/release/hyst-tui
else
  name=hyst-gpu-check-sm$arch
  echo "== build: the CUDA binary for sm_$arch (scripts/check-cuda-build.sh)"
  bin=$(bash scripts/check-cuda-build.sh --print-bin --arch "$arch")
fi
stage=$out/$name
rm -rf "$stage" "$out/$name.tar.xz"
mkdir -p "$stage/bin" "$stage/wheels"
cp -f "$bin" "$stage/bin/hyst-tui"
if [ -z "$cpu" ]; then
  # llama.cpp's shared libraries, under their SONAMEs, as check-cuda-build.sh placed them.
  for so in "$(dirname "$bin")"/lib*.so.[0-9]; do cp -fL "$so" "$stage/bin/"; done
fi
for f in "$stage"/bin/*; do
  strip --strip-unneeded "$f"
  # Only $ORIGIN: the build machine's toolkit path (on the libraries' RUNPATH) means nothing on
  # the node, and here it would hide a failing search.
  if [ -n "$(patchelf --print-rpath "$f" 2>/dev/null)" ]; then patchelf --set-rpath '$ORIGIN' "$f"; fi
done

# ---- what the node lacks: gguf and PyYAML (pinned, hashes checked), the tokenizer -------------
wheels=${HYST_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/hyst-tui}/tools/gguf-wheels
mkdir -p "$wheels"
req=$(mktemp)
trap 'rm -f "$req"' EXIT
cat > "$req" <<'REQ'
gguf==0.19.0 --hash=sha256:70bcd10edfe697fb2dad6e40af2234b9d8ece9a41a99761405121ebda1c3c1cd
pyyaml==6.0.3 --hash=sha256:ba1cc08a7ccde2d2ec775841541641e4548226580ab850948cbfda66a1befcdc
REQ
if [ "$(ls "$wheels"/*.whl 2>/dev/null | wc -l)" -lt 2 ]; then
  echo "== wheels: gguf 0.19.0 and PyYAML 6.0.3 (CPython 3.12, x86-64) into $wheels"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux2014_x86_64 \
    --require-hashes -r "$req" -d "$wheels"
fi
cp "$wheels"/*.whl "$stage/wheels/"
cp scripts/gpu-node-check.sh "$stage/gpu-check"
cp scripts/random-gguf.py scripts/gpu-check-summary.py "$stage/"
chmod +x "$stage/gpu-check" "$stage/random-gguf.py"
smollm=$(cargo run --release --locked --quiet -- models fetch smollm2-135m 2>/dev/null | awk '{print $2}')
[ -f "$smollm" ] || { echo "gpu-bundle: could not fetch smollm2-135m (its tokenizer goes into the bundle)" >&2; exit 1; }
HYST_GGUF_WHEELS=$stage/wheels python3 scripts/random-gguf.py --tokenizer-from "$smollm" --tokenizer-only \
  --out "$stage/tokenizer.gguf"
{
  echo "commit = $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src Cargo.toml Cargo.lock || echo '+changes')"
  echo "binary = $([ -n "$cpu" ] && echo "CPU build" || echo "CUDA 13, sm_$arch")"
  echo "built = $(date -u +%Y-%m-%d)"
} > "$stage/bundle.txt"

# ---- the archive ----------------------------------------------------------------------------
echo "== archive: $out/$name.tar.xz"
XZ_OPT="-6 -T0" tar -C "$out" -cJf "$out/$name.tar.xz" "$name"
size=$(stat -c %s "$out/$name.tar.xz")
echo "bundle: $stage, $(du -sb "$stage" | awk '{print $1}' | numfmt --to=iec-i --suffix=B) unpacked:"
(cd "$stage" && find . -type f -printf '%s %p\n' | sort -rn | awk '{printf "   %8.1f MiB  %s\n", $1 / 1048576, $2}')
echo "archive: $out/$name.tar.xz, $(numfmt --to=iec-i --suffix=B "$size") ($size bytes; the limit is $limit_mib MiB)"

# ---- ldd through the node's search -------------------------------------------------------------
if [ -z "$cpu" ]; then
  # The toolkit's wheels are installed as a Python environment installs them (nvidia/cu13/lib), so
  # putting their folder on sys.path is a Python environment laid out like the node's.
  tk_root=${HYST_CUDA_TOOLKIT_DIR:-$HOME/.cache/hyst-tui/cuda-13.0-wheels}
  echo "== gpu-check --check-libs, with $tk_root on python3's sys.path"
  (unset LD_LIBRARY_PATH CUDA_HOME CUDA_PATH; PYTHONPATH=$tk_root "$stage/gpu-check" --check-libs)
else
  "$stage/gpu-check" --check-libs
fi
if [ "$size" -gt $((limit_mib * 1024 * 1024)) ]; then
  echo "gpu-bundle: the archive is over $limit_mib MiB" >&2
  exit 1
fi
