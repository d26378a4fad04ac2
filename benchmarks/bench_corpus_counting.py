"""Benchmark: corpus counting in parallel blocks, two workers against one, locally and on Ray.

A corpus of at least ``--tokens`` tokens (default 20 million) is generated once, untimed: the
paragraphs of the Lee corpus and of the Wikipedia sample bundled with gensim (about 540,000
tokens), shuffled with a seeded generator and repeated into ``--files`` plain text files under a
temporary folder (paragraphs separated by blank lines). It is then counted for the default sample
vocabulary (``default_word_sample(size=5000, seed=0)``) by
:func:`normtest.data.information.scaled.count_corpus` with the local executor on 1 and 2 worker
processes and on Ray with 1 and 2 workers — each run in a fresh process, the four in turn
(local 1, local 2, Ray 1, Ray 2), ``--repeats`` rounds. Timed: the counting call alone (for
Ray, after the cluster has started: its start is reported apart). Every run must give the same
counts (a digest of the merged arrays is compared).

Memory: each run samples the resident memory of its whole process tree (the counting process,
its worker processes, and for Ray the cluster's processes) every 0.1 s; the JSON holds the peak of
the sum, the peak of the counting process itself (``ru_maxrss``), the peak of the largest process
below it (a worker, or for Ray a cluster process) and the counting process's resident memory
before counting (imports, the sample), against the corpus's size in bytes.

Usage: ``python benchmarks/bench_corpus_counting.py --out bench.json [--tokens 20000000]
[--files 40] [--repeats 1] [--keep DIR]``. A run of 20 million tokens takes about a minute on
one worker, so the default is one round (the ratio of single runs, not medians of five).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import arguments, load_average, machine, write

RUNS = (("local", 1), ("local", 2), ("ray", 1), ("ray", 2))


def generate(folder: Path, tokens: int, files: int, seed: int = 0) -> dict[str, Any]:
    """Write a corpus of at least ``tokens`` tokens into ``files`` text files (untimed)."""
    from normtest.data.information.corpus_counting import tokenize
    from normtest.data.information.texts import lee_texts, wiki_articles

    paragraphs = [t.text for t in lee_texts()]
    paragraphs += [p for a in wiki_articles() for p in a.text.split("\n") if p.strip()]
    pool_tokens = sum(len(tokenize(p)) for p in paragraphs)
    rounds = -(-tokens // pool_tokens)
    rng = random.Random(seed)
    order = [p for _ in range(rounds) for p in rng.sample(paragraphs, len(paragraphs))]
    per_file = -(-len(order) // files)
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        chunk = order[i * per_file : (i + 1) * per_file]
        (folder / f"part{i:03d}.txt").write_text("\n\n".join(chunk) + "\n", encoding="utf-8")
    size = sum(f.stat().st_size for f in folder.glob("*.txt"))
    return {"pool_paragraphs": len(paragraphs), "pool_tokens": pool_tokens, "rounds": rounds,
            "files": files, "bytes": size, "tokens_planned": pool_tokens * rounds}


def _tree_rss(root: int) -> tuple[int, int]:
    """Resident bytes of ``root`` and every process below it (from /proc), and of the largest
    process below it."""
    parent: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            parent[int(entry)] = int(fields[1])
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, largest, todo, seen = 0, 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += rss.get(pid, 0)
        if pid != root:
            largest = max(largest, rss.get(pid, 0))
        todo.extend(p for p, pp in parent.items() if pp == pid)
    return total, largest


class Sampler(threading.Thread):
    """Samples the process tree's resident memory every ``every`` seconds; keeps the peak."""

    def __init__(self, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.every, self._halt = every, threading.Event()
        self.peak = self.peak_child = 0

    def run(self) -> None:
        while not self._halt.is_set():
            total, child = _tree_rss(os.getpid())
            self.peak, self.peak_child = max(self.peak, total), max(self.peak_child, child)
            self._halt.wait(self.every)

    def stop(self) -> tuple[int, int]:
        self._halt.set()
        self.join()
        return self.peak, self.peak_child


def one(corpus: Path, executor: str, workers: int) -> dict[str, Any]:
    """Count the corpus once (in this process) and return the figures."""
    import numpy as np

    from normtest.data.information.readers import corpus_files
    from normtest.data.information.samples import default_word_sample
    from normtest.data.information.scaled import count_corpus

    words = sorted(set(default_word_sample(size=5000, seed=0)))
    files = corpus_files(corpus)
    before = _tree_rss(os.getpid())[0]
    sampler = Sampler()
    sampler.start()
    start_s = 0.0
    if executor == "ray":
        from normtest.models.ray import connect

        t0 = time.perf_counter()
        connect(None, workers)
        start_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    counts = count_corpus(files, words, executor=executor, workers=workers)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak_tree, peak_child = sampler.stop()
    digest = hashlib.sha256()
    for a in (counts.unigram_counts, counts.marginals, counts.cooccurrence.indptr,
              counts.cooccurrence.indices.astype(np.int64), counts.cooccurrence.data):
        digest.update(np.ascontiguousarray(a).tobytes())
    digest.update("\n".join(counts.vocabulary).encode("utf-8"))
    kib = 1024
    return {
        "executor": executor, "workers": workers, "wall_s": wall, "driver_cpu_s": cpu,
        "cluster_start_s": start_s, "tokens": counts.n_tokens,
        "tokens_per_s": counts.n_tokens / wall, "types": len(counts.vocabulary),
        "rows": len(counts.rows), "nnz": int(counts.cooccurrence.nnz),
        "documents": counts.n_documents, "digest": digest.hexdigest(),
        "rss_before_mib": before / kib**2,
        "peak_tree_rss_mib": peak_tree / kib**2,
        "peak_driver_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / kib,
        "peak_largest_child_rss_mib": peak_child / kib**2,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Generate the corpus, run the four configurations in turn, write the JSON figures."""
    parser = arguments(__doc__, repeats=False)
    parser.add_argument("--tokens", type=int, default=20_000_000)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=1, help="rounds of the four runs")
    parser.add_argument("--keep", type=Path, default=None,
                        help="generate the corpus here (and keep it) instead of a temporary "
                        "folder; an existing corpus there is reused")
    parser.add_argument("--one", nargs=3, metavar=("CORPUS", "EXECUTOR", "WORKERS"),
                        help=argparse_suppress())
    args = parser.parse_args(argv)
    if args.one:
        figures = one(Path(args.one[0]), args.one[1], int(args.one[2]))
        print(json.dumps(figures))
        return figures

    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="normtest-corpus-") as tmp:
        folder = args.keep or Path(tmp) / "corpus"
        t0 = time.perf_counter()
        marker = folder / "corpus.json"
        if marker.is_file():
            corpus = json.loads(marker.read_text(encoding="utf-8"))
        else:
            corpus = generate(folder, args.tokens, args.files)
            marker.write_text(json.dumps(corpus), encoding="utf-8")
        corpus["untimed_generate_s"] = time.perf_counter() - t0
        runs: dict[str, list[dict[str, Any]]] = {f"{e}_{w}": [] for e, w in RUNS}
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        for _ in range(args.repeats):
            for executor, workers in RUNS:
                print(f"[corpus] {executor} × {workers} …", file=sys.stderr, flush=True)
                done = subprocess.run(
                    [sys.executable, __file__, "--one", str(folder), executor, str(workers)],
                    check=True, capture_output=True, text=True, env=env)
                runs[f"{executor}_{workers}"].append(json.loads(done.stdout.splitlines()[-1]))
    med = {name: statistics.median(r["wall_s"] for r in rs) for name, rs in runs.items()}
    first = runs["local_1"][0]
    digests = {r["digest"] for rs in runs.values() for r in rs}
    figures: dict[str, Any] = {
        "corpus": corpus,
        "tokens": first["tokens"],
        "corpus_bytes": corpus["bytes"],
        "vocabulary": "default_word_sample(size=5000, seed=0)",
        "rows": first["rows"], "types": first["types"], "nnz": first["nnz"],
        "same_counts": len(digests) == 1,
        "median_wall_s": med,
        "tokens_per_s": {name: first["tokens"] / s for name, s in med.items()},
        "speedup_local": med["local_1"] / med["local_2"],
        "speedup_ray": med["ray_1"] / med["ray_2"],
        "ray_2_vs_local_2": med["local_2"] / med["ray_2"],
        "peak_tree_rss_mib": {n: max(r["peak_tree_rss_mib"] for r in rs)
                              for n, rs in runs.items()},
        "peak_driver_rss_mib": {n: max(r["peak_driver_rss_mib"] for r in rs)
                                for n, rs in runs.items()},
        "peak_largest_child_rss_mib": {n: max(r["peak_largest_child_rss_mib"] for r in rs)
                                       for n, rs in runs.items()},
        "rss_before_counting_mib": first["rss_before_mib"],
        "load_average_before": load_before,
        "load_average_after": load_average(),
        "peak_rss_per_corpus_byte": {
            n: max(r["peak_tree_rss_mib"] for r in rs) * 1024**2 / corpus["bytes"]
            for n, rs in runs.items()},
        "runs": runs,
        "machine": machine(),
    }
    write(args.out, figures, show={k: figures[k] for k in (
        "tokens", "corpus_bytes", "same_counts", "median_wall_s", "tokens_per_s",
        "speedup_local", "speedup_ray", "peak_tree_rss_mib", "peak_driver_rss_mib",
        "peak_largest_child_rss_mib", "rss_before_counting_mib", "peak_rss_per_corpus_byte",
        "load_average_before", "load_average_after")})
    return figures


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


if __name__ == "__main__":
    main()
