"""Checks the `bound` of `hyst-tui score --json` lines from a served model (check-served.sh,
check-vllm.sh): a line whose letter tokens were not all among the server's top K carries
`bound` (K, the unseen tokens, the bound, each option's range), every option probability lies
in its range, and a line without `bound` saw every letter token. Prints one line (exit 1 when a
line breaks this).

    python score-bounds.py SCORES.jsonl LABEL
"""
import json
import sys

path, label = sys.argv[1], sys.argv[2]
rows = [json.loads(line) for line in open(path)]
bounded, fixed, problems = 0, 0, []
for i, r in enumerate(rows, 1):
    unseen = [t["text"] for ts in r["letter_tokens"].values() for t in ts if t["prob"] == 0.0]
    b = r.get("bound")
    if b is None:
        if unseen:
            problems.append(f"line {i}: letter tokens {unseen} have probability 0 but no bound")
        continue
    bounded += 1
    fixed += b["pred_fixed"]
    if sorted(b["unseen"]) != sorted(unseen):
        problems.append(f"line {i}: bound lists {b['unseen']}, the zero tokens are {unseen}")
    for letter, p in r["probs"].items():
        if not b["probs_lo"][letter] - 1e-12 <= p <= b["probs_hi"][letter] + 1e-12:
            problems.append(f"line {i}: p({letter}) = {p} outside [{b['probs_lo'][letter]}, {b['probs_hi'][letter]}]")
if problems:
    print(f"FAIL  {label}: " + "; ".join(problems[:3]))
    sys.exit(1)
print(f"ok    {label}: {bounded}/{len(rows)} contexts carry a bound (top-K left a letter token unseen), "
      f"every option inside its range; prediction fixed under the bound in {fixed}/{bounded}")
