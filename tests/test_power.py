"""The power analysis behind an undecided row: what sample would decide it, and whether it does."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from normtest.base.progress import without_progress
from normtest.base.settings import AuditSettings
from normtest.scorecard.lines import build
from normtest.scorecard.power import POWER, annotate, detectable_effect, required
from normtest.stats.correlation import correlation, measure_correlation
from normtest.verdict.result import Criterion, Measurement, Result, Verdict
from normtest.verdict.sampling import Sampling

ALPHA = 0.05


def _spearman_data(rng: np.random.Generator, n: int, rho_s: float) -> tuple[np.ndarray, ...]:
    r = 2 * math.sin(math.pi * rho_s / 6)  # the bivariate-normal r whose Spearman ρ is rho_s
    x = rng.standard_normal(n)
    return x, r * x + math.sqrt(1 - r * r) * rng.standard_normal(n)


@pytest.mark.slow
def test_the_recommended_sample_decides_the_row_with_the_stated_power() -> None:
    # a pilot of 120 words whose ρ sits between the threshold and a decision
    rng = np.random.default_rng(11)
    pilot = correlation(*_spearman_data(rng, 120, 0.3), n_resamples=1000, seed=0)
    assert pilot.verdict is Verdict.INCONCLUSIVE
    need = required(pilot, ALPHA)
    assert need is not None and need.factor > 1
    n = math.ceil(120 * need.factor)
    # taking the pilot's estimate as the truth, samples of that size PASS about 90% of the time
    truth = pilot.estimate
    passed = sum(
        correlation(*_spearman_data(np.random.default_rng([12, i]), n, truth), n_resamples=500,
                    seed=i).verdict is Verdict.PASS
        for i in range(200))
    print(f"power at the recommended n={n} (pilot ρ={truth:.3f}): {passed / 200:.3f}")
    assert passed / 200 >= POWER - 0.1


def _row(estimate: float, scale: float, role: str = "confirmatory",
         claim: str = "cer.linear") -> Result:
    m = Measurement("x", estimate, 12, "normal",
                    sampling=Sampling("normal", center=estimate, scale=scale))
    criterion = Criterion("within", margin=(0.5, 2.0))
    judged = Result.judged(m, criterion)
    return Result(judged.verdict, judged.reason, m, criterion, claim=claim, role=role,
                  expected=Verdict.PASS if role == "confirmatory" else None,
                  hypothesis="cer_growth", p_value=judged.p_value)


def test_undecided_confirmatory_rows_say_what_sample_would_decide_them() -> None:
    undecided, decided = _row(1.1, 0.5), _row(1.0, 0.05)
    explored = _row(1.1, 0.5, role="exploratory")
    assert undecided.verdict is Verdict.INCONCLUSIVE and decided.verdict is Verdict.PASS
    out = annotate([undecided, decided, explored], AuditSettings(documents=12))
    power = out[0].details["power"]
    # se 0.5, 0.6 from the nearer edge, heading for PASS: planned at α (replicated needs every
    # row of the line, no adjustment)
    expected = (0.5 * (1.644854 + 1.281552) / 0.6) ** 2
    assert power["factor"] == pytest.approx(expected, rel=1e-4)
    assert power["setting"] == "documents" and power["needed"] == math.ceil(12 * expected)
    assert f"--documents {power['needed']}" in out[0].reason and "(now 12)" in out[0].reason
    assert out[1] is decided and out[2] is explored  # decided and exploratory rows: untouched
    line = build(out, [("cer_growth", "growth", "")])[0]
    assert line.status == "undecided"
    assert f"power analysis asks for about --documents {power['needed']}" in line.reason


def test_no_requirement_without_a_readable_interval() -> None:
    flat = Measurement("rho", 0.8, 50, "bootstrap",
                       sampling=Sampling.bootstrap(np.full(200, 0.8), 0.8))
    row = Result.judged(flat, Criterion.minimum_effect(0.3))
    assert row.verdict is Verdict.INCONCLUSIVE and required(row, ALPHA) is None
    missing = Measurement.not_estimable("rho", 3, "bootstrap", "too few")
    assert required(Result.judged(missing, Criterion.minimum_effect(0.3)), ALPHA) is None


def test_a_real_undecided_row_gets_the_setting_to_raise() -> None:
    rng = np.random.default_rng(5)
    x, y = _spearman_data(rng, 150, 0.4)
    m = measure_correlation(x, y, n_resamples=500, seed=0)
    row = Result.judged(m, Criterion.minimum_effect(0.3))
    row = Result(row.verdict, row.reason, m, row.criterion, claim="word.norm_ic",
                 role="confirmatory", expected=Verdict.PASS, p_value=row.p_value)
    (annotated,) = annotate([row], AuditSettings(words=150))
    if row.verdict is Verdict.INCONCLUSIVE:
        assert annotated.details["power"]["setting"] == "words"
        assert annotated.details["power"]["needed"] > 150
    else:
        assert annotated is row


@pytest.mark.slow
def test_normtest_plan_runs_a_pilot_and_recommends_a_sample(
        capsys: pytest.CaptureFixture[str]) -> None:
    from normtest.cli.main import main

    assert main(["plan", "--model", "glove-6b-50d", "--words", "150", "--resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("normtest plan for glove-6b-50d")
    # GloVe's confirmatory rows: the whitened word rows and the raw conditions
    assert "word.norm_ic[transform=whiten_zipf]" in out and "cond.inner_pmi[transform=raw]" in out
    assert "word.norm_ic[transform=raw]" not in out  # exploratory rows are not planned
    assert "decided at the pilot" in out
    assert "audit with: normtest audit --model glove-6b-50d" in out
    # the plan sizes the lines' controls too: at 150 words the word line lacks the power at
    # its margin, and the recommended audit asks for at least what it needs
    assert "each line's power at the smallest effect it must detect" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("word_level"))
    assert "needs about --words " in line, line
    needed = int(line.split("--words ")[1].split()[0].replace(",", ""))
    recommended = out.split("audit with: ")[1].split("--words ")[1].split()[0]
    assert int(recommended) >= needed > 150


def test_a_plan_leaves_out_what_no_affordable_sample_decides() -> None:
    from normtest.scorecard.power import OUT_OF_REACH, plan

    near, at_edge = _row(1.1, 0.5), _row(1.95, 0.5)  # 0.6 and 0.05 from the margin's edge
    pilot = AuditSettings(documents=12)
    planned = plan([near, at_edge], pilot)
    (_, near_need), (_, edge_need) = planned.rows
    assert near_need is not None and edge_need is not None
    assert not planned.out_of_reach(near_need) and planned.out_of_reach(edge_need)
    assert edge_need.needed is not None and edge_need.needed > OUT_OF_REACH * 12
    default = AuditSettings().documents
    assert planned.recommended == {"documents": max(default, near_need.needed or 0)}
    # and the audit's own reason says so
    edge_row, near_row = annotate([at_edge, near], pilot)
    assert "out of reach" in edge_row.reason and "out of reach" not in near_row.reason
    # the scorecard asks for the reachable sample and counts the rest
    line = build([edge_row, near_row], [("cer_growth", "growth", "")])[0]
    assert f"--documents {near_row.details['power']['needed']}" in line.reason
    assert "1 row out of reach" in line.reason


def test_the_power_curve_meets_the_requirement_at_its_sample() -> None:
    from normtest.scorecard.power import power_at

    row = _row(1.1, 0.5)  # PASS side, undecided
    need = required(row, ALPHA)
    assert need is not None
    assert power_at(row, ALPHA, need.factor) == pytest.approx(POWER, abs=1e-9)
    curve = [power_at(row, ALPHA, f) or 0.0 for f in (0.5, 1.0, 2.0, 4.0, 8.0)]
    assert all(a < b for a, b in itertools.pairwise(curve))
    failing = _row(0.3, 0.15)  # its estimate lies below the margin: heading for FAIL
    need = required(failing, ALPHA)
    assert need is not None
    assert power_at(failing, ALPHA, need.factor) == pytest.approx(POWER, abs=1e-9)


@pytest.mark.slow
def test_the_power_curves_script_reads_a_report(tmp_path: object) -> None:
    import subprocess
    import sys
    from pathlib import Path

    import normtest
    from normtest.audit.run import run_audit

    folder = Path(str(tmp_path))
    report = run_audit(normtest.load("glove-6b-50d", cache=False), suite="conditions",
                       settings=AuditSettings(words=150, resamples=200))
    path = report.write(folder / "report.json")
    script = Path(__file__).resolve().parent.parent / "scripts" / "power_curves.py"
    done = subprocess.run([sys.executable, str(script), str(path), "--out",
                           str(folder / "power.png")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "confirmatory rows decided" in done.stdout and "| glove-6b-50d" in done.stdout
    undecided = [r for r in report.results if r.confirmatory and r.verdict is Verdict.INCONCLUSIVE]
    assert (folder / "power.png").exists() == any(required(r, 0.05) for r in undecided)


def test_a_plan_of_exploratory_claims_only_says_why_it_is_empty(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from normtest.cli.main import main

    def no_pilot(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pilot ran although nothing could be planned")

    monkeypatch.setattr("normtest.models.registry.load", no_pilot)
    code = main(["plan", "--model", "glove-6b-50d", "--claims", "cond.centered", "--words", "60",
                 "--resamples", "100", "--seed", "3", "--no-robustness"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.strip()]
    assert line.startswith("normtest: error: nothing to plan: cond.centered has no "
                           "confirmatory row")
    assert "exploratory" in line and "confirmatory rows only" in line
    # the command it suggests keeps the user's options (not the pilot's sample sizes)
    assert line.endswith("normtest audit --model glove-6b-50d --claims cond.centered --seed 3 "
                         "--no-robustness")


def test_a_plan_whose_pilot_leaves_no_confirmatory_row_says_why(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A claim with expectations for other models only: the pilot runs, and its rows are all
    exploratory for this one."""
    import normtest.cli.main as cli
    from normtest.audit.report import Report
    from normtest.verdict.result import Verdict

    row = _row(1.1, 0.5, role="exploratory", claim="word.norm_ic")
    assert row.verdict is Verdict.INCONCLUSIVE
    monkeypatch.setattr("normtest.audit.run.run_audit", lambda *a, **k: Report(results=[row]))
    monkeypatch.setattr("normtest.models.registry.load", lambda *a, **k: object())
    code = cli.main(["plan", "--model", "glove-6b-50d", "--suite", "word", "--words", "60"])
    err = without_progress(capsys.readouterr().err)
    assert code == 2 and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.strip()]
    assert "nothing to plan for glove-6b-50d: suite word has no confirmatory row" in line
    assert line.endswith("normtest audit --model glove-6b-50d --suite word")


