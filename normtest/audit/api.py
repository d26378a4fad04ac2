"""The one-call Python API: ``normtest.audit(model)`` does what ``normtest audit --model M``
does and returns its :class:`~normtest.audit.report.Report`::

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

__all__ = ["audit"]


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

    checked: dict[str, Any] = {}
    for name, value in settings.items():
        setting = BY_NAME.get(name)
        if setting is None or not setting.audit:
            known = [n for n, s in BY_NAME.items() if s.audit]
            guess = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
            hint = f"; did you mean {guess[0]!r}?" if guess else ""
            raise NormtestError(f"normtest.audit has no setting {name!r}{hint} (the settings: "
                                f"{', '.join(sorted(known))})")
        checked[name] = setting.check(value, "normtest.audit")
    if claims:
        selected_claims(claims)  # an unknown id is refused before the model loads
    values = resolve(checked)
    chosen = audit_settings(values, autosize=autosized(values, checked))
    adapter = load(model) if isinstance(model, str) else model
    return run_audit(adapter, claim_ids=claims, suite=suite, settings=chosen)
