"""Slim reports (``--slim``): the bootstrap replicates left out, every shown number kept.

A slim report keeps each bootstrap distribution as its 101 percentiles: it reads back with the
same verdicts, intervals, estimates and p-values as the full report, its scorecard is the same,
it is a fraction of the size (gzip-compressed when its name ends in ``.gz``), and it refuses
what it cannot do honestly (re-judging under other thresholds; pairing in the gate)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, run_audit
from normtest.errors import NormtestError
from normtest.render.thresholds import with_thresholds
from normtest.verdict.sampling import SKETCH_POINTS, Sampling


@pytest.fixture(scope="module")
def full(glove: Any) -> Report:
    """A real audit of GloVe's word claims (300 words, 400 resamples), every row bootstrapped
    (the replicates a slim report leaves out)."""
    return run_audit(glove, suite="word",
                     settings=AuditSettings(words=300, resamples=400, robustness=False,
                                            exploratory_intervals="bootstrap"))


def _shown(report: Report) -> list[tuple[Any, ...]]:
    return [(r.id, r.verdict, r.estimate, r.ci, r.p_value, r.p_adjusted, r.p_fail_adjusted)
            for r in report.results]


@pytest.mark.parametrize("name", ["report.json", "report.json.gz"])
def test_a_slim_report_reads_back_with_every_shown_number(full: Report, tmp_path: Path,
                                                          name: str) -> None:
    whole = full.write(tmp_path / "full.json")
    slim = full.slim().write(tmp_path / name)
    back = Report.read(slim)  # its digest checked, its rows read as written
    assert _shown(back) == _shown(Report.read(whole))
    assert [(line.key, line.status) for line in back.scorecard] == [
        (line.key, line.status) for line in full.scorecard]
    assert back.slim_note and not full.slim_note
    assert back.slim() is back  # slimming twice changes nothing
    assert slim.stat().st_size < whole.stat().st_size / 2
    if name.endswith(".gz"):
        assert json.loads(gzip.decompress(slim.read_bytes()))["provenance"]["slim"] == {
            "points": SKETCH_POINTS}


def test_a_slim_report_is_not_re_judged_and_pairs_with_nothing(full: Report) -> None:
    slim = full.slim()
    with pytest.raises(NormtestError, match=r"slim report .* cannot be re-judged"):
        with_thresholds(slim, ["word.norm_ic=0.9"])
    sketched = [r.measurement.sampling for r in slim.results
                if r.measurement is not None and r.measurement.sampling is not None
                and r.measurement.sampling.kind == "bootstrap"]
    assert sketched and all(s.sketched and s.sketch_of == 400 for s in sketched)
    assert all(s.replicates.size == SKETCH_POINTS for s in sketched)


def test_the_sketch_reads_other_levels_to_within_a_percentile() -> None:
    """Bounds at levels the audit did not use come from the sketch: each lies between the full
    replicates' bounds one percentile either side, two where replicates are NaN (here a skewed
    distribution, with and without NaN replicates)."""
    rng = np.random.default_rng(3)
    reps = np.exp(rng.normal(0.0, 0.4, 2000))
    for missing, step in ((0, 0.01), (30, 0.02)):
        reps[:missing] = np.nan
        full = Sampling.bootstrap(reps, 1.0)
        sketch = full.sketch()
        assert sketch.sketched and sketch.sketch_of == 2000 and sketch.bias == full.bias
        assert np.count_nonzero(np.isnan(sketch.replicates)) == round(
            SKETCH_POINTS * missing / 2000)
        for alpha in (0.005, 0.01, 0.025, 0.05, 0.1, 0.2):
            wider, narrower = max(alpha - step, 1e-4), alpha + step
            assert full.lower(narrower) >= sketch.lower(alpha) >= full.lower(wider)
            assert full.upper(narrower) <= sketch.upper(alpha) <= full.upper(wider)
    back = Sampling.from_dict(sketch.to_dict())
    assert back.sketch_of == 2000 and np.array_equal(back.replicates, sketch.replicates,
                                                     equal_nan=True)
    assert Sampling("normal", center=0.0, scale=1.0).sketch().sketched is False


def test_a_damaged_slim_file_is_refused_clearly(full: Report, tmp_path: Path) -> None:
    path = full.slim().write(tmp_path / "report.json.gz")
    path.write_bytes(path.read_bytes()[:200])  # cut short
    with pytest.raises(NormtestError, match="not a readable gzip file"):
        Report.read(path)
    text = json.loads(full.slim().to_json())
    text["results"][0]["measurement"]["sampling"]["sketch_of"] = 3  # fewer than it holds
    with pytest.raises(NormtestError, match="sketch_of"):
        Report.from_dict(text)


def test_the_report_command_writes_a_slim_compressed_copy(full: Report, tmp_path: Path) -> None:
    """``normtest report R --format json --slim --out R.json.gz``: the slim report, compressed
    (its name says so), read back as any report."""
    from normtest.cli.main import main

    source = full.write(tmp_path / "report.json")
    out = tmp_path / "baseline.json.gz"
    assert main(["report", str(source), "--format", "json", "--slim", "--out", str(out)]) == 0
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert Report.read(out).slim_note
    assert _shown(Report.read(out)) == _shown(Report.read(source))