@pytest.mark.slow
def test_the_recommended_audit_keeps_the_users_options(
        capsys: pytest.CaptureFixture[str]) -> None:
    from normtest.cli.main import main

    assert main(["plan", "--model", "glove-6b-50d", "--suite", "word", "--words", "150",
                 "--resamples", "200", "--seed", "3", "--no-controls"]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("audit with:")]
    assert line.startswith("audit with: normtest audit --model glove-6b-50d --suite word "
                           "--seed 3 --no-controls")
    assert "--resamples" not in line and "--words 150" not in line  # the pilot's sizes


def _margin_rows(rng: np.random.Generator, n: int, shared: float, seed: int = 0,
                 paired: bool = True) -> list[Result]:
    """Two rows of the word line (ρ(IC, norm) > 0.3, detect 0.4) whose true ρ is the margin
    0.4: two norms that share ``shared`` of their noise, measured on the same units (paired
    draws) or on differently labelled ones."""
    from normtest.claims.catalogue import get

    r = 2 * math.sin(math.pi * 0.4 / 6)
    x = rng.standard_normal(n)
    common = rng.standard_normal(n)
    out = []
    for k in range(2):
        own = rng.standard_normal(n)
        noise = math.sqrt(shared) * common + math.sqrt(1 - shared) * own
        y = r * x + math.sqrt(1 - r * r) * noise
        units = np.arange(n) if paired or k == 0 else np.arange(n) + n
        m = measure_correlation(x, y, units=units, n_resamples=400, seed=seed)
        criterion = get("word.norm_ic").criterion
        out.append(Result.judged(m, criterion, claim="word.norm_ic", role="confirmatory",
                                 expected=Verdict.PASS, hypothesis="word_level"))
    return out


