#!/usr/bin/env python3
"""The GPU check's own helper (scripts/gpu-node-check.sh), standard library only.

    gpu-check-summary.py conversations
        prints the conversations whose letters are compared between the GPU and the CPU (JSONL)
    gpu-check-summary.py summary WORK OUT BIG SMALL SECONDS BUNDLE_INFO
        reads what the check's commands printed (WORK/doctor.txt, engine.txt, batch.txt,
        letters-gpu.txt, letters-cpu.txt) and writes OUT/summary.md and OUT/summary.json
"""
import json
import pathlib
import re
import sys

# The paper plan's prompt tokens: `hyst-tui --batch --plan paper --dry-run` with the paper's
# datasets (docs/guide/cluster.md).
PAPER_PLAN_TOKENS = 51_000_000

QUESTIONS = [
    ("Which planet is closest to the Sun?", ["Venus", "Mercury", "Mars", "Earth"]),
    ("What is 7 times 8?", ["54", "56", "64", "58", "48"]),
    ("Which gas do plants take in for photosynthesis?", ["Oxygen", "Nitrogen", "Carbon dioxide"]),
    ("Which of these is a prime number?", ["21", "27", "29", "33"]),
    ("In which year did the first crewed Moon landing happen?", ["1965", "1969", "1972", "1961", "1975", "1958"]),
    ("What is the chemical symbol of sodium?", ["S", "So", "Na", "Sd"]),
]


def conversations():
    for i, (question, options) in enumerate(QUESTIONS):
        letters = [chr(ord("A") + k) for k in range(len(options))]
        body = "\n".join(f"{l}. {o}" for l, o in zip(letters, options))
        messages = [
            {"role": "system", "content": "Answer the multiple-choice question with the letter of one option."},
            {"role": "user", "content": f"{question}\n{body}\nReply with one letter."},
        ]
        if i % 2:  # half of them with pressure, so that the history is not always short
            messages += [
                {"role": "assistant", "content": f"The answer is {letters[1]}."},
                {"role": "user", "content": f"I am quite sure it is {letters[0]}. Think again and answer with one letter."},
            ]
        print(json.dumps({"messages": messages, "letters": ",".join(letters)}))


def grab(pattern, text, cast=str):
    m = re.search(pattern, text, re.M)
    return cast(m.group(1)) if m else None


