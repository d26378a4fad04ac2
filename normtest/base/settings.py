"""Every setting of an audit, described once: name, type, default, limits and help.

The command line (``normtest audit`` and ``normtest gate``), the ``[tool.normtest]`` keys, the
pytest options and the Python arguments all come from :data:`SETTINGS`, so each setting has one
name everywhere — ``words`` is ``--words``, ``words = 5000``, ``--normtest-words`` and
``AuditSettings(words=...)`` / ``normtest.load(..., device=...)`` — and is validated in one
place, :meth:`Setting.check`. Values are layered: the defaults, then the configuration file,
then the command line (or the pytest options).

:class:`AuditSettings` holds what an audit samples and how it resamples; the loading settings
(``kind``, ``device``, ``dtype``, ``cache``, ``trust_remote_code``, ``vocabulary``) say how the
model is read, and ``checks`` which claim files are loaded besides the catalogue.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from normtest.errors import NormtestError

Kind = Literal["int", "str", "bool", "path", "paths", "names"]


def parse_layers(text: str) -> tuple[str, ...]:
    """``"all"`` or a comma list of ``input``, ``last`` and layer numbers, checked."""
    if not isinstance(text, str) or not text.strip():
        raise NormtestError(f"--layers takes all or a comma list such as 0,3,last, got {text!r}")
    parts = tuple(p.strip() for p in text.split(",") if p.strip())
    if not parts:
        raise NormtestError(f"--layers takes all or a comma list such as 0,3,last, got {text!r}")
    if parts == ("all",):
        return parts
    for part in parts:
        if part not in ("input", "last") and not (part.isascii() and part.isdigit()):
            raise NormtestError(
                f"--layers takes all or a comma list of input, last and layer numbers "
                f"(0 = the embedding output), got {part!r} in {text!r}"
            )
    return parts


def layer_names(parts: Sequence[str], n_layers: int | None) -> tuple[str, ...]:
    """The representation names of parsed ``--layers`` for a model with ``n_layers`` blocks:
    layer L is ``last``, which every profile keeps (its rows are the audit's confirmatory ones;
    the other layers add exploratory rows around them); numbers beyond L are refused."""
    if n_layers is None:
        raise NormtestError("this model has no hidden layers to profile (--layers needs a "
                            "transformers encoder or decoder)")
    if tuple(parts) == ("all",):
        return ("input", *(str(i) for i in range(n_layers)), "last")
    out: list[str] = ["last"]
    for part in parts:
        if part.isdigit():
            if int(part) > n_layers:
                raise NormtestError(f"layer {part} does not exist: this model has hidden "
                                    f"states 0..{n_layers} ({n_layers} = last)")
            part = "last" if int(part) == n_layers else str(int(part))
        out.append(part)
    order = {"input": -1, "last": n_layers}
    return tuple(sorted(dict.fromkeys(out), key=lambda p: order.get(p, int(p) if p.isdigit()
                                                                    else 0)))


@dataclass(frozen=True)
class Setting:
    """One setting: its single name and everything the front ends need to offer it."""

    name: str
    help: str
    kind: Kind
    default: Any = None
    minimum: int | None = None
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    #: whether it belongs to :class:`AuditSettings` (else it is a loading setting)
    audit: bool = True

    @property
    def option(self) -> str:
        """The command-line flag: ``--words``, ``--trust-remote-code``, ``--no-cache``."""
        flag = self.name.replace("_", "-")
        return f"--no-{flag}" if self.kind == "bool" and self.default is True else f"--{flag}"

    @property
    def pytest_option(self) -> str:
        """The pytest flag: ``--normtest-words``, ``--normtest-no-cache``."""
        return "--normtest-" + self.option[2:]

    def check(self, value: Any, origin: str = "") -> Any:
        """``value`` validated and normalised, or a NormtestError that names ``origin``."""
        where = f"{origin}: " if origin else ""
        if value is None and self.kind in ("path", "str") and self.default is None:
            return None
        try:
            return self._checked(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise NormtestError(f"{where}{self.name} = {value!r}: {exc}") from None

    def _checked(self, value: Any) -> Any:
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
                    value = int(value)
                else:
                    raise TypeError("give a whole number")
            if self.minimum is not None and value < self.minimum:
                raise ValueError(f"must be at least {self.minimum}")
            return int(value)
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise TypeError("give true or false")
            return value
        if self.kind in ("str", "path"):
            if not isinstance(value, str | Path):
                raise TypeError("give a string" if self.kind == "str" else "give a path")
            text = str(value)
            if self.choices and text not in self.choices:
                raise ValueError(f"choose one of {', '.join(self.choices)}")
            return text
        if isinstance(value, str | Path):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str | Path)
                                                           for v in value):
            raise TypeError("give a list of paths" if self.kind == "paths"
                            else "give a list of names")
        return tuple(str(v) for v in value)

    def argparse_type(self) -> Callable[[str], Any]:
        """The converter argparse (and pytest) call on the text of a flag."""
        def convert(text: str) -> Any:
            if self.kind in ("paths", "names"):  # one item of a list flag
                return text
            try:
                return self._checked(int(text) if self.kind == "int" and _is_int(text) else text)
            except (TypeError, ValueError) as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None

        convert.__name__ = self.kind  # argparse names the type in its messages
        return convert


def _is_int(text: str) -> bool:
    return text.strip().lstrip("+-").isdigit()


#: Sample sizes for a purpose (``--profile``): a pull request, the default, and a release (about
#: the sizes the power analysis of the embedded models asks for to decide their undecided rows).
#: A size given explicitly (command line, configuration, pytest option) wins over the profile;
#: under ``quick`` and ``standard`` ``normtest audit`` grows --words and --sentences from the
#: profile's until every line's controls have the power they need (``--autosize``; the quick
#: sizes as they are, for speed, with ``--no-autosize``).
#: The fewest documents the text claim's sentences come from: the cluster bootstrap's false
#: PASS rate was calibrated at 40 clusters (0.045; docs/statistics.md), and is liberal below.
TEXT_CLUSTERS = 40
#: Sentences per document of the text claim's sample (one document per ten sentences): its
#: bootstrap resamples documents, so its precision grows with them.
SENTENCES_PER_DOCUMENT = 10
#: Where the text claim's documents come from: news, encyclopedia articles and technical prose,
#: so that its clusters span more than one kind of text (docs/statistics.md, "Text level").
TEXT_SOURCES = ("lee", "wiki", "pydoc")
#: Where the CER documents come from (documents of 200 words or more).
DOCUMENT_SOURCES = ("lee", "wiki")

#: The sizes an audit may choose for itself (``--autosize``; normtest.audit.sizing): those its
#: lines' power at the margin follows.
SIZABLE = ("words", "sentences")

PROFILES: dict[str, dict[str, int]] = {
    "quick": {"words": 1000, "documents": 40, "sentences": 80, "resamples": 400},
    "standard": {},
    "thorough": {"words": 20000, "documents": 600, "sentences": 1280, "resamples": 2000},
}

SETTINGS: tuple[Setting, ...] = (
    Setting("profile", "sample sizes for a purpose: quick (a pull request), standard (the "
            "default) or thorough (a release); --words, --documents, --sentences and "
            "--resamples given explicitly win, and under quick and standard the audit grows "
            "--words and --sentences where its lines need the power (--no-autosize: not)",
            "str", "standard", choices=tuple(PROFILES)),
    Setting("seed", "random seed of the samples and the bootstrap (default 0)", "int", 0,
            minimum=0, metavar="N"),
    # the sample sizes come from the power analysis of the embedded models (docs/statistics.md,
    # "Power at the defaults"): what decides their confirmatory rows within minutes on two cores
    Setting("words", "word sample size (default 5000)", "int", 5000, minimum=10, metavar="N"),
    Setting("documents", "documents whose prefixes the CER claims follow (default 150)", "int",
            150, minimum=10, metavar="N"),
    Setting("sentences", "sentences for the text claim, from at least 40 documents, ten per "
            "document beyond (default 240)", "int",
            240, minimum=10, metavar="N"),
    Setting("resamples", "bootstrap resamples (default 1000)", "int", 1000, minimum=100,
            metavar="N"),
    Setting("exploratory_intervals", "how an exploratory row's interval is read where an "
            "analytic one is calibrated (a Spearman ρ over words, its partial ρ beyond the "
            "baseline, the difference of two sharing x): analytic (Fisher's z with the "
            "Bonett–Wright error; the default) or bootstrap; the rows that decide a line and "
            "the controls are always bootstrapped", "str", "analytic",
            choices=("analytic", "bootstrap")),
    Setting("scope", "which variants run: standard (last layer; raw, Zipf-centred and "
            "Zipf-whitened geometry; the default) or full (every declared variant)", "str",
            "standard", choices=("standard", "full")),
    Setting("layers", "a layer profile: the word, text and CER claims measured at every layer "
            "(all: the input embeddings, hidden states 0..L−1 and the last) or at the listed "
            "ones (e.g. 0,3,last); every layer comes from the same forward pass, and the rows "
            "below the last layer are exploratory", "str", None, metavar="all|LIST"),
    Setting("prefix_unit", "what a CER prefix length counts: tokens (model tokens, the default) "
            "or words (the same word grid for every tokenizer, as normtest compare uses)",
            "str", "tokens", choices=("tokens", "words")),
    Setting("corpus", "text files, folders or glob patterns (*.txt, *.txt.gz, *.txt.bz2, "
            "*.parquet with a text column; documents separated by blank lines) replacing the "
            "bundled corpora for documents, sentences, PMI and KL", "paths", (),
            metavar="PATH"),
    Setting("executor", "where the heavy work runs: local (this process, the default) or ray "
            "(embedding extraction and corpus counting as Ray work; pip install "
            "'normtest[ray]')", "str", "local", choices=("local", "ray")),
    Setting("ray_address", "the Ray cluster to join with --executor ray (default: a local "
            "one, or $RAY_ADDRESS)", "str", None, metavar="ADDRESS"),
    Setting("workers", "Ray workers (actors) for extraction and counting blocks (default: one "
            "per CPU of the cluster); with --executor local, processes for corpus counting and "
            "for the audit's rows, its robustness and its controls (default: $NORMTEST_WORKERS, "
            "else one per CPU; 1: this process only). The numbers do not depend on it",
            "int", None, minimum=1, metavar="N"),
    Setting("schedule", "how the audit's rows are spread over --workers: rows (each claim's "
            "first row here, what its rows share, then the other rows spread), claims (one "
            "process per claim, its rows together) or auto (claims from "
            "4 workers, rows below); the numbers do not depend on it", "str", "auto",
            choices=("auto", "rows", "claims")),
    Setting("robustness", "re-decide each scorecard line under every reasonable analysis its "
            "claims declare (geometry, IC source, word population, margin, …) and say whether "
            "the verdict is robust (--no-robustness: skip it)", "bool", True),
    Setting("controls", "put a positive and a negative control model, built from the audit's "
            "own data at its sample sizes, through each scorecard line: a line whose controls "
            "misbehave is invalid, never replicated or contradicted (--no-controls: skip them)",
            "bool", True),
    Setting("autosize", "under the quick and standard profiles, choose --words and --sentences "
            "so that every line's controls have power 0.8 at the smallest effect it must detect "
            "(within what the bundled data hold), before the model's geometry is read; a size "
            "given explicitly wins (--no-autosize: the profile's sizes as they are)", "bool",
            True, audit=False),
    Setting("checks", "claim files, folders or modules to load besides the catalogue "
            "(docs/claims.md)", "names", (), metavar="PATH_OR_MODULE", audit=False),
    Setting("kind", "how to read the model when its form does not decide it: static, "
            "precomputed, encoder, decoder or sentence (e.g. --kind encoder reads a "
            "sentence-transformers folder token by token; default: from what it is)", "str",
            None, choices=("static", "precomputed", "encoder", "decoder", "sentence"),
            audit=False),
    Setting("device", "cpu, cuda, cuda:N or auto, for transformers models (default auto: "
            "CUDA where available, else the CPU; the report's model says which ran)", "str",
            "auto", audit=False),
    Setting("dtype", "precision of a transformers model (default float32; part of the cache "
            "key)", "str", None, choices=("float32", "bfloat16", "float16"), audit=False),
    Setting("cache", "use the on-disk embedding cache (--no-cache: compute every vector and "
            "the design's sizing and controls; the stored corpus counts, sentence surprisal "
            "and kept simulations are still read)",
            "bool", True, audit=False),
    Setting("trust_remote_code", "let a transformers folder run its own Python code (its "
            "auto_map modules); only for folders whose code you have read (docs/security.md)",
            "bool", False, audit=False),
    Setting("vocabulary", "for a bare .npy matrix: the words of its rows, one per line", "path",
            None, metavar="PATH", audit=False),
)
BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


def add_cli_options(parser: Any, *, pytest: bool = False,
                    names: tuple[str, ...] | None = None) -> None:
    """Add every setting (or the ``names`` given) to an argparse parser, or to a pytest option
    group with ``pytest``.

    Defaults are None, so that what was given can be told from what was not (see
    :func:`given`); the defaults apply in :func:`resolve`.
    """
    add = parser.addoption if pytest else parser.add_argument
    for s in SETTINGS if names is None else [BY_NAME[n] for n in names]:
        flag = s.pytest_option if pytest else s.option
        dest = f"normtest_{s.name}" if pytest else s.name
        if s.kind == "bool":
            add(flag, dest=dest, action="store_const", const=not s.default, default=None,
                help=s.help)
        elif s.kind in ("paths", "names"):
            add(flag, dest=dest, action="extend", nargs="+", type=s.argparse_type(),
                default=None, metavar=s.metavar, help=s.help + " (repeatable)")
        else:
            add(flag, dest=dest, type=s.argparse_type(), default=None, metavar=s.metavar,
                choices=None, help=s.help)


def given(values: Mapping[str, Any] | argparse.Namespace, prefix: str = "") -> dict[str, Any]:
    """The settings a front end was given (not None), by name; lists flattened to tuples."""
    source = vars(values) if isinstance(values, argparse.Namespace) else dict(values)
    out: dict[str, Any] = {}
    for s in SETTINGS:
        value = source.get(prefix + s.name)
        if value is None:
            continue
        out[s.name] = tuple(value) if isinstance(value, list) else value
    return out


def from_config(data: Mapping[str, Any], origin: str) -> dict[str, Any]:
    """The settings among a ``[tool.normtest]`` table's keys, validated (others are left)."""
    return {name: BY_NAME[name].check(value, origin)
            for name, value in data.items() if name in BY_NAME}


