"""Writes a Hugging Face model folder of float32 weights from a GGUF file, for serving the same
weights with vLLM (scripts/check-vllm.sh). Quantized tensors are dequantized by transformers'
GGUF loader; the tokenizer and chat template come from the GGUF's metadata.

    python gguf-to-hf-f32.py MODEL.gguf OUT_DIR
"""
import os
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

src, out = sys.argv[1], sys.argv[2]
folder, name = os.path.split(os.path.abspath(src))
tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
# The loaded model remembers it came from a quantized file; transformers refuses to save such a
# model unless that record is dropped (the weights are plain float32 tensors by now).
model.hf_quantizer = None
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.save_pretrained(out)
tokenizer.save_pretrained(out)
print(f"{out}: {sum(p.numel() for p in model.parameters())} float32 parameters")
