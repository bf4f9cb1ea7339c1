#!/usr/bin/env bash
# Builds llama.cpp's llama-server for the served-endpoint tests (tests/served.rs) and prints the
# path of the binary (idempotent: a binary already built is reused).
#
# The llama.cpp sources come from PyPI's llama-cpp-python source distribution, which vendors the
# whole of llama.cpp, tools/server included (the copy inside the llama-cpp-sys-2 crate lacks the
# server). The build uses the CPU kernel settings of the project's own llama.cpp build: no
# -march=native (GGML_NATIVE=OFF, so ggml's default AVX/AVX2/FMA/F16C/BMI2 set) and
# GGML_CPU_REPACK=OFF (.cargo/config.toml). Everything lives outside the repository:
#   $HYST_TOOLS_DIR (default <data dir>/tools, the data dir being $HYST_DATA_DIR, else
#   $XDG_DATA_HOME/hyst-tui, else ~/.local/share/hyst-tui).
set -euo pipefail
version=0.3.36
data_dir=${HYST_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/hyst-tui}
tools=${HYST_TOOLS_DIR:-$data_dir/tools}
root="$tools/llama-server-$version"
bin="$root/build/bin/llama-server"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
  echo "$bin"
  exit 0
fi
command -v cmake >/dev/null || { echo "error: cmake is needed (apt-get install cmake)" >&2; exit 1; }
mkdir -p "$root"
src="$root/llama_cpp_python-$version/vendor/llama.cpp"
if [ ! -f "$src/tools/server/server.cpp" ]; then
  echo "fetching llama-cpp-python==$version (source distribution) from PyPI" >&2
  python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
    "llama-cpp-python==$version" -d "$root/sdist" >&2
  tar xzf "$root/sdist/llama_cpp_python-$version.tar.gz" -C "$root"
fi
[ -f "$src/tools/server/server.cpp" ] || { echo "error: $src has no tools/server" >&2; exit 1; }
t0=$(date +%s)
echo "building llama-server from $src (a few minutes on 2 cores)" >&2
cmake -S "$src" -B "$root/build" -DCMAKE_BUILD_TYPE=Release \
  -DGGML_NATIVE=OFF -DGGML_CPU_REPACK=OFF \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF >"$root/cmake.log" 2>&1 \
  || { tail -20 "$root/cmake.log" >&2; echo "error: cmake configure failed (log: $root/cmake.log)" >&2; exit 1; }
cmake --build "$root/build" --target llama-server -j "$(nproc)" >"$root/build.log" 2>&1 \
  || { tail -20 "$root/build.log" >&2; echo "error: the llama-server build failed (log: $root/build.log)" >&2; exit 1; }
echo "llama-server built in $(( $(date +%s) - t0 )) s" >&2
echo "$bin"
