#!/usr/bin/env python3
"""Write a Llama-architecture GGUF with random weights in the shape of a real model.

    python3 scripts/random-gguf.py --tokenizer-from TOKENIZER.gguf --shape 8b --out random-8b.gguf
    python3 scripts/random-gguf.py --tokenizer-from SmolLM2.gguf --tokenizer-only --out tokenizer.gguf

The weights are random (normal, sd 0.02; the norms 1), so the model's letters mean nothing, but
its size, its layers and the work llama.cpp does per token are those of the shape: speed figures,
CPU-vs-GPU and packed-vs-sequential comparisons hold on it as on real weights. The tokenizer and
chat template are copied from another GGUF's metadata (every `tokenizer.*` key), so prompts and
the option letters tokenize exactly as in that model; the vocabulary size follows the tokenizer.
`--tokenizer-only` writes just those keys, no tensors: the GPU bundle carries SmolLM2's tokenizer
that way (1.6 MB instead of the 98 MB model).

Shapes (width, layers, heads, KV heads, FFN width):
    8b      4096, 32, 32, 8, 14336   Llama-3.1-8B's body
    1b      2048, 16, 32, 8, 8192    Llama-3.2-1B's body
    small   512, 8, 8, 2, 1536       for rehearsals on a CPU
    tiny    64, 2, 4, 2, 128         for tests
    or five numbers W,L,H,KV,FFN.

Needs numpy and the `gguf` package: the wheels in $HYST_GGUF_WHEELS (or ./wheels beside this
script, as in a GPU bundle) are put on the import path as they are when there are some (gguf is
pure Python; PyYAML, which it imports, falls back to its pure-Python code), else the installed
gguf is used.
"""
import argparse
import glob
import os
import sys
import time

SHAPES = {
    "8b": (4096, 32, 32, 8, 14336),
    "1b": (2048, 16, 32, 8, 8192),
    "small": (512, 8, 8, 2, 1536),
    "tiny": (64, 2, 4, 2, 128),
}
WEIGHT_SD = 0.02
# Random values are drawn once into a pool and copied out of it at a random offset per tensor:
# drawing 7 billion normals would take minutes, copying them takes seconds. The pool's length is
# not a multiple of any width, so neighbouring rows do not repeat.
POOL_LEN = (1 << 24) + 4099


def import_gguf():
    """The bundled wheels when there are some (a GPU bundle's, pinned), else the installed gguf."""
    here = os.path.dirname(os.path.abspath(__file__))
    folder = os.environ.get("HYST_GGUF_WHEELS") or os.path.join(here, "wheels")
    wheels = sorted(glob.glob(os.path.join(folder, "*.whl")))
    sys.path[:0] = wheels
    try:
        import gguf
    except ImportError:
        sys.exit(f"random-gguf: the gguf package is not installed and {folder} holds no wheels "
                 "(pip install gguf, or scripts/gpu-bundle.sh fetches them)")
    return gguf


def parse_shape(text):
    if text in SHAPES:
        return SHAPES[text]
    try:
        dims = tuple(int(x) for x in text.split(","))
    except ValueError:
        dims = ()
    if len(dims) != 5 or min(dims) <= 0:
        sys.exit(f"random-gguf: --shape {text!r}: one of {', '.join(SHAPES)} or W,L,H,KV,FFN")
    width, _, heads, kv_heads, _ = dims
    if width % heads or heads % kv_heads:
        sys.exit(f"random-gguf: --shape {text!r}: heads must divide the width and KV heads the heads")
    return dims


