#!/usr/bin/env python3
"""Write a Hugging Face tokenizer.json built from a GGUF file's own tokenizer metadata.

Used to check llama.cpp's tokenization against the Hugging Face `tokenizers` library offline:
    python3 scripts/gguf-to-tokenizer-json.py MODEL.gguf OUT_DIR
    hyst-tui doctor --model KEY --hf-tokenizer OUT_DIR/tokenizer.json
Needs `pip install "transformers<5" gguf sentencepiece protobuf` (no torch: the metadata is read
with the `gguf` package and converted with transformers' GGUF tokenizer converter).
"""
import os
import sys

import transformers.modeling_gguf_pytorch_utils as gguf_utils
from transformers.integrations.ggml import convert_gguf_tokenizer


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    gguf_path, out_dir = sys.argv[1], sys.argv[2]
    # transformers only imports the gguf reader when torch is present; we need metadata only.
    gguf_utils.is_torch_available = lambda: True
    info = gguf_utils.load_gguf_checkpoint(gguf_path, return_tensors=False)
    arch = info["config"]["model_type"]
    tokenizer, _extra = convert_gguf_tokenizer(arch, info["tokenizer"])
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "tokenizer.json")
    tokenizer.save(out)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
