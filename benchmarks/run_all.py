"""Run the issue #9 benchmarks and write one JSON file of figures (``make bench``).

Each benchmark runs in its own process (``benchmarks/bench_*.py``, each also runnable alone) and
writes its figures next to the combined file (``<out stem>/<name>.json``); the combined file
holds them all, the machine, and a ``ratios`` table: every ratio with its target and whether it
was met. Ratios are medians of at least five runs measured side by side in one process.

Usage: ``python benchmarks/run_all.py --out reports/bench.json [--only prefixes words ...]
[--merge]`` (``--merge`` keeps the figures of the benchmarks not run from the existing file).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import load_average, machine, write

HERE = Path(__file__).resolve().parent
#: name → script (in the order they run: the model benchmarks first, memory last)
BENCHMARKS = {
    "prefixes": "bench_prefixes.py",
    "words": "bench_words.py",
    "audit_cache": "bench_audit_cache.py",
    "bootstrap": "bench_bootstrap.py",
    "corpus_counting": "bench_corpus_counting.py",
    "ray": "bench_ray.py",
    "layers": "bench_layers.py",
    "overhead": "bench_overhead.py",
    "robustness": "bench_robustness.py",
    "memory": "bench_memory.py",
}


def ratios(found: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every ratio with its target (None: reported, no target) and whether it was met."""
    table: dict[str, dict[str, Any]] = {}

    def add(name: str, value: float, target: float | None, what: str, **extra: Any) -> None:
        met = None if target is None else bool(value >= target)
        table[name] = {"ratio": round(value, 3), "target": target, "met": met, "what": what,
                       **extra}

    if "prefixes" in found:
        dec = found["prefixes"]["decoder"]
        equal = dec["equal_within_1e-4"]
        add("decoder_prefixes_eos", dec["eos"]["speedup"], 5.0,
            "smollm2-135m eos of every prefix: one pass per document vs one pass per prefix",
            equal_within_1e_4=equal)
        add("decoder_prefixes_mean", dec["mean"]["speedup"], 5.0,
            "smollm2-135m mean of every prefix: one pass + cumulative sums vs one pass per "
            "prefix", equal_within_1e_4=equal)
        if "five_poolings" in dec:
            add("decoder_prefixes_five_poolings", dec["five_poolings"]["speedup"], None,
                "eos, last, mean, sqrt_n, sum of every prefix (one pass shared) vs per prefix")
        if "encoder" in found["prefixes"]:
            enc = found["prefixes"]["encoder"]
            add("encoder_prefixes_batched", enc["speedup"], None,
                "minilm-l6 prefixes of all documents batched by length vs one pass per prefix",
                max_abs_diff=enc["max_abs_diff"])
    if "words" in found:
        w = found["words"]
        add("words_vs_sentence_transformers", w["speedup_vs_st_best"], 1.0,
            f"minilm-l6 word vectors, {w['words']} words: normtest vs sentence-transformers "
            f"encode at its faster batch size ({w['st_best_batch_size']})")
        add("words_vs_per_word_reference", w["speedup_vs_per_word"], None,
            "batched word extraction vs normtest's per-word reference path")
    if "audit_cache" in found:
        a = found["audit_cache"]
        add("audit_warm_vs_cold", a["speedup"], 20.0,
            "full minilm-l6 audit re-run with a warm embedding cache vs a cold one",
            warm_equals_cold=a["warm_equals_cold"])
    if "bootstrap" in found:
        b = found["bootstrap"]
        add("bootstrap_vs_scipy", b["speedup"], 3.0,
            f"Spearman bootstrap on {b['n']} points, B = {b['resamples']}: normtest vs "
            "scipy.stats.bootstrap", intervals_agree=b["intervals_agree"])
        if "variants" in b:
            v = b["variants"]
            add("bootstrap_shared_draws", v["speedup"], None,
                "the variants of one Spearman claim: shared draws and shared ranks vs each "
                "variant from scratch")
    if "ray" in found:
        r = found["ray"]
        add("ray_overhead_words", 1 / r["ray_overhead"], None,
            f"minilm-l6 word extraction, {r['words']} words, cold cache: local vs Ray with one "
            "worker (below 1: Ray's cost of starting actors and loading the model in each)")
        add("ray_words_2_vs_1", r["ray_two_vs_one"], None,
            "the same extraction on Ray with two workers vs one (2 CPUs)")
    if "corpus_counting" in found:
        c = found["corpus_counting"]
        what = (f"counting {c['tokens']:,} tokens ({c['corpus_bytes']:,} bytes) for 5,000 "
                "sample words: 2 workers vs 1")
        add("corpus_counting_local_2_vs_1", c["speedup_local"], 1.6,
            what + " (local processes)", same_counts=c["same_counts"])
        add("corpus_counting_ray_2_vs_1", c["speedup_ray"], 1.6, what + " (Ray tasks)",
            same_counts=c["same_counts"])
        table["corpus_counting_peak_memory"] = {
            "peak_tree_rss_mib": {k: round(v, 1) for k, v in c["peak_tree_rss_mib"].items()},
            "corpus_mib": round(c["corpus_bytes"] / 2**20, 1), "target": None, "met": None,
            "what": "peak resident memory of the counting process tree against the corpus size"}
    if "layers" in found:
        lay = found["layers"]
        for name in ("minilm-l6", "smollm2-135m"):
            if name in lay:
                m = lay[name]
                add(f"layer_profile_extraction_{name}", 1 / m["profile_over_last"], None,
                    f"{name}: vectors of the last layer vs of all {m['representations']} "
                    "representations kept from the same passes (the passes run once; the "
                    "rest — rows copied out, prefixes pooled — is per layer)",
                    identical=m["identical"], forward_passes=m["forward_passes_profile"])
                add(f"layer_profile_keeping_{name}", m["per_layer_over_profile"], None,
                    f"{name}: every layer with one pass per layer vs kept from one pass")
        if "audit_minilm_quick" in lay:
            add("layer_profile_audit_minilm", 1 / lay["audit_minilm_quick"]["profile_over_last"],
                None, "minilm-l6 audit of four claims (quick, cold): last layer vs --layers all "
                "(below 1: the statistics and report of eight times the rows)")
    if "overhead" in found:
        o = found["overhead"]

        def at_most(name: str, value: float, target: float, what: str) -> None:
            table[name] = {"ratio": round(value, 3), "target": target,
                           "met": bool(value <= target), "what": what}

        what = (f"a cold {o['model']} audit (load, measure, render; no embedding cache) over "
                "the bare forward passes of exactly its inputs (at most the target), ")
        at_most("audit_overhead", o["overhead_ratio"], o["target"],
                what + "the sentences' surprisal read from its store (every audit but the first)")
        at_most("audit_overhead_first", o["overhead_ratio_first"], o["target"],
                what + "the surprisal store empty (the first audit on a machine)")
        at_most("audit_bootstrap_share", o["bootstrap_share"], o["bootstrap_target"],
                "seconds in the bootstraps over the seconds of the bare forward passes, the same "
                "audit")
        if "render" in o:
            at_most("report_render_seconds", o["render"]["write_renderings_s"],
                    o["render_target_s"], "seconds to write report.json, .md and .html of the "
                    f"same audit ({o['render']['figures']} figures; not a ratio)")
    if "robustness" in found:
        r = found["robustness"]
        for name, target, what in (
                ("robustness_added", 0.5, "the robustness of every line (its specifications "
                 "re-decided)"),
                ("controls_added", None, "the positive and negative controls of every line"),
                ("robustness_and_controls_added", None, "both (the default audit)")):
            value = r["both_added" if name.startswith("robustness_and") else name]
            table[name] = {
                "ratio": value, "target": target,
                "met": None if target is None else bool(value <= target),
                "what": f"seconds {what} add to the default minilm-l6 audit (warm embedding "
                        "cache, in one process), as a share of it (at most the target)",
                "verdicts_unchanged": r["verdicts_unchanged"]}
        if "fresh_processes" in r:
            table["robustness_and_controls_added_command"] = {
                "ratio": round(r["fresh_processes"]["added"], 3), "target": None, "met": None,
                "what": "the same share for whole `normtest audit` commands in fresh processes"}
    if "memory" in found:
        m = found["memory"]
        table["memory_glove_20000_words"] = {
            "peak_rss_mib": round(m["peak_rss_mib"], 1), "target": None, "met": None,
            "what": f"peak resident memory of a {m['words_asked']}-word glove-6b-50d audit"}
    return table


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the chosen benchmarks and write the combined JSON figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/bench.json"))
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), default=None,
                        help="run only these benchmarks")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other benchmarks' figures from an existing --out file")
    args = parser.parse_args(argv)
    chosen = args.only or list(BENCHMARKS)
    parts = args.out.with_suffix("")
    parts.mkdir(parents=True, exist_ok=True)
    found: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    finished: dict[str, str] = {}
    if args.merge and args.out.is_file():
        earlier = json.loads(args.out.read_text(encoding="utf-8"))
        found.update(earlier.get("benchmarks", {}))
        seconds.update(earlier.get("seconds", {}))
        finished.update(earlier.get("finished", {}))
    load_before = load_average()
    for name in (n for n in BENCHMARKS if n in chosen):
        out = parts / f"{name}.json"
        print(f"[bench] {name} …", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(HERE / BENCHMARKS[name]), "--out", str(out)],
                       check=True, stdout=subprocess.DEVNULL)
        seconds[name] = round(time.perf_counter() - t0, 1)
        finished[name] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        found[name] = json.loads(out.read_text(encoding="utf-8"))
    figures: dict[str, Any] = {
        "issue": "#9 fast audits, proven with side-by-side ratios",
        "ratios": ratios(found),
        "seconds": seconds,
        "finished": finished,
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "machine": machine(),
        "benchmarks": found,
    }
    write(args.out, figures, show=figures["ratios"])
    return figures


if __name__ == "__main__":
    main()
