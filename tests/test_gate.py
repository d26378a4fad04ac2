"""The CI gate: configuration, required claims, and the regression test (both ways, and its
false-regression rate under a simulated null)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, variants
from normtest.claims.catalogue import get
from normtest.cli.common import EXIT_GATE_FAILED, EXIT_OK, EXIT_USAGE
from normtest.cli.main import main
from normtest.data.information.samples import default_word_sample
from normtest.errors import NormtestError
from normtest.gate.config import GateConfig, load_config
from normtest.gate.regression import compare, effect
from normtest.gate.run import evaluate
from normtest.render.gate import gate_markdown
from normtest.stats.correlation import correlation
from normtest.stats.multiplicity import holm
from normtest.verdict.result import Criterion, Result

WHITENED = "word.norm_ic[transform=whiten_zipf]"
CONFIG = f"""
model = "glove-6b-50d"
claims = ["word.norm_ic"]
require = ["{WHITENED}"]
words = 300
resamples = 200
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, glove: Any) -> Path:
    """A project with a gate configuration, GloVe's baseline and a degraded copy of GloVe."""
    root = tmp_path_factory.mktemp("project")
    (root / "normtest.toml").write_text(CONFIG, encoding="utf-8")
    # the degraded candidate: GloVe's vectors for the sample words with their norms about the
    # centroid shuffled among the words (same directions, norms no longer the words' own)
    sample = default_word_sample(size=300, seed=0)
    words = [w for w, known in zip(sample, glove.represents(sample), strict=True) if known]
    vectors = np.asarray(glove.word_vectors(words), dtype=np.float64)
    centroid = vectors.mean(axis=0)
    offsets = vectors - centroid
    norms = np.linalg.norm(offsets, axis=1)
    shuffled = norms[np.random.default_rng(1).permutation(norms.size)]
    degraded = centroid + offsets / norms[:, None] * shuffled[:, None]
    np.savez(root / "degraded.npz", keys=np.array(words), vectors=degraded.astype(np.float32))
    return root


def _gate(project: Path, *args: str) -> int:
    return main(["gate", "--config", str(project / "normtest.toml"), "--no-cache", *args])


