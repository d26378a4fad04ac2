"""Checking a model against the catalogue without the command line: ``check_model`` and
``parametrize_with_claims`` (after scikit-learn's ``check_estimator`` and
``parametrize_with_checks``), and the audit session the pytest plugin shares between test items.

::

    from normtest.testing.api import check_model, parametrize_with_claims

    outcome = check_model(adapter, claims=["word.norm_ic"],
                          expected_failures={"word.norm_ic[transform=raw]": "raw norms fall"})
    outcome.ok, outcome.counts           # structured, usable without pytest
    outcome.raise_for_failures()         # AssertionError listing every failed claim

    @parametrize_with_claims(["glove-6b-50d"], claims=["word.norm_ic"])
    def test_claims(check):
        check()

A *check* is one claim variant on one model, with a stable id such as
``word.norm_ic[transform=raw]`` (``glove-6b-50d/word.norm_ic[transform=raw]`` when several
models are checked). Ids are built from the catalogue alone, sorted and free of object reprs, so
every pytest-xdist worker collects the same list.

How a verdict becomes a test outcome (the *policy*): PASS passes; FAIL fails; ERROR fails;
SKIPPED (the model lacks a capability) skips with the reason; INCONCLUSIVE fails, skips or passes
as ``inconclusive="fail"|"skip"|"pass"`` says (``fail`` by default: a gate must not pass on
evidence that cannot decide). An *expected failure* — a mapping ``{claim or variant id:
reason}`` kept next to the model, or an ``expected_failures`` attribute of the adapter — turns a
failing check into an expected failure; a check expected to fail that passes is reported, and
fails under ``strict=True``.

For an adapter's author, ``check_adapter`` (``conformance``) checks that an adapter keeps the
protocol's promises, and ``strategies`` gives Hypothesis strategies for words, texts and vectors.

The package: ``session`` (models loaded once, planning, the shared audit session),
``outcomes`` (verdict → test outcome), ``api`` (``check_model``, ``parametrize_with_claims``),
``conformance`` (``check_adapter``) and ``strategies``.
"""
