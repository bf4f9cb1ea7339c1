#!/usr/bin/env python3
"""Independent check of `hyst-tui score`: recompute the protocol's option probabilities with
llama-cpp-python (a separate binding of llama.cpp) from the rendered prompt hyst-tui reports,
and print the largest difference.

    pip install llama-cpp-python        # builds llama.cpp from source (slow on 2 cores)
    python3 scripts/check-against-llama-cpp-python.py MODEL.gguf CONVERSATIONS.jsonl MODEL_KEY

CONVERSATIONS.jsonl is the input format of `hyst-tui score --messages` (one conversation per line).
Set HYST_BIN to the hyst-tui binary (default: target/release/hyst-tui).
"""
import json
import math
import os
import subprocess
import sys

from llama_cpp import Llama


def protocol_probs(logits, letters, tokenize):
    m = max(logits)
    lz = m + math.log(sum(math.exp(x - m) for x in logits))
    scores = {}
    for letter in letters:
        ids = set()
        for s in (letter, " " + letter):
            t = tokenize(s)
            if len(t) == 1:
                ids.add(t[0])
        ps = [math.exp(logits[i] - lz) for i in sorted(ids)]
        scores[letter] = math.log(sum(ps) / len(ps))
    z = max(scores.values())
    big_z = z + math.log(sum(math.exp(v - z) for v in scores.values()))
    return {k: math.exp(v - big_z) for k, v in scores.items()}


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    model_path, conv_file, key = sys.argv[1:]
    binary = os.environ.get("HYST_BIN", "target/release/hyst-tui")
    lines = subprocess.run(
        [binary, "--no-cache", "score", "--model", key, "--messages", conv_file, "--json"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    llm = Llama(model_path=model_path, n_ctx=8192, n_batch=512, logits_all=True, verbose=False, flash_attn=False)
    worst = 0.0
    for i, line in enumerate(lines):
        ours = json.loads(line)
        toks = llm.tokenize(ours["rendered_prompt"].encode(), add_bos=False, special=True)
        llm.reset()
        llm.eval(toks)
        theirs = protocol_probs(
            list(llm.scores[len(toks) - 1]), list(ours["probs"]),
            lambda s: llm.tokenize(s.encode(), add_bos=False, special=False),
        )
        d = max(abs(theirs[k] - ours["probs"][k]) for k in theirs)
        worst = max(worst, d)
        print(f"conversation {i + 1}: {len(toks)} tokens (hyst-tui {ours['prompt_tokens']}), "
              f"max |dp| = {d:.2e}, pred {max(theirs, key=lambda k: (theirs[k], -ord(k)))} vs {ours['pred']}")
    print(f"largest difference over {len(lines)} conversations: {worst:.3e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