@pytest.mark.slow
def test_degraded_copy_regresses_and_the_model_itself_does_not(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = project / "baseline" / "report.json"
    assert _gate(project, "--save-report", str(baseline)) == EXIT_OK  # no baseline yet
    assert Report.read(baseline).provenance["samples"]["words"]
    capsys.readouterr()

    summary = project / "summary.md"
    code = _gate(project, "--baseline", str(baseline), "--model", str(project / "degraded.npz"),
                 "--summary", str(summary), "--save-report", str(project / "candidate.json"),
                 "--force-save")  # kept on purpose, to gate the report again below
    out = capsys.readouterr().out
    assert code == EXIT_GATE_FAILED
    assert "normtest gate ❌ FAILED" in out and summary.read_text(encoding="utf-8") == out
    assert f"| ✅ | `{WHITENED}` | PASS" in out  # the required claim still passes: ...
    assert f"| ❌ `{WHITENED}` |" in out  # ... yet its effect dropped
    # by default the confirmatory rows are compared (the whitened one for static vectors) …
    assert "paired bootstrap" in out and "(1 paired)" in out
    assert "| ❌ `word.norm_ic[transform=raw]` |" not in out
    # … and the scorecard comes first
    assert out.index("### Scorecard") < out.index("### Required claims")
    # with --exploratory every row is
    code = _gate(project, "--baseline", str(baseline), "--model", str(project / "degraded.npz"),
                 "--exploratory")
    out = capsys.readouterr().out
    assert code == EXIT_GATE_FAILED
    for t in ("raw", "center_zipf", "whiten_zipf"):
        assert f"| ❌ `word.norm_ic[transform={t}]` |" in out
    # the confirmatory row pairs draw for draw; the exploratory ones, read analytically, are
    # compared unpaired (they keep no replicates)
    n = len(variants(get("word.norm_ic"), "static", (), scope=AuditSettings().scope))
    assert n == 3 and "(1 paired)" in out and "unpaired normal" in out

    assert _gate(project, "--baseline", str(baseline)) == EXIT_OK  # GloVe against itself
    out = capsys.readouterr().out
    assert "normtest gate ✅ passed" in out and "No regression." in out

    # an existing report can be gated without the model
    code = _gate(project, "--baseline", str(baseline), "--report",
                 str(project / "candidate.json"))
    assert code == EXIT_GATE_FAILED


@pytest.mark.slow
def test_a_slim_compressed_baseline_gates_unpaired_both_ways(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A baseline saved --slim as .json.gz (a small file to commit) still catches the degraded
    copy, unpaired (its replicates were left out), and passes the model itself."""
    full, slim = tmp_path / "full.json", tmp_path / "baseline.json.gz"
    assert _gate(project, "--save-report", str(full)) == EXIT_OK
    assert _gate(project, "--save-report", str(slim), "--slim") == EXIT_OK
    assert slim.stat().st_size < full.stat().st_size / 4
    assert Report.read(slim).slim_note
    capsys.readouterr()
    code = _gate(project, "--baseline", str(slim), "--model", str(project / "degraded.npz"))
    out = capsys.readouterr().out
    assert code == EXIT_GATE_FAILED
    assert f"| ❌ `{WHITENED}` |" in out and "unpaired normal" in out and "(0 paired)" in out
    assert _gate(project, "--baseline", str(slim)) == EXIT_OK
    assert "No regression." in capsys.readouterr().out
    # a configuration's thresholds re-judge the candidate; the slim baseline is read as written
    thresholds = project / "thresholds.toml"
    thresholds.write_text(CONFIG + "\n[thresholds]\n\"word.norm_ic\" = 0.35\n",
                          encoding="utf-8")
    code = main(["gate", "--config", str(thresholds), "--no-cache", "--baseline", str(slim),
                 "--model", str(project / "degraded.npz")])
    assert code == EXIT_GATE_FAILED and f"| ❌ `{WHITENED}` |" in capsys.readouterr().out


@pytest.mark.slow
def test_thresholds_requirements_and_audit_gate(project: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    strict = project / "strict.toml"
    strict.write_text(CONFIG + '[thresholds]\n"word.norm_ic" = 0.97\n', encoding="utf-8")
    assert main(["gate", "--config", str(strict), "--no-cache"]) == EXIT_GATE_FAILED
    out = capsys.readouterr().out
    assert f"| ❌ | `{WHITENED}` | FAIL" in out and "> 0.97" in out
    code = main(["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--words",
                 "300", "--resamples", "200", "--no-cache", "--gate", "--config",
                 str(project / "normtest.toml")])
    assert code == EXIT_OK and "normtest gate ✅ passed" in capsys.readouterr().out
    missing = project / "missing.toml"
    missing.write_text(CONFIG.replace(WHITENED, "word.norm_ic.multitoken"), encoding="utf-8")
    assert main(["gate", "--config", str(missing), "--no-cache"]) == EXIT_GATE_FAILED
    assert "| ❌ | `word.norm_ic.multitoken` | SKIPPED" in capsys.readouterr().out


def test_configuration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.normtest]\nmodel = "m"\nbaseline = "b/report.json"\n'
        'require = ["word.norm_ic"]\nmargin = 0.1\n', encoding="utf-8")
    (tmp_path / "sub").mkdir()
    found = load_config(start=tmp_path / "sub")  # found in a parent folder
    assert found.model == "m" and found.margin == 0.1
    assert found.baseline == tmp_path.resolve() / "b" / "report.json"
    (tmp_path / "normtest.toml").write_text('require = "word.norm_ic"\n', encoding="utf-8")
    assert load_config(start=tmp_path).require == ("word.norm_ic",)  # normtest.toml first
    bad = tmp_path / "bad.toml"
    bad.write_text("requires = ['word.norm_ic']\n", encoding="utf-8")
    with pytest.raises(NormtestError, match=r"unknown key.*requires"):
        load_config(bad)
    assert main(["gate", "--config", str(bad)]) == EXIT_USAGE
    assert main(["gate", "--config", str(tmp_path / "nothing.toml")]) == EXIT_USAGE
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(NormtestError, match="margin"):
        GateConfig(margin=-1)
    with pytest.raises(NormtestError, match="nothing to gate"):
        evaluate(Report([]), GateConfig())
    vacuous = evaluate(Report([]), GateConfig(), baseline=Report([]))
    assert not vacuous.passed and "Nothing could be compared" in gate_markdown(vacuous)


# -- the regression statistic --------------------------------------------------------------------
def _measured(x: np.ndarray, y: np.ndarray, seed: int) -> Result:
    r = correlation(x, y, min_effect=0.3, n_resamples=200, seed=seed)
    return replace(r, claim="word.norm_ic", variant={"transform": "raw"})


def _report(result: Result, sample: str) -> Report:
    return Report([result], {"name": "m"}, {"normtest": "0", "samples": {"words": sample}})


def _flag_rate(paired: bool, rho_base: float, rho_candidate: float, reps: int,
               margin: float, n: int = 200) -> float:
    """Share of repetitions in which the gate calls a regression: two audit-like Spearman
    measurements with bootstrap intervals, on the same sample (paired) or on two (unpaired)."""
    flagged = 0
    for rep in range(reps):
        rng = np.random.default_rng([rep, 7])
        x_base = rng.normal(size=n)
        x_cand = x_base if paired else rng.normal(size=n)
        y_base = rho_base * x_base + np.sqrt(1 - rho_base**2) * rng.normal(size=n)
        y_cand = rho_candidate * x_cand + np.sqrt(1 - rho_candidate**2) * rng.normal(size=n)
        base = _report(_measured(x_base, y_base, rep), "a")
        cand = _report(_measured(x_cand, y_cand, rep if paired else rep + 10_000),
                       "a" if paired else "b")
        (comparison,), _ = compare(base, cand, margin=margin)
        assert comparison.paired is paired
        flagged += comparison.regressed
    return flagged / reps


@pytest.mark.slow
@pytest.mark.parametrize("paired", [True, False], ids=["paired", "unpaired"])
def test_false_regression_rate_under_the_null(paired: bool) -> None:
    """Equal true effects (ρ = 0.5), margin 0 (the hardest null): at most α = 0.05 up to
    Monte Carlo error. Measured: 0.055 paired, 0.060 unpaired (200 repetitions); with the
    default margin 0.05, 0.005 and 0.015."""
    reps, alpha = 200, 0.05
    ceiling = sps.binom.ppf(0.99, reps, alpha) / reps  # 0.085: exceeded 1% of the time at α
    rate = _flag_rate(paired, 0.5, 0.5, reps, margin=0.0)
    assert rate <= ceiling, rate


def test_a_real_drop_is_flagged() -> None:
    """ρ 0.65 → 0.35 on 200 words: flagged in most repetitions, paired or not (measured over
    200 repetitions: 0.965 paired, 0.92 unpaired)."""
    assert _flag_rate(True, 0.65, 0.35, 40, margin=0.05) >= 0.8
    assert _flag_rate(False, 0.65, 0.35, 40, margin=0.05) >= 0.7


def test_same_measurement_never_regresses_and_directions() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=150)
    r = _measured(x, 0.5 * x + rng.normal(size=150), 0)
    (same,), _ = compare(_report(r, "a"), _report(r, "a"), margin=0.0)
    assert same.paired and same.difference == 0 and not same.regressed
    assert same.interval == (0.0, 0.0)
    less = Criterion("less", threshold=0.5)
    within = Criterion("within", margin=(0.5, 2.0))
    assert effect(0.2, less) > effect(0.4, less)  # smaller is better for a "less" claim
    assert effect(1.0, within) > effect(1.9, within) and effect(1.0, within) > effect(0.6, within)
    assert np.allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])


def test_sorted_replicates_are_not_paired() -> None:
    """Reports written before resampling order was kept store sorted replicates: unpaired."""
    from normtest.verdict.sampling import Sampling

    rng = np.random.default_rng(1)
    x = rng.normal(size=150)
    r = _measured(x, 0.5 * x + rng.normal(size=150), 0)
    assert r.measurement is not None and r.measurement.sampling is not None
    old = Sampling.bootstrap(np.sort(r.measurement.sampling.replicates), r.estimate)
    stale = replace(r, measurement=replace(r.measurement, sampling=old))
    (comparison,), _ = compare(_report(stale, "a"), _report(r, "a"), margin=0.0)
    assert not comparison.paired and not comparison.regressed


# -- safe baselines ---------------------------------------------------------------------------
@pytest.mark.slow
def test_the_first_baseline_is_recorded_where_the_configuration_expects_it(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "normtest.toml"
    config.write_text('model = "glove-6b-50d"\nbaseline = "baseline/report.json"\n'
                      "words = 300\nresamples = 200\n", encoding="utf-8")
    baseline = tmp_path / "baseline" / "report.json"
    # gating against a baseline that is not there yet says how to record it
    assert main(["gate", "--config", str(config), "--no-cache"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "does not exist yet" in err and f"--save-report {baseline}" in err
    # recording it: the gate passes with nothing to compare, and writes it
    assert main(["gate", "--config", str(config), "--no-cache", "--save-report",
                 str(baseline)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "no baseline to compare with yet" in out and "(the first baseline)" in out
    assert Report.read(baseline).results


@pytest.mark.slow
def test_a_failing_candidate_never_replaces_the_baseline(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    baseline = project / "baseline" / "report.json"
    if not baseline.exists():
        assert _gate(project, "--save-report", str(baseline)) == EXIT_OK
    before = baseline.read_bytes()
    degraded = str(project / "degraded.npz")
    code = _gate(project, "--baseline", str(baseline), "--model", degraded, "--save-report",
                 str(baseline))
    out = capsys.readouterr().out
    assert code == EXIT_GATE_FAILED and baseline.read_bytes() == before
    assert "was **not** written" in out and "--force-save" in out
    # the summary names the model as it was given, and lists each compared row once
    assert f"`{degraded}`" in out.splitlines()[0]
    rows = [line for line in out.splitlines() if line.startswith("| ") and "`word.norm_ic[" in line
            and "paired bootstrap" in line]
    assert len(rows) == len({r.split("`")[1] for r in rows})
    # --force-save overrides, on purpose
    forced = project / "forced" / "report.json"
    code = _gate(project, "--baseline", str(baseline), "--model", degraded, "--save-report",
                 str(forced), "--force-save")
    assert code == EXIT_GATE_FAILED and forced.exists()
    assert "although the gate failed" in capsys.readouterr().out


# -- one decision: exit code, one-line summary and Markdown agree -----------------------------
@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, glove: Any, minilm: Any) -> Path:
    """Reports written from scratch: GloVe on word.norm_ic (twice the same), GloVe on
    word.norm_kl only (disjoint claims), MiniLM on word.norm_ic (another model), and a
    synthetic pair whose effect drops (a regression)."""
    from normtest.audit.run import run_audit

    root = tmp_path_factory.mktemp("stored")
    settings = AuditSettings(words=200, resamples=100, robustness=False, controls=False)
    run_audit(glove, ["word.norm_ic"], settings=settings).write(root / "glove.json")
    run_audit(glove, ["word.norm_kl"], settings=settings).write(root / "glove_kl.json")
    run_audit(minilm, ["word.norm_ic"], settings=replace(settings, words=60)).write(
        root / "minilm.json")
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    noise = rng.normal(size=200)
    _report(_measured(x, 0.7 * x + 0.5 * noise, 0), "a").write(root / "base.json")
    _report(_measured(x, 0.2 * x + noise, 0), "a").write(root / "dropped.json")
    return root


#: (name, gate arguments, whether it passes, words its one failing reason holds)
SCENARIOS = [
    ("pass", ["--report", "glove.json", "--baseline", "glove.json", "--require", WHITENED],
     True, ""),
    ("regression", ["--report", "dropped.json", "--baseline", "base.json"], False,
     "1 regression against the baseline (word.norm_ic[transform=raw])"),
    ("another model, required claim passes", ["--report", "glove.json", "--baseline",
                                              "minilm.json", "--require", WHITENED],
     False, "it is another model (minilm-l6, the candidate is glove-6b-50d)"),
    ("another model, nothing required", ["--report", "glove.json", "--baseline", "minilm.json"],
     False, "nothing could be compared with the baseline"),
    ("disjoint claims", ["--report", "glove_kl.json", "--baseline", "glove.json", "--require",
                         "word.norm_kl"],
     False, "the two reports measured disjoint claims (the baseline word.norm_ic; the candidate "
            "word.norm_kl)"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "args", "passes", "reason"), SCENARIOS,
                         ids=[s[0] for s in SCENARIOS])
def test_exit_code_summary_line_and_markdown_render_one_decision(
        stored: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        name: str, args: list[str], passes: bool, reason: str) -> None:
    """The gate never passes on nothing, and its three outputs are one decision: the exit
    code, the line on standard error, and the Markdown's headline and reasons (printed and
    written with --summary alike)."""
    from normtest.gate.run import decide
    from normtest.render.markdown import md_text

    monkeypatch.chdir(stored)
    summary = stored / f"{name}.md"
    code = main(["gate", *args, "--summary", str(summary)])
    captured = capsys.readouterr()
    markdown, line = captured.out, captured.err.strip().splitlines()[-1]
    assert summary.read_text(encoding="utf-8") == markdown
    headline = markdown.splitlines()[0]
    assert code == (EXIT_OK if passes else EXIT_GATE_FAILED), markdown
    assert ("✅ passed" in headline) is passes and ("❌ FAILED" in headline) is not passes
    # the same decision through the Python API
    require = tuple(args[args.index("--require") + 1:]) if "--require" in args else ()
    outcome = evaluate(Report.read(args[1]), GateConfig(require=require),
                       Report.read(args[3]), args[3])
    decision = decide(outcome)
    assert decision.passed is passes and decision.exit_code == code
    assert outcome.passed is passes
    if passes:
        assert line == "normtest: gate passed"
        assert "Why it failed" not in markdown and not decision.reasons
        return
    assert line == f"normtest: {decision.line}" and decision.line.startswith("gate FAILED: ")
    assert "**Why it failed:**" in markdown
    for why in decision.reasons:
        assert f"- {md_text(why)}" in markdown and why in line
    assert any(reason in why for why in decision.reasons), decision.reasons
    if "nothing could be compared" in reason or "another model" in reason \
            or "disjoint" in reason:
        assert "nothing could be compared with the baseline" in markdown.splitlines()[2]
        assert "0 regressions" not in markdown


def test_a_gate_with_nothing_to_check_fails() -> None:
    """No requirement and a baseline without a measured row: nothing was compared, so the gate
    fails, and says so in every output."""
    outcome = evaluate(Report([], {"name": "m"}), GateConfig(), baseline=Report([]))
    assert not outcome.passed and outcome.decision.exit_code == EXIT_GATE_FAILED
    assert "holds no measured result" in outcome.decision.line
    assert "❌ FAILED" in gate_markdown(outcome).splitlines()[0]