def test_a_lines_power_is_joint_over_its_rows() -> None:
    """Replicated needs every row: two rows with independent draws have about the product of
    their powers; two rows that are one measurement have the power of one; and the power is
    planned for the line, not its weakest row."""
    from normtest.scorecard.power import line_margin_power

    rows = _margin_rows(np.random.default_rng(3), 300, 0.0, paired=False)
    one = [line_margin_power([r], 0.8) for r in rows]
    both = line_margin_power(rows, 0.8)
    assert both is not None and all(o is not None for o in one)
    assert both.planted == 0.4 and both.rows == 2
    product = one[0].power * one[1].power  # type: ignore[union-attr]
    assert both.power == pytest.approx(product, abs=0.01)
    same = line_margin_power([rows[0], rows[0]], 0.8)
    assert same is not None and same.power == pytest.approx(one[0].power, abs=0.01)  # type: ignore[union-attr]
    # the sample for 0.8 is larger for the line than for either row alone
    assert both.needs is not None and all(o.needs is not None for o in one)  # type: ignore[union-attr]
    assert both.needs.factor > max(o.needs.factor for o in one)  # type: ignore[union-attr]


def test_the_joint_power_matches_the_pass_rate_of_the_line() -> None:
    """Known truth: two rows at the margin (true ρ 0.4 against > 0.3) whose norms share half
    their noise, on the same words. The line's joint power read from one draw's intervals and
    replicates is near the rate at which both rows PASS over 300 draws (and below the weaker
    row's own rate)."""
    from normtest.scorecard.power import line_margin_power

    planned = line_margin_power(_margin_rows(np.random.default_rng(100), 300, 0.5), 0.8)
    assert planned is not None
    both = each = 0
    draws = 300
    for i in range(draws):
        rows = _margin_rows(np.random.default_rng([101, i]), 300, 0.5, seed=i)
        passed = [r.verdict is Verdict.PASS for r in rows]
        both += all(passed)
        each += passed[0]
    print(f"joint power planned {planned.power:.3f}; both rows PASS {both / draws:.3f}; "
          f"one row {each / draws:.3f}")
    assert abs(planned.power - both / draws) < 0.1
    assert both / draws < each / draws


