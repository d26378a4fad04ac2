"""The sequential audit: alpha spent over stages keeps the error rates of a fixed-sample audit."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from normtest.cli import main
from normtest.report import Report
from normtest.result import Criterion, Result, Verdict
from normtest.sequential import sequential, spent, stage_levels
from normtest.settings import AuditSettings
from normtest.stats import measure_correlation

ALPHA = 0.05
MC = 3  # Monte-Carlo standard errors allowed above α


def test_the_spending_function_spends_alpha_late() -> None:
    assert spent(ALPHA, 1.0) == pytest.approx(ALPHA)
    levels = stage_levels(ALPHA, [0.25, 0.5, 1.0])
    assert sum(levels) == pytest.approx(ALPHA)
    assert levels[0] < 1e-4 < levels[1] < 0.01 < levels[2]  # 8.9e-05, 0.0055, 0.044
    assert all(a < b for a, b in itertools.pairwise(levels))


def _one_row_audit(x: np.ndarray, y: np.ndarray) -> object:
    """A stage: one confirmatory correlation row on the first ``settings.words`` points."""
    def audit_stage(k: int, settings: AuditSettings) -> Report:
        n = settings.words
        m = measure_correlation(x[:n], y[:n], n_resamples=400, seed=k, alpha=settings.alpha)
        judged = Result.judged(m, Criterion.minimum_effect(0.3, alpha=settings.alpha))
        row = Result(judged.verdict, judged.reason, m, judged.criterion, claim="word.norm_ic",
                     role="confirmatory", expected=Verdict.PASS, hypothesis="word_level",
                     p_value=judged.p_value)
        return Report(results=[row])
    return audit_stage


def _pearson_for_spearman(rho_s: float) -> float:
    return 2 * math.sin(math.pi * rho_s / 6)


def _simulate(rho_s: float, runs: int, stream: int) -> tuple[list[Verdict], list[int]]:
    verdicts, stages = [], []
    r = _pearson_for_spearman(rho_s)
    for i in range(runs):
        rng = np.random.default_rng([stream, i])
        x = rng.standard_normal(240)
        y = r * x + math.sqrt(1 - r * r) * rng.standard_normal(240)
        report = sequential(_one_row_audit(x, y), AuditSettings(words=60), stages=3)
        (row,) = report.results
        verdicts.append(row.verdict)
        stages.append(int(row.details.get("stage", 3)))
    return verdicts, stages


def test_the_sequential_design_keeps_the_error_rates_at_the_threshold() -> None:
    # ρ exactly at the threshold: every PASS and every FAIL is wrong, over three looks
    runs = 800
    verdicts, _ = _simulate(0.3, runs, 700)
    ceiling = ALPHA + MC * math.sqrt(ALPHA * (1 - ALPHA) / runs)
    false_pass = sum(v is Verdict.PASS for v in verdicts) / runs
    false_fail = sum(v is Verdict.FAIL for v in verdicts) / runs
    print(f"sequential, 3 looks (60/120/240 points), ρ at the threshold: false PASS "
          f"{false_pass:.3f}, false FAIL {false_fail:.3f}")
    assert false_pass <= ceiling and false_fail <= ceiling


def test_the_sequential_design_decides_clear_effects_early() -> None:
    runs = 300
    verdicts, stages = _simulate(0.6, runs, 701)
    power = sum(v is Verdict.PASS for v in verdicts) / runs
    early = sum(s < 3 for s in stages) / runs
    print(f"sequential, ρ = 0.6: power {power:.3f}, decided before the last stage {early:.3f}")
    assert power >= 0.9 and early >= 0.5


def test_until_decided_from_the_command_line(tmp_path: object,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    out = Path(str(tmp_path)) / "seq"
    code = main(["audit", "--model", "glove-6b-50d", "--words", "150", "--resamples", "200",
                 "--suite", "word", "--until-decided", "--stages", "2", "--out", str(out),
                 "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0
    assert "normtest: stage 1: 150 words" in captured.err
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    design = report["provenance"]["sequential"]
    assert design["planned_stages"] == 2 and len(design["levels"]) == 2
    assert sum(design["levels"]) == pytest.approx(0.05)
    decided = [r for r in report["results"] if r["role"] == "confirmatory"
               and r["verdict"] in ("PASS", "FAIL")]
    assert decided and all(r["details"]["stage"] in (1, 2) for r in decided)
    for stage in design["stages"]:
        assert stage["words"] in (150, 300)
