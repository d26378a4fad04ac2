"""The one-call Python API: ``normtest.audit(model)`` does what ``normtest audit --model M``
does and returns its :class:`~normtest.audit.report.Report` (``normtest.compare`` and
``normtest.plan`` do what their commands do)::

    import normtest

    report = normtest.audit("minilm-l6")                 # sizes itself, as the command does
    report = normtest.audit("glove-6b-50d", suite="word", words=1000, robustness=False)
    for line in report.scorecard:
        print(line.key, line.status)

Settings go by their one name (the command line's ``--words`` is ``words=``; docs/ci.md lists
them all), checked as the command line checks them; the ``quick`` and ``standard`` profiles size
``words`` and ``sentences`` for the lines' power unless they are given, as the command does.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from normtest.audit.report import Report
from normtest.base.settings import BY_NAME, audit_settings, autosized, resolve
from normtest.errors import NormtestError

__all__ = ["audit", "compare", "plan"]


def _checked(settings: dict[str, Any], where: str) -> dict[str, Any]:
    """The settings by name, each checked as the command line checks it; an unknown name is an
    error naming the nearest."""
    checked: dict[str, Any] = {}
    for name, value in settings.items():
        setting = BY_NAME.get(name)
        if setting is None or not setting.audit:
            known = [n for n, s in BY_NAME.items() if s.audit]
            guess = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
            hint = f"; did you mean {guess[0]!r}?" if guess else ""
            raise NormtestError(f"{where} has no setting {name!r}{hint} (the settings: "
                                f"{', '.join(sorted(known))})")
        checked[name] = setting.check(value, where)
    return checked


def audit(model: Any, *, claims: Sequence[str] | None = None, suite: str = "all",
          **settings: Any) -> Report:
    """Audit ``model`` — an embedded name, a path, a hub id, ``module:attribute``, or a loaded
    adapter — against the catalogue (``suite``, or the lines, claims or suites ``claims``
    names) and return the report. ``settings`` are the audit's settings by name (``words``,
    ``sentences``, ``documents``, ``profile``, ``seed``, ``resamples``, ``robustness``,
    ``controls``, …); an unknown name is an error with the nearest one."""
    from normtest.audit.run import run_audit
    from normtest.audit.selection import selected_claims
    from normtest.models.registry import load

    checked = _checked(settings, "normtest.audit")
    if claims:
        selected_claims(claims)  # an unknown id is refused before the model loads
    values = resolve(checked)
    chosen = audit_settings(values, autosize=autosized(values, checked))
    adapter = load(model) if isinstance(model, str) else model
    return run_audit(adapter, claim_ids=claims, suite=suite, settings=chosen)


def compare(models: Sequence[Any], *, claims: Sequence[str] | None = None, suite: str = "all",
            reference: str | Sequence[str] = (), **settings: Any) -> Any:
    """Audit several models on one sample and judge the comparative claims on every pair, as
    ``normtest compare --model A --model B`` does (the sample is fixed in advance: it does not
    size itself); returns the :class:`~normtest.audit.compare.Comparison`. ``reference``: the
    name(s) of shipped reference reports (``normtest compare --reference``), placed first and
    not audited again; the models are then audited on their sample."""
    from normtest.audit.compare import adopted_sample, compare_models
    from normtest.audit.references import read_reference

    names = [reference] if isinstance(reference, str) else list(reference)
    stored = [read_reference(n) for n in names]
    chosen = audit_settings(resolve(adopted_sample(stored),
                                    _checked(settings, "normtest.compare")))
    return compare_models(list(models), claims, suite, chosen, stored,
                          [*(f"reference {n}" for n in names), *map(str, models)])


def plan(model: Any, *, claims: Sequence[str] | None = None, suite: str = "all",
         **settings: Any) -> Any:
    """A pilot audit at the small sizes of ``normtest plan`` (those not given) and what sample
    each hypothesis needs (a :class:`~normtest.scorecard.power.Plan`: its ``rows``,
    ``recommended`` sizes and each line's power at its margin)."""
    from normtest.audit.run import run_audit
    from normtest.models.registry import load
    from normtest.scorecard.power import PILOT
    from normtest.scorecard.power import plan as planned

    checked = _checked(settings, "normtest.plan")
    values = resolve({k: v for k, v in PILOT.items() if k not in checked}, checked)
    chosen = audit_settings(values)
    adapter = load(model) if isinstance(model, str) else model
    report = run_audit(adapter, claim_ids=claims, suite=suite, settings=chosen)
    return planned(report.results, chosen, report.controls)