def resolve(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting's value: its default, overridden by each layer in turn; the sizes a
    ``profile`` sets apply where no layer gave them."""
    values = {s.name: s.default for s in SETTINGS}
    given_names: set[str] = set()
    for layer in layers:
        chosen = {k: v for k, v in layer.items() if k in values and v is not None}
        values.update(chosen)
        given_names |= set(chosen)
    for name, size in PROFILES[values["profile"]].items():
        if name not in given_names:
            values[name] = size
    return values


def autosized(values: Mapping[str, Any], explicit: Mapping[str, Any]) -> tuple[str, ...]:
    """The sizes an audit chooses for itself (``AuditSettings.autosize``): under the ``quick``
    and ``standard`` profiles, with ``autosize`` on, each of --words and --sentences not given
    ``explicit``ly (on the command line or in a configuration)."""
    if not values.get("autosize") or values.get("profile") not in ("quick", "standard"):
        return ()
    return tuple(name for name in SIZABLE if name not in explicit)


def audit_settings(values: Mapping[str, Any], **extra: Any) -> AuditSettings:
    """The :class:`AuditSettings` of resolved values (plus Python-only ``extra`` fields)."""
    names = {f.name for f in fields(AuditSettings)}
    chosen = {k: v for k, v in values.items() if k in names and BY_NAME[k].audit}
    return AuditSettings(**chosen, **extra)


@dataclass(frozen=True)
class AuditSettings:
    """What an audit samples and how it resamples (the ``audit`` settings of :data:`SETTINGS`,
    their defaults taken from there, plus tuning knobs only Python sets)."""

    seed: int = BY_NAME["seed"].default
    words: int = BY_NAME["words"].default
    resamples: int = BY_NAME["resamples"].default
    alpha: float = 0.05
    #: fewest co-occurrences of a pair (PMI) and occurrences of a word (KL) in the corpus
    min_pair_count: int = 10
    min_word_count: int = 20
    max_pairs: int = 5_000
    #: CER: documents, and prefix lengths step, 2·step, … up to max_prefix model tokens
    documents: int = BY_NAME["documents"].default
    prefix_step: int = 16
    max_prefix: int = 128
    #: text claim: sentences, taken in turn from this many documents (the bootstrap clusters);
    #: None: one document per ten sentences (at least :data:`TEXT_CLUSTERS`), so that more
    #: sentences also means more clusters — the between-document spread is what limits the
    #: text claim's interval
    sentences: int = BY_NAME["sentences"].default
    sentence_documents: int | None = None
    #: text files or folders replacing the bundled corpora (documents, sentences, PMI and KL)
    corpus: tuple[str, ...] = BY_NAME["corpus"].default
    #: the causal LM whose surprisal is the text IC when the audited model is not one
    surprisal_model: str = "smollm2-135m"
    #: which variants run: ``standard`` or ``full`` (see normtest.audit.run.SCOPES)
    scope: str = BY_NAME["scope"].default
    #: a layer profile: None (the scope's representations), ``"all"`` or a comma list
    layers: str | None = None
    #: CER prefix lengths in model ``tokens`` or in ``words`` (a grid shared by tokenizers)
    prefix_unit: str = BY_NAME["prefix_unit"].default
    #: the profile the sample sizes came from (recorded in the report; it sets nothing here)
    profile: str = BY_NAME["profile"].default
    #: how the heavy work runs (it changes no number): ``local`` or ``ray``, the cluster to
    #: join, and how many workers (None: one per CPU)
    executor: str = BY_NAME["executor"].default
    ray_address: str | None = None
    workers: int | None = None
    #: how the rows are spread over the workers (normtest.audit.run.measure_spread)
    schedule: str = BY_NAME["schedule"].default
    #: re-decide each scorecard line under its declared specifications
    #: (normtest.scorecard.robustness)
    robustness: bool = BY_NAME["robustness"].default
    #: a positive and a negative control model through each line (normtest.scorecard.controls)
    controls: bool = BY_NAME["controls"].default
    #: how an interval is read where an analytic one holds (an unclustered Spearman ρ and the
    #: difference of two): ``bootstrap`` (the audit's rows) or ``analytic`` (what the robustness
    #: analysis uses for its many specifications; docs/statistics.md, "Robustness")
    intervals: str = "bootstrap"
    #: ``analytic``: the audit's exploratory rows (they decide no line) are read with an
    #: analytic interval where one holds, as ``intervals="analytic"`` reads them; ``bootstrap``:
    #: as the confirmatory rows (normtest.claims.measuring.remeasure)
    exploratory_intervals: str = BY_NAME["exploratory_intervals"].default
    #: the sizes the audit chooses for itself before it reads the model's geometry
    #: (normtest.audit.sizing; ``normtest audit`` names those not given explicitly)
    autosize: tuple[str, ...] = ()
    #: measure each row beyond its claim's baseline as well (the robustness analyses, which
    #: re-decide lines as stated, leave it out: docs/statistics.md, "Robustness")
    beyond: bool = True
    #: beside each row with a baseline, the readings reported but never judged (the paired
    #: difference, the artefact reading, a text row's within-document reading); the controls,
    #: which judge only the status and the beyond reading, leave them out
    readings: bool = True

    def __post_init__(self) -> None:
        unknown = [n for n in self.autosize if n not in SIZABLE]
        if unknown:
            raise NormtestError(f"autosize names sizes an audit can choose ({', '.join(SIZABLE)})"
                                f", got {', '.join(map(str, unknown))}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise NormtestError(
                f"the seed must be a whole number ≥ 0 (e.g. --seed 0), got {self.seed!r}"
            )
        if self.profile not in PROFILES:
            raise NormtestError(
                f"profile must be one of {', '.join(PROFILES)}, got {self.profile!r}"
            )
        if self.scope not in BY_NAME["scope"].choices:
            raise NormtestError(
                f"scope must be one of {', '.join(BY_NAME['scope'].choices)}, got {self.scope!r}"
            )
        if self.prefix_unit not in BY_NAME["prefix_unit"].choices:
            raise NormtestError(
                f"prefix_unit must be tokens or words, got {self.prefix_unit!r}"
            )
        if self.layers is not None:
            parse_layers(self.layers)  # a bad list is refused before any work
        if isinstance(self.corpus, str):
            object.__setattr__(self, "corpus", (self.corpus,))

    def representations(self, n_layers: int | None) -> tuple[str, ...] | None:
        """The representations a layer profile measures for a model with ``n_layers`` blocks
        (None: no profile). ``all`` is ``input``, ``0`` … ``L−1`` and ``last`` (= L)."""
        if self.layers is None:
            return None
        return layer_names(parse_layers(self.layers), n_layers)

    @property
    def text_documents(self) -> int:
        """How many documents the text claim's sentences come from (see ``sentence_documents``)."""
        if self.sentence_documents is not None:
            return self.sentence_documents
        return max(TEXT_CLUSTERS, math.ceil(self.sentences / SENTENCES_PER_DOCUMENT))

    def recorded(self) -> dict[str, Any]:
        """The settings as the report records them (``provenance.audit_settings``)."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in fields(self)}


#: Names older reports used for a setting (read back by the gate from a baseline).
RENAMED = {"n_resamples": "resamples"}