def _ideal_word_row(rng: np.random.Generator, n: int, seed: int) -> Result:
    """A word-line row whose norm carries IC alone at ρ 0.4 (one step beyond 0.3) on words whose
    IC grows with their token count, measured with its baseline and beyond readings."""
    from normtest.claims.catalogue import get
    from normtest.claims.measuring import judge_beyond
    from normtest.stats.baseline import measure_baseline

    counts = np.sort(rng.choice([1, 2, 3], size=n, p=[0.72, 0.2, 0.08]))
    ic = 1.6 * counts + rng.standard_normal(n)
    ranks = (np.argsort(np.argsort(ic)) + 0.5) / n
    from scipy import special

    r = 2 * math.sin(math.pi * 0.4 / 6)
    norms = r * special.ndtri(ranks) + math.sqrt(1 - r * r) * rng.standard_normal(n)
    units = np.arange(n)
    m = measure_correlation(ic, norms, units=units, n_resamples=400, seed=seed)
    m = Measurement(**{**m.__dict__, "components": measure_baseline(
        ic, norms, counts, units=units, n_resamples=400, seed=seed, readings=False)})
    row = Result.judged(m, get("word.norm_ic").criterion, claim="word.norm_ic",
                        role="confirmatory", expected=Verdict.PASS, hypothesis="word_level")
    return judge_beyond(row, "token count")


@pytest.mark.slow
def test_the_beyond_power_matches_the_rate_an_ideal_norm_passes_beyond() -> None:
    """Known truth for the beyond reading's power at the margin: a norm carrying IC alone at
    ρ 0.4 on 800 words whose IC grows with the token count. The power read from one draw's
    within-strata interval and attenuation curve is near the rate at which such norms pass
    beyond the token count over 150 draws."""
    from normtest.scorecard.power import line_margin_power

    planned = line_margin_power([_ideal_word_row(np.random.default_rng(200), 800, 0)], 0.8,
                                beyond=True)
    assert planned is not None and planned.planted == 0.4
    draws = 150
    passed = sum(_ideal_word_row(np.random.default_rng([201, i]), 800, i)
                 .details["beyond"]["verdict"] == "PASS" for i in range(draws))
    print(f"beyond power planned {planned.power:.3f}; passed beyond {passed / draws:.3f}")
    assert abs(planned.power - passed / draws) < 0.15


def test_the_detectable_effect_is_passed_with_the_stated_power_and_not_below_it() -> None:
    """A row whose true value lies its minimum detectable effect beyond the threshold passes
    with power 0.9 at its level; one at half that distance much less often (4,000 draws)."""
    scale, threshold = 0.04, 0.3

    def row(estimate: float) -> Result:
        m = Measurement("spearman_rho", estimate, 400, "normal",
                        sampling=Sampling("normal", center=estimate, scale=scale))
        criterion = Criterion("greater", threshold=threshold)
        judged = Result.judged(m, criterion)
        return Result(judged.verdict, judged.reason, m, criterion, p_value=judged.p_value)

    mde = detectable_effect(row(threshold), ALPHA)
    assert mde is not None and math.isclose(mde, 2.926 * scale, rel_tol=1e-3)
    rng = np.random.default_rng(5)
    rates = {}
    for distance in (mde, mde / 2):
        draws = threshold + distance + scale * rng.standard_normal(4000)
        rates[distance] = float(np.mean([row(x).verdict is Verdict.PASS for x in draws]))
    print(f"PASS rate at the MDE {rates[mde]:.3f}, at half of it {rates[mde / 2]:.3f}")
    assert abs(rates[mde] - POWER) < 0.015
    assert rates[mde / 2] < 0.6