def tokenizer_fields(gguf, path):
    """Every tokenizer.* key of a GGUF, as (name, value, type, array item type)."""
    try:
        reader = gguf.GGUFReader(path)
    except Exception as e:  # noqa: BLE001 - any failure to read is one message
        sys.exit(f"random-gguf: cannot read {path} as GGUF: {e}")
    out = []
    for name, field in reader.fields.items():
        if not name.startswith("tokenizer."):
            continue
        kind = gguf.GGUFValueType(field.types[0])
        item = gguf.GGUFValueType(field.types[-1]) if kind == gguf.GGUFValueType.ARRAY else None
        out.append((name, field.contents(), kind, item))
    if not any(name == "tokenizer.ggml.tokens" for name, *_ in out):
        sys.exit(f"random-gguf: {path} has no tokenizer (no tokenizer.ggml.tokens)")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokenizer-from", required=True, metavar="GGUF")
    ap.add_argument("--out", required=True, metavar="FILE")
    ap.add_argument("--shape", default="tiny", help="8b, 1b, small, tiny or W,L,H,KV,FFN")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tokenizer-only", action="store_true", help="write the tokenizer keys only")
    args = ap.parse_args()

    gguf = import_gguf()
    import numpy as np

    fields = tokenizer_fields(gguf, args.tokenizer_from)
    vocab = len(next(value for name, value, *_ in fields if name == "tokenizer.ggml.tokens"))
    tmp = args.out + ".part"
    writer = gguf.GGUFWriter(tmp, "llama")
    for name, value, kind, item in fields:
        writer.add_key_value(name, value, kind, sub_type=item)

    tensors = []
    if not args.tokenizer_only:
        width, layers, heads, kv_heads, ffn = parse_shape(args.shape)
        head_dim = width // heads
        writer.add_name(f"random weights, shape {args.shape}")
        writer.add_block_count(layers)
        writer.add_context_length(131072)
        writer.add_embedding_length(width)
        writer.add_feed_forward_length(ffn)
        writer.add_head_count(heads)
        writer.add_head_count_kv(kv_heads)
        writer.add_rope_dimension_count(head_dim)
        writer.add_rope_freq_base(500000.0)
        writer.add_layer_norm_rms_eps(1e-5)
        writer.add_vocab_size(vocab)
        writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
        # numpy shapes (rows = outputs); GGUF stores them reversed.
        tensors.append(("token_embd.weight", (vocab, width), np.float16))
        for i in range(layers):
            b = f"blk.{i}."
            tensors += [
                (b + "attn_norm.weight", (width,), np.float32),
                (b + "attn_q.weight", (width, width), np.float16),
                (b + "attn_k.weight", (kv_heads * head_dim, width), np.float16),
                (b + "attn_v.weight", (kv_heads * head_dim, width), np.float16),
                (b + "attn_output.weight", (width, width), np.float16),
                (b + "ffn_norm.weight", (width,), np.float32),
                (b + "ffn_gate.weight", (ffn, width), np.float16),
                (b + "ffn_up.weight", (ffn, width), np.float16),
                (b + "ffn_down.weight", (width, ffn), np.float16),
            ]
        tensors += [("output_norm.weight", (width,), np.float32),
                    ("output.weight", (vocab, width), np.float16)]
    for name, shape, dtype in tensors:
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        writer.add_tensor_info(name, shape, np.dtype(dtype), nbytes)

    start = time.time()
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    if tensors:
        rng = np.random.default_rng(args.seed)
        pool = (rng.standard_normal(POOL_LEN, dtype=np.float32) * WEIGHT_SD).astype(np.float16)
        for name, shape, dtype in tensors:
            n = int(np.prod(shape))
            if dtype == np.float32:  # a norm's weights: ones, as at initialisation
                writer.write_tensor_data(np.ones(shape, dtype=np.float32))
                continue
            data = np.empty(n, dtype=np.float16)
            at, filled = int(rng.integers(POOL_LEN)), 0
            while filled < n:
                take = min(n - filled, POOL_LEN - at)
                data[filled:filled + take] = pool[at:at + take]
                filled += take
                at = 0
            writer.write_tensor_data(data.reshape(shape))
    writer.close()
    os.replace(tmp, args.out)
    size = os.path.getsize(args.out)
    params = sum(int(np.prod(s)) for _, s, _ in tensors)
    what = "tokenizer only" if args.tokenizer_only else f"shape {args.shape}, {params / 1e9:.2f}B parameters"
    print(f"random-gguf: wrote {args.out} ({what}, vocabulary {vocab}, {size / 2**20:.1f} MiB, "
          f"{time.time() - start:.1f} s)")


if __name__ == "__main__":
    main()
