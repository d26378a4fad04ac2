"""Benchmark: a full audit re-run with a warm embedding cache against a cold one.

The same audit (every suite, ``normtest.audit.run.run_audit``) of ``minilm-l6`` runs alternately
with an empty cache (cold: every vector computed) and with the cache the cold run just filled (warm:
every vector read back). Both run in one process after an untimed warm-up audit, so the corpora and
the surprisal model's code paths are loaded alike; each cold run gets a fresh cache folder
(``NORMTEST_CACHE_DIR``, so the surprisal model the text claim loads caches there too; its float32
weights folder is linked, not rebuilt). The adapter's in-memory prefix memo is cleared before every
run. The settings are scaled down (``--words`` etc.) so that five pairs of runs fit in a few
minutes; the ratio depends on them, since the statistics do not get cheaper when the vectors do.

Checked: the warm report equals the cold one (every verdict, estimate and interval). One more
warm run is profiled (cProfile) and the functions that dominate it are listed in the JSON.

Usage: ``python benchmarks/bench_audit_cache.py --out audit_cache.json [--repeats 5]
[--words 300] [--resamples 200] [--documents 4] [--sentences 60] [--threads 1]``.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import arguments, machine, set_threads, side_by_side, summary, write

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def fingerprint(report: Any) -> list[tuple[Any, ...]]:
    """What must not change between a cold and a warm run: every row's verdict and numbers."""
    return [(r.claim, tuple(sorted((r.variant or {}).items())), r.verdict.value,
             r.estimate, r.ci, r.p_adjusted) for r in report.results]


def top_functions(profile: cProfile.Profile, n: int) -> list[dict[str, Any]]:
    """The ``n`` functions with the most own time, with their cumulative time."""
    stats = pstats.Stats(profile)
    rows = []
    for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append({"function": f"{Path(file).name}:{line}({name})", "calls": calls,
                     "own_s": round(own, 3), "cumulative_s": round(cumulative, 3)})
    rows.sort(key=lambda r: -r["own_s"])
    return rows[:n]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and write the JSON figures."""
    parser = arguments(__doc__)
    parser.add_argument("--words", type=int, default=300, help="audit word sample size")
    parser.add_argument("--resamples", type=int, default=200, help="bootstrap resamples")
    parser.add_argument("--documents", type=int, default=4, help="CER documents")
    parser.add_argument("--sentences", type=int, default=60, help="text-claim sentences")
    args = parser.parse_args(argv)
    threads = set_threads(args.threads)

    from normtest.adapters.encoder import EncoderAdapter
    from normtest.audit.run import AuditSettings, run_audit
    from normtest.base.paths import default_cache_dir
    from normtest.models.cache.adapter import CachedAdapter
    from normtest.models.cache.embeddings import EmbeddingCache

    settings = AuditSettings(words=args.words, resamples=args.resamples,
                             documents=args.documents, sentences=args.sentences,
                             sentence_documents=max(2, args.sentences // 10))
    models = default_cache_dir() / "models"  # SmolLM2's float32 copy, reused
    adapter = EncoderAdapter.minilm_l6(progress=False)
    work = Path(tempfile.mkdtemp(prefix="normtest-bench-audit-"))
    roots: list[Path] = []
    reports: dict[str, list[Any]] = {"cold": [], "warm": []}

    def fresh_root() -> Path:
        root = work / f"cache-{len(roots)}"
        root.mkdir()
        if models.is_dir():
            (root / "models").symlink_to(models, target_is_directory=True)
        roots.append(root)
        return root

    def audit(root: Path) -> Any:
        os.environ["NORMTEST_CACHE_DIR"] = str(root)
        adapter.clear_prefix_memo()
        cache = EmbeddingCache(root)
        try:
            return run_audit(CachedAdapter(adapter, cache), settings=settings)
        finally:
            cache.close()

    def cold() -> None:
        reports["cold"].append(audit(fresh_root()))

    def warm() -> None:
        reports["warm"].append(audit(roots[-1]))

    previous = os.environ.get("NORMTEST_CACHE_DIR")
    try:
        audit(fresh_root())  # warm-up: imports, corpora, the surprisal model's first load
        a, b = side_by_side(warm, cold, args.repeats)
        profile = cProfile.Profile()
        profile.enable()
        audit(roots[-1])
        profile.disable()
    finally:
        if previous is None:
            os.environ.pop("NORMTEST_CACHE_DIR", None)
        else:
            os.environ["NORMTEST_CACHE_DIR"] = previous
        shutil.rmtree(work, ignore_errors=True)

    same = all(fingerprint(c) == fingerprint(w)
               for c, w in zip(reports["cold"], reports["warm"], strict=True))
    rows = len(reports["cold"][0].results)
    figures: dict[str, Any] = {
        "benchmark": "full audit re-run: warm embedding cache against a cold one",
        "model": "minilm-l6", "suite": "all",
        "settings": {"words": settings.words, "resamples": settings.resamples,
                     "documents": settings.documents, "sentences": settings.sentences,
                     "sentence_documents": settings.sentence_documents,
                     "scope": settings.scope},
        "result_rows": rows,
        **summary(a, b, "warm", "cold"),
        "warm_equals_cold": same,
        "warm_profile_top_own_time": top_functions(profile, 15),
    }
    figures["embedding_share_of_cold"] = 1 - figures["warm_median_s"] / figures["cold_median_s"]
    figures["machine"] = {**machine(), **threads}
    write(args.out, figures)
    return figures


if __name__ == "__main__":
    main()
