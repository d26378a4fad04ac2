"""The configuration file: ``[tool.normtest]`` in ``pyproject.toml``, or a ``normtest.toml``.

One table serves ``normtest audit``, ``normtest gate`` and the pytest plugin::

    model = "glove-6b-50d"
    require = ["word.norm_ic[transform=whiten_zipf]"]   # claims, variants or suites that must PASS
    replicated = ["word_level"]                         # scorecard lines that must be replicated
    require_robust = ["word_level"]                     # lines whose verdict must be robust
    unverified = "fail"                                 # or "warn": a requirement the report
                                                        # cannot show (no controls, no robustness)
    baseline = "baseline/report.json"                   # optional: an earlier audit to compare with
    exploratory = false                                 # judge exploratory rows too
    words = 2000                                        # any setting of normtest.base.settings
    checks = ["lab_claims.py"]                          # the user's claims (paths: from this file)
    margin = 0.05                                       # a drop smaller than this is no regression
    [tool.normtest.thresholds]
    "word.norm_ic" = 0.25                               # re-judge a claim at another threshold

The settings (``words``, ``seed``, ``checks``, ...) are validated by their one description in
:mod:`normtest.base.settings`; the gate's own keys (``require``, ``baseline``, ``margin``, ...)
here. Every error names the file and the key, in the file's own syntax.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from normtest.base.settings import BY_NAME, from_config, given
from normtest.claims.catalogue import get
from normtest.errors import NormtestError

__all__ = ["GateConfig", "find_config", "load_config"]


@dataclass(frozen=True)
class GateConfig:
    """What a gate demands of a model (see the module doc for the file format)."""

    model: str | None = None
    claims: tuple[str, ...] = ()
    require: tuple[str, ...] = ()
    #: scorecard lines (hypothesis keys, or "all": every line tested) that must be replicated
    replicated: tuple[str, ...] = ()
    #: scorecard lines (or "all") whose verdict must be robust across their specifications
    require_robust: tuple[str, ...] = ()
    #: whether requirements and regressions judge exploratory rows too (default: confirmatory
    #: rows, and any row a requirement names by its variant)
    exploratory: bool = False
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    baseline: Path | None = None
    report: Path | None = None
    margin: float = 0.05
    margins: Mapping[str, float] = field(default_factory=dict)
    alpha: float = 0.05
    expected_failures: Mapping[str, str] = field(default_factory=dict)
    strict: bool = False
    inconclusive: str = "fail"
    #: what the gate does with a requirement the report cannot show (a line required replicated
    #: whose controls did not run, one required robust whose robustness was not assessed):
    #: ``"fail"`` or ``"warn"`` (pass it with a stated warning)
    unverified: str = "fail"
    #: the audit and loading settings of the file (normtest.base.settings), validated, by name
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: the file it was read from (None: built in code or from defaults)
    path: Path | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 0.5:
            raise NormtestError(f"gate alpha must lie in (0, 0.5), got {self.alpha}")
        for name, value in (("margin", self.margin), *self.margins.items()):
            if not (math.isfinite(value) and value >= 0):
                raise NormtestError(f"a regression margin must be ≥ 0, got {name} = {value}")
        if self.inconclusive not in ("fail", "skip", "pass"):
            raise NormtestError(
                f"inconclusive must be 'fail', 'skip' or 'pass', got {self.inconclusive!r}")
        if self.unverified not in ("fail", "warn"):
            raise NormtestError(
                f"unverified must be 'fail' or 'warn', got {self.unverified!r}")
        unknown = sorted(set(self.settings) - set(BY_NAME))
        if unknown:
            raise NormtestError(f"unknown setting(s) {unknown}; known: {sorted(BY_NAME)}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], base: Path | None = None,
                     origin: str = "the configuration") -> GateConfig:
        """Validate a ``[tool.normtest]`` table; relative paths are relative to ``base``."""
        known = ({f.name for f in fields(cls)} - {"path", "settings"}) | set(BY_NAME)
        unknown = sorted(set(data) - known)
        if unknown:
            raise NormtestError(f"{origin}: unknown key(s) {unknown}; known: {sorted(known)}")
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key in BY_NAME:
                continue
            try:
                values[key] = _coerce(key, value, base)
            except (TypeError, ValueError, OverflowError, RuntimeError) as exc:
                # OverflowError: an integer too large for a float; RuntimeError: "~user" paths
                raise NormtestError(f"{origin}: {key} = {value!r}: {exc}") from exc
        _check_thresholds(values.get("thresholds") or {}, origin)
        chosen = from_config(data, origin)
        for key in ("corpus", "checks", "vocabulary"):  # file paths: relative to the file
            if chosen.get(key) is not None:
                chosen[key] = _relative_paths(chosen[key], base, origin, key)
        if chosen.get("checks"):  # its messages name this file and key, not --checks
            from normtest.claims.loading import ClaimSource

            raw = data["checks"]
            written = [str(v) for v in ([raw] if isinstance(raw, str | Path) else raw)]
            chosen["checks"] = tuple(ClaimSource(path, f"{origin}: checks = {text!r}")
                                     for path, text in zip(chosen["checks"], written,
                                                           strict=True))
        return cls(**values, settings=chosen)

    def with_settings(self, given: Mapping[str, Any]) -> GateConfig:
        """The configuration with these settings (the command line's, say) taking precedence."""
        return replace(self, settings={**self.settings, **given})

    def with_overrides(self, **overrides: Any) -> GateConfig:
        """The configuration with every override that is not None applied."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def with_options(self, options: Mapping[str, Any] | Any, prefix: str = "") -> GateConfig:
        """The configuration under a front end's options — the one place an option and the
        configuration are merged, for the command line (``args``), ``normtest gate`` and the
        pytest plugin (``vars(config.option)``, ``prefix="normtest_"``): each key of
        :data:`OPTION_KEYS` given as an option (not None, not empty, a flag only when set)
        wins over the file's, and so do the settings given
        (:func:`normtest.base.settings.given`)."""

        source = options if isinstance(options, Mapping) else vars(options)
        chosen: dict[str, Any] = {}
        for key in OPTION_KEYS:
            value = source.get(prefix + key)
            if value is None or value is False or value == [] or value == ():
                continue
            if isinstance(value, list | tuple) and key in LINE_KEYS:
                # scorecard line keys: repeatable, and comma-separated in pytest
                value = tuple(part.strip() for item in value for part in str(item).split(",")
                              if part.strip())
            elif isinstance(value, list | tuple):  # claims and variants keep their commas
                value = tuple(value)
            chosen[key] = value
        return self.with_overrides(**chosen).with_settings(given(source, prefix=prefix))


#: The keys of :class:`GateConfig` a front end's option of the same name overrides.
OPTION_KEYS = ("model", "report", "baseline", "require", "replicated", "require_robust",
               "exploratory", "claims", "margin", "alpha", "strict", "inconclusive",
               "unverified")
#: Those of them that name scorecard lines (keys without commas).
LINE_KEYS = ("replicated", "require_robust")


def _check_thresholds(thresholds: Mapping[str, Any], origin: str) -> None:
    """Refuse a threshold its claim cannot take, in the file's own syntax."""

    for claim, value in thresholds.items():
        try:
            get(claim).criterion.with_threshold(value, claim)
        except NormtestError as exc:
            raise NormtestError(
                f"{origin}: in the thresholds table, \"{claim}\" = {value!r}: {exc} (write "
                f"\"{claim}\" = 0.5 for one threshold, or \"{claim}\" = [0.8, 1.25] for a margin)"
            ) from exc


def _relative_paths(value: Any, base: Path | None, origin: str, key: str) -> Any:
    """Paths of a configuration file taken relative to its folder (module names stay)."""
    def one(text: str) -> str:
        try:
            path = Path(text).expanduser()
        except RuntimeError as exc:  # "~user" whose home is unknown
            raise NormtestError(f"{origin}: {key} = {text!r}: {exc}") from exc
        if base is None or path.is_absolute():
            return str(path)
        candidate = base / path
        # a module name (checks = ["my_package.claims"]) is not a path: keep it as written
        if key == "checks" and not candidate.exists() and path.suffix != ".py" \
                and "/" not in text:
            return text
        return str(candidate)

    return tuple(one(v) for v in value) if isinstance(value, tuple) else one(value)


def _coerce(key: str, value: Any, base: Path | None) -> Any:
    if key in ("claims", "require", "replicated", "require_robust"):
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("give a list of scorecard keys"
                            if key in ("replicated", "require_robust")
                            else "give a list of claim ids")
        return tuple(value)
    if key in ("thresholds", "margins", "expected_failures"):
        if not isinstance(value, Mapping):
            raise TypeError("give a table")
        if key == "margins":
            return {str(k): float(v) for k, v in value.items()}
        if key == "expected_failures":
            return {str(k): str(v) for k, v in value.items()}
        return dict(value)
    if key in ("baseline", "report"):
        if not isinstance(value, str):
            raise TypeError("give a path")
        path = Path(value).expanduser()
        return path if path.is_absolute() or base is None else base / path
    if key in ("margin", "alpha"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("give a number")
        return float(value)
    if key in ("strict", "exploratory"):
        if not isinstance(value, bool):
            raise TypeError("give true or false")
        return value
    if not isinstance(value, str):
        raise TypeError("give a string")
    if key == "unverified" and value not in ("fail", "warn"):
        raise ValueError('give "fail" (a requirement the report cannot show fails the gate) or '
                         '"warn" (it passes with a stated warning)')
    return value


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise NormtestError(f"cannot read {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise NormtestError(f"{path} is not valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise NormtestError(
            f"{path} is not UTF-8 text (byte {exc.start}); TOML files must be UTF-8"
        ) from exc


def find_config(start: Path | None = None) -> Path | None:
    """``normtest.toml``, else a ``pyproject.toml`` with ``[tool.normtest]``, in ``start`` or
    its parents (the search stops at the first ``pyproject.toml``)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "normtest.toml").is_file():
            return folder / "normtest.toml"
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            tool = _read_toml(pyproject).get("tool", {})
            return pyproject if isinstance(tool, dict) and "normtest" in tool else None
    return None


def load_config(path: str | Path | None = None, start: Path | None = None,
                required: bool = False) -> GateConfig:
    """Read the gate configuration from ``path`` (a ``normtest.toml`` or a ``pyproject.toml``),
    or find one (:func:`find_config`); defaults when there is none and it is not ``required``."""
    target = Path(path) if path is not None else find_config(start)
    if target is None:
        if required:
            raise NormtestError(
                "no gate configuration: add [tool.normtest] to pyproject.toml or write a "
                "normtest.toml (docs/ci.md), or pass --config PATH"
            )
        return GateConfig()
    data = _read_toml(target)
    if target.name == "pyproject.toml" or "tool" in data:
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "normtest" not in tool:
            raise NormtestError(f"{target} has no [tool.normtest] table")
        data = tool["normtest"]
    if not isinstance(data, dict):
        raise NormtestError(f"{target}: the normtest configuration must be a table")
    return replace(GateConfig.from_mapping(data, target.parent.resolve(), str(target)),
                   path=target)
