"""check_model and parametrize_with_claims: structured results without pytest, stable test ids."""

from __future__ import annotations

from typing import Any

import pytest

from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, variants
from normtest.audit.selection import Selector, split_ids
from normtest.claims.catalogue import get
from normtest.errors import NormtestError
from normtest.models.registry import load_model
from normtest.testing.api import ClaimCheck, ModelSpec, check_model, parametrize_with_claims
from normtest.testing.outcomes import ClaimFailure

pytest_plugins = ["pytester"]

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

FAST = AuditSettings(words=300, resamples=200)
RAW = "word.norm_ic[transform=raw]"
WHITENED = "word.norm_ic[transform=whiten_zipf]"
#: GloVe's variants of word.norm_ic in the default scope; all but raw pass
TRANSFORMS = [v["transform"] for v in variants(get("word.norm_ic"), "static", (),
                                               scope=AuditSettings().scope)]
N = len(TRANSFORMS)


class Annotated:
    """GloVe with its expected failures kept next to it, as a user's adapter would."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.expected_failures = {RAW: "GloVe's raw norms fall with IC (Oyama et al.)"}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_structured_results(glove: Any) -> None:
    checked = check_model(glove, ["word.norm_ic", "word.norm_ic.multitoken"], settings=FAST,
                          exploratory=True)
    assert isinstance(checked.report, Report)
    assert checked.counts == {"PASS": N - 1, "FAIL": 1, "INCONCLUSIVE": 0, "ERROR": 0,
                              "SKIPPED": 1}
    assert checked.ran == N and not checked.ok
    assert [o.id for o in checked.failures] == [RAW]
    with pytest.raises(ClaimFailure, match=rf"(?s)1 of {N + 1} checks failed.*estimate:  -0\.4"):
        checked.raise_for_failures()
    # expected failures from the adapter itself, or passed in
    annotated = check_model(Annotated(glove), ["word.norm_ic"], settings=FAST, exploratory=True)
    assert annotated.ok and annotated.statuses["xfailed"] == 1
    annotated.raise_for_failures()


def test_by_default_only_the_confirmatory_rows_are_checked(glove: Any) -> None:
    # the paper's hypothesis for static vectors is the whitened row; raw and centred explore
    checked = check_model(glove, ["word.norm_ic"], settings=FAST)
    assert [o.id for o in checked.outcomes] == [WHITENED]
    assert checked.outcomes[0].result.role == "confirmatory" and checked.ok
    # a variant named in the selection is checked whatever its role
    named = check_model(glove, [RAW], settings=FAST)
    assert [o.id for o in named.outcomes] == [RAW]
    assert named.outcomes[0].result.role == "exploratory" and not named.ok
    # the adjustment is the audit's: Holm over the confirmatory rows, whatever is checked
    everything = check_model(glove, ["word.norm_ic"], settings=FAST, exploratory=True)
    by_id = {o.id: o.result for o in everything.outcomes}
    assert by_id[WHITENED].p_adjusted == checked.outcomes[0].result.p_adjusted
    with pytest.raises(NormtestError, match="exploratory"):
        check_model(glove, ["cond.centered"], settings=FAST)


def test_strict_expected_failures(glove: Any) -> None:
    wrong = {WHITENED: "we thought it would fail"}
    loose = check_model(glove, [WHITENED], settings=FAST, expected_failures=wrong)
    assert loose.ok and loose.statuses["xpassed"] == 1
    strict = check_model(glove, [WHITENED], settings=FAST, expected_failures=wrong, strict=True)
    assert not strict.ok and strict.failures[0].unexpected_pass
    assert "expected to fail (we thought it would fail) but passed" in strict.failures[0].message


def test_inconclusive_policy_and_thresholds(glove: Any) -> None:
    estimate = check_model(glove, [WHITENED], settings=FAST).outcomes[0].result.estimate
    at_estimate = {"word.norm_ic": round(estimate, 4)}
    for policy, status in (("fail", "failed"), ("skip", "skipped"), ("pass", "passed")):
        checked = check_model(glove, [WHITENED], settings=FAST, thresholds=at_estimate,
                              inconclusive=policy)
        (outcome,) = checked.outcomes
        assert outcome.result.verdict.value == "INCONCLUSIVE" and outcome.status == status


def test_refusals_and_selectors(glove: Any) -> None:
    with pytest.raises(NormtestError, match="no claim could run"):
        check_model(glove, ["word.norm_ic.multitoken"], settings=FAST)
    with pytest.raises(NormtestError, match=r"did you mean 'word\.norm_ic'"):
        check_model(glove, ["word.norm_ix"], settings=FAST)
    with pytest.raises(NormtestError, match="transform must be one of"):
        Selector.parse("word.norm_ic[transform=whitened]")
    assert split_ids(["a.b[x=1,y=2],c", " word "]) == ["a.b[x=1,y=2]", "c", "word"]
    assert Selector.parse(RAW).matches("word.norm_ic", {"transform": "raw"})
    assert not Selector.parse(RAW).matches("word.norm_ic", {"transform": "whiten_zipf"})


def test_parametrize_ids_are_stable_and_loading_is_lazy() -> None:
    calls: list[int] = []

    def factory() -> Any:
        calls.append(1)
        return load_model("glove-6b-50d", cache=False)

    spec = ModelSpec("glove", factory, family="static", states=())
    mark = parametrize_with_claims([spec], claims=["word.norm_ic"], settings=FAST,
                                   expected_failures={RAW: "falls"}, exploratory=True)
    assert not calls  # nothing loaded to build the ids
    params = mark.args[1]
    assert [p.id for p in params] == [f"word.norm_ic[transform={t}]" for t in TRANSFORMS]
    assert [m.name for m in params[0].marks] == ["normtest_claim", "xfail"]
    again = parametrize_with_claims([spec, ("copy", factory)], claims=["word.norm_ic"],
                                    exploratory=True)
    assert [p.id for p in again.args[1]][:2] == [f"glove/{RAW}",
                                                f"glove/word.norm_ic[transform={TRANSFORMS[1]}]"]
    assert isinstance(params[-1].values[0], ClaimCheck) and params[-1].id == WHITENED
    assert params[-1].values[0]().verdict.value == "PASS" and len(calls) == 2


USER_TESTS = """
from normtest.audit.run import AuditSettings
from normtest.models.registry import load_model
from normtest.testing.api import ModelSpec, parametrize_with_claims