def scores(path):
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def summary(work, out, big, small, seconds, bundle_info):
    work, out = pathlib.Path(work), pathlib.Path(out)
    read = lambda name: (work / name).read_text() if (work / name).exists() else ""
    doctor, engine, batch = read("doctor.txt"), read("engine.txt"), read("batch.txt")
    info = {}
    bundle = pathlib.Path(bundle_info)
    if bundle.exists():
        for line in bundle.read_text().splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                info[k.strip()] = v.strip()
    log = (out / "gpu-check.log").read_text() if (out / "gpu-check.log").exists() else ""
    s = {
        "bundle": info,
        "gpu": grab(r"^GPU: (.+)$", log),
        "seconds": int(seconds),
        "shapes": {"bench": big, "exactness": small},
        "doctor": {
            "scoring_device": grab(r"scoring on (.+?)(?:; provenance|$)", doctor),
            "offload": grab(r"offload: (.+)$", doctor),
            "failed_checks": re.findall(r"^FAIL\s+(.+)$", doctor, re.M),
            "prefix_reuse": "bit-identical" if "bit-identical to scratch" in doctor
            else grab(r"prefix-reused scores differ.*?max \|Δp\| ([0-9.e+-]+)", doctor),
            "packing": "bit-identical" if "bit-identical to one per call" in doctor
            else grab(r"packed scores differ.*?max \|Δp\| ([0-9.e+-]+)", doctor),
        },
        "engine": {
            "raw_pp512_tok_s": grab(r"raw llama.cpp prompt decode: 512 tokens in one call = ([0-9.]+) tok/s", engine, float),
            "reuse_tok_s": grab(r"engine, prefix reuse: .* = ([0-9.]+) tok/s", engine, float),
            "scratch_tok_s": grab(r"engine, from scratch: .* = ([0-9.]+) tok/s", engine, float),
            "engine_vs_raw": grab(r"ratio engine/raw throughput:\s+([0-9.]+)", engine, float),
            "reuse_speedup_wall": grab(r"ratio wall time scratch/reuse: ([0-9.]+)", engine, float),
            "reuse_bit_identical": grab(r"scores bit-identical with and without reuse: (\S+)", engine),
        },
        "batch": {"modes": {}, "curve": []},
    }
    for m in re.finditer(r"^(sequential \(pack 1\)|packed \(pack \d+\)|from scratch)\s+([0-9.]+)s\s+(\d+)\s+([0-9.]+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)%\s+([0-9.]+)s\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", batch, re.M):
        g = m.groups()
        s["batch"]["modes"][g[0]] = {"seconds": float(g[1]), "tokens": int(g[2]), "tok_s": float(g[3]),
                                      "tok_per_call": float(g[5]), "e2e_vs_matched_raw": float(g[8])}
    s["batch"]["packed_vs_sequential"] = grab(r"packed vs sequential (\S+);", batch)
    s["batch"]["sequential_vs_scratch"] = grab(r"sequential vs from scratch (\S+)$", batch)
    for p, per_call, tps, _, same in re.findall(r"^\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(identical|DIFFERENT)$", batch, re.M):
        s["batch"]["curve"].append({"pack": int(p), "tok_per_call": float(per_call), "tok_s": float(tps), "scores": same})
    curve = s["batch"]["curve"]
    if curve and all(c["scores"] == "identical" for c in curve):
        best = max(c["tok_s"] for c in curve)
        pick = min(c["pack"] for c in curve if c["tok_s"] >= 0.95 * best)
        s["batch"]["pack_pick"] = pick
        s["batch"]["pack_pick_tok_s"] = next(c["tok_s"] for c in curve if c["pack"] == pick)
    elif curve:
        s["batch"]["pack_pick"] = 1
        s["batch"]["pack_pick_tok_s"] = curve[0]["tok_s"]
    gpu, cpu = scores(work / "letters-gpu.txt"), scores(work / "letters-cpu.txt")
    letters = {"conversations": len(gpu)}
    if gpu and len(gpu) == len(cpu):
        letters["max_abs_dp"] = max(abs(a["probs"][k] - b["probs"][k]) for a, b in zip(gpu, cpu) for k in a["probs"])
        letters["same_prediction"] = sum(a["pred"] == b["pred"] for a, b in zip(gpu, cpu))
        letters["prompt_hashes_equal"] = all(a["prompt_hash"] == b["prompt_hash"] for a, b in zip(gpu, cpu))
    s["letters_gpu_vs_cpu"] = letters
    rate = s["batch"].get("pack_pick_tok_s") or s["engine"]["reuse_tok_s"]
    if rate:
        s["paper_plan"] = {"prompt_tokens": PAPER_PLAN_TOKENS, "tok_s": rate, "hours": PAPER_PLAN_TOKENS / rate / 3600}

    (out / "summary.json").write_text(json.dumps(s, indent=2) + "\n")
    fmt = lambda x, d=1: "?" if x is None else (f"{x:.{d}f}" if isinstance(x, float) else str(x))
    e, b, d = s["engine"], s["batch"], s["doctor"]
    rows = [
        ("bundle", " ".join(f"{k} {v}" for k, v in info.items()) or "(none: run from a clone)"),
        ("GPU", s["gpu"] or "?"),
        ("scoring device (doctor)", d["scoring_device"] or "?"),
        ("doctor checks failed", "; ".join(d["failed_checks"]) or "none"),
        (f"raw llama.cpp pp512 ({big}), tok/s", fmt(e["raw_pp512_tok_s"])),
        (f"engine with prefix reuse ({big}), tok/s", fmt(e["reuse_tok_s"])),
        ("engine / raw prompt rate", fmt(e["engine_vs_raw"], 3)),
        ("wall time scratch / reuse", fmt(e["reuse_speedup_wall"], 2)),
    ]
    for label, m in b["modes"].items():
        rows.append((f"bench batch, {label}: tok/s, tok/call, e2e/matched raw",
                     f"{fmt(m['tok_s'])}, {fmt(m['tok_per_call'])}, {fmt(m['e2e_vs_matched_raw'], 3)}"))
    for c in curve:
        rows.append((f"curve, pack {c['pack']}: tok/call, tok/s (scores)", f"{c['tok_per_call']:.0f}, {c['tok_s']:.1f} ({c['scores']})"))
    if "pack_pick" in b:
        rows.append(("--pack picked (fewest sequences within 5% of the best)", str(b["pack_pick"])))
    rows += [
        (f"reuse vs scratch ({small}, doctor; {big}, bench batch)", f"{d['prefix_reuse'] or '?'}; {b.get('sequential_vs_scratch') or '?'}"),
        (f"packed vs one prompt per call ({small}, doctor; {big}, bench batch)", f"{d['packing'] or '?'}; {b.get('packed_vs_sequential') or '?'}"),
        (f"letters GPU vs CPU ({small}): max |Δp|, same prediction",
         f"{letters['max_abs_dp']:.3g}, {letters['same_prediction']}/{letters['conversations']}" if "max_abs_dp" in letters else "?"),
    ]
    if "paper_plan" in s:
        p = s["paper_plan"]
        rows.append((f"paper plan ({p['prompt_tokens'] / 1e6:.1f}M prompt tokens) on one device, {big}",
                     f"{p['hours']:.1f} h at {p['tok_s']:.0f} tok/s"))
    rows.append(("check's wall time", f"{int(seconds)} s"))
    md = ["| measure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    (out / "summary.md").write_text("\n".join(md) + "\n")
    print("\n== gpu-check summary (" + str(out / "summary.md") + ")")
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{w}}  {v}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["conversations"]:
        conversations()
    elif sys.argv[1:2] == ["summary"] and len(sys.argv) == 8:
        summary(*sys.argv[2:])
    else:
        sys.exit(__doc__)
