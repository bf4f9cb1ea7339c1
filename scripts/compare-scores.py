"""Compares two `hyst-tui score --json` outputs of the same conversations (check-served.sh,
check-vllm.sh): the largest |p_A - p_B| over every option, the predictions, the prompt hashes.

    python compare-scores.py A.jsonl B.jsonl TOLERANCE LABEL

Prints one verdict line (`ok` or `FAIL`); exit status 0 when the largest difference is within
TOLERANCE and every prediction is the same.
"""
import json
import sys

a, b, tol, label = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
ra = [json.loads(line) for line in open(a)]
rb = [json.loads(line) for line in open(b)]
if len(ra) != len(rb) or not ra:
    print(f"FAIL  {label}: {len(ra)} vs {len(rb)} scores")
    sys.exit(1)
worst, same_pred, same_prompt = 0.0, 0, 0
for x, y in zip(ra, rb):
    worst = max(worst, max(abs(x["probs"][k] - y["probs"][k]) for k in x["probs"]))
    same_pred += x["pred"] == y["pred"]
    same_prompt += x.get("prompt_hash") == y.get("prompt_hash")
ok = worst <= tol and same_pred == len(ra)
print(f"{'ok   ' if ok else 'FAIL '} {label}: {len(ra)} conversations, max |dp| {worst:.2e} (tolerance {tol:g}), "
      f"same prediction {same_pred}/{len(ra)}, same prompt hash {same_prompt}/{len(ra)}")
sys.exit(0 if ok else 1)