S = AuditSettings(words=300, resamples=200)
GLOVE = ModelSpec("glove", lambda: load_model("glove-6b-50d", cache=False), "static", ())

@parametrize_with_claims(GLOVE, claims=["word.norm_ic"], settings=S, exploratory=True,
                         expected_failures={"word.norm_ic[transform=raw]": "falls with IC"})
def test_claims(check):
    check()

@parametrize_with_claims(GLOVE, claims=["cer.linear"], settings=S, exploratory=True)
def test_nothing_runs(check):
    check()
"""


def test_parametrize_in_a_user_test_file(pytester: pytest.Pytester, glove: Any) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    collected = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    assert "test_user.py::test_claims[word.norm_ic[transform=raw]]" in collected.stdout.lines
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "test_claims")
    result.assert_outcomes(passed=N - 1, xfailed=1)
    result.stdout.fnmatch_lines([f"*glove: {N} claim checks ran: PASS {N - 1}, FAIL 1*"])
    one = pytester.runpytest("-p", "no:cacheprovider",
                             "test_user.py::test_claims[word.norm_ic[transform=center_zipf]]")
    one.assert_outcomes(passed=1)
    refused = pytester.runpytest("-p", "no:cacheprovider", "-k", "test_nothing_runs")
    refused.assert_outcomes(skipped=1)
    assert refused.ret == pytest.ExitCode.TESTS_FAILED and "no claim ran" in refused.stdout.str()
