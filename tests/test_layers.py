"""Layer profiles (``--layers``): the setting, the stash that serves every layer of a profile from
one forward pass, the audit's profile rows, and their renderings (Markdown, HTML, terminal and
``normtest report --format layers``).

The audit runs MiniLM-L6 (6 layers) once with ``layers="all"`` and once without, each on its own
temporary embedding cache, so that the last layer's rows of the profile are compared with rows
computed without any stash; the stash itself is compared bitwise with plain passes on MiniLM-L6
(an encoder) and on a tiny random LLaMA (a decoder, built as tests/test_architectures.py builds
it: SmolLM2-135M's passes cost seconds each on two busy cores).
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from normtest.audit.report import Report  # noqa: E402
from normtest.audit.run import profile_layers, run_audit, variant_key, variants  # noqa: E402
from normtest.base.settings import AuditSettings, layer_names, parse_layers  # noqa: E402
from normtest.claims.catalogue import get  # noqa: E402
from normtest.cli.common import EXIT_OK, EXIT_USAGE  # noqa: E402
from normtest.cli.main import main  # noqa: E402
from normtest.data.common import as_layer  # noqa: E402
from normtest.errors import NormtestError  # noqa: E402
from normtest.render.formats import render  # noqa: E402
from normtest.render.layers import (  # noqa: E402
    in_profile,
    layer_profiles,
    layer_table,
    profile_summary,
    report_profiles,
)
from normtest.render.terminal import audit_text  # noqa: E402
from normtest.verdict.result import Result, Verdict  # noqa: E402

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

CLAIMS = ["word.norm_ic", "cer.fixed_point"]
#: the smallest sizes: the tests hold the profile to plain audits and check its structure
SIZES = {"words": 200, "documents": 10, "sentences": 24, "resamples": 200}
#: MiniLM-L6's representations in a full profile
REPS = ("input", "0", "1", "2", "3", "4", "5", "last")
WORDS = ["cat", "information", "unbelievably", "the", "river", "photosynthesis", "a",
         "quietly", "antidisestablishmentarianism", "mat"]
DOCUMENTS = [
    "The river rose above the bridge during the night, and by morning the town waited on the "
    "hill for the water to fall again while the bells of the old church rang out.",
    "Information theory measures surprise in bits: rare words carry more of it than common "
    "ones, and a long text carries more than a short one.",
]
GRIDS = [[4, 9, 15, 22], [3, 7, 12]]


# -- 1. the setting ------------------------------------------------------------------------------
def test_parse_layers_reads_all_and_comma_lists() -> None:
    assert parse_layers("all") == ("all",)
    assert parse_layers("  all ") == ("all",)
    assert parse_layers("0,3,last") == ("0", "3", "last")
    assert parse_layers(" input , 12,last ") == ("input", "12", "last")
    assert parse_layers("0,,3") == ("0", "3")  # empty items are skipped, not refused


@pytest.mark.parametrize("text", ["", "   ", "bogus", "0,x", "-1", "1.5", "ALL", "all,0",
                                  "first", "0;3", "last,2a"])
def test_parse_layers_refuses_bad_text(text: str) -> None:
    with pytest.raises(NormtestError, match="--layers takes all or a comma list"):
        parse_layers(text)


def test_parse_layers_refuses_what_is_not_text() -> None:
    with pytest.raises(NormtestError, match="--layers"):
        parse_layers(3)  # type: ignore[arg-type]


def test_layer_names() -> None:
    assert layer_names(("all",), 6) == REPS
    assert layer_names(("all",), 1) == ("input", "0", "last")
    # a list is put in layer order (numbers as numbers) and always includes the last layer
    assert layer_names(("3", "0"), 6) == ("0", "3", "last")
    assert layer_names(("10", "2"), 12) == ("2", "10", "last")
    assert layer_names(("last", "input", "2"), 6) == ("input", "2", "last")
    assert layer_names(("input",), 6) == ("input", "last")
    # layer L is "last"; duplicates and leading zeros collapse
    assert layer_names(("6",), 6) == ("last",)
    assert layer_names(("0", "6", "last"), 6) == ("0", "last")
    assert layer_names(("03", "3", "3"), 6) == ("3", "last")
    assert layer_names(("0",), 6) == ("0", "last")


def test_layer_names_refuses_missing_layers() -> None:
    with pytest.raises(NormtestError, match=r"layer 7 does not exist.*0\.\.6"):
        layer_names(("0", "7"), 6)
    with pytest.raises(NormtestError, match="no hidden layers"):
        layer_names(("all",), None)
    with pytest.raises(NormtestError, match="no hidden layers"):
        layer_names(("0",), None)


def test_audit_settings_layers() -> None:
    with pytest.raises(NormtestError, match="bogus"):
        AuditSettings(layers="bogus")
    with pytest.raises(NormtestError, match="prefix_unit"):
        AuditSettings(prefix_unit="characters")
    assert AuditSettings().layers is None and AuditSettings().prefix_unit == "tokens"
    assert AuditSettings().representations(6) is None
    assert AuditSettings(layers="all").representations(6) == REPS
    assert AuditSettings(layers="4,1").representations(6) == ("1", "4", "last")
    assert AuditSettings(layers="all", prefix_unit="words").recorded()["layers"] == "all"
    with pytest.raises(NormtestError, match="layer 9 does not exist"):
        AuditSettings(layers="9").representations(6)


@pytest.mark.parametrize("text", ["²", "0,³"])
def test_non_ascii_digits_are_refused_as_bad_text(text: str) -> None:
    with pytest.raises(NormtestError):
        AuditSettings(layers=text).representations(6)


def test_a_list_of_no_layers_is_refused() -> None:
    with pytest.raises(NormtestError):
        parse_layers(",")


def test_variants_take_a_profiles_representations() -> None:
    claim = get("word.norm_ic")
    plain = variants(claim, "encoder", scope="standard")
    profiled = variants(claim, "encoder", scope="standard", representations=("input", "2", "last"))
    assert {v["representation"] for v in plain} == {"last"}
    assert {v["representation"] for v in profiled} == {"input", "2", "last"}
    assert len(profiled) == 3 * len(plain)
    assert [v for v in profiled if v["representation"] == "last"] == plain
    # a static model has one representation: the profile does not add an axis
    static = variants(claim, "static", scope="standard", representations=("input", "2", "last"))
    assert static == variants(claim, "static", scope="standard")
    assert all("representation" not in v for v in static)


# -- 2. the stash: every layer of a profile from one forward pass -------------------------------
def _counted(adapter: Any, call: Callable[[], Any]) -> tuple[Any, int, int]:
    """(what ``call`` returns, forward passes it ran, passes served from the stash)."""
    stash = adapter.layer_stash
    passes, served = stash.passes, stash.served
    out = call()
    return out, stash.passes - passes, stash.served - served


@pytest.fixture
def keeping() -> Iterator[list[Any]]:
    """Adapters given ``keep_layers`` in a test; stopped and emptied afterwards (the models are
    shared by the session)."""
    used: list[Any] = []
    yield used
    for adapter in used:
        adapter.keep_layers(())


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A randomly initialised 4-layer LLaMA decoder (hidden size 32) with SmolLM2's tokenizer,
    as tests/test_architectures.py builds it: a decoder whose passes cost next to nothing."""
    import normtest
    from normtest.adapters.embedded import SMOLLM2_DOCUMENT_SEPARATOR, smollm2_folder

    folder = tmp_path_factory.mktemp("tiny-llama")
    tok = transformers.AutoTokenizer.from_pretrained(smollm2_folder())
    config = transformers.LlamaConfig(
        vocab_size=len(tok), hidden_size=32, num_hidden_layers=4, num_attention_heads=2,
        num_key_value_heads=2, intermediate_size=64, max_position_embeddings=512,
        bos_token_id=SMOLLM2_DOCUMENT_SEPARATOR, eos_token_id=SMOLLM2_DOCUMENT_SEPARATOR)
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return normtest.load(folder, cache=False, progress=False, name="tiny-llama",
                         start_token_id=SMOLLM2_DOCUMENT_SEPARATOR,
                         end_token_id=SMOLLM2_DOCUMENT_SEPARATOR)


ADAPTERS = [("minilm", True), ("minilm", False), ("tiny_llama", True), ("tiny_llama", False)]


@pytest.mark.parametrize(("model", "fast"), ADAPTERS, ids=["minilm", "minilm-reference",
                                                            "llama", "llama-reference"])
def test_token_vectors_from_the_stash_equal_plain_passes(
        model: str, fast: bool, request: pytest.FixtureRequest, keeping: list[Any]) -> None:
    base = request.getfixturevalue(model)
    # small batches, so that several passes are kept and served by their inputs
    adapter = base.variant(max_tokens_per_batch=40, fast=fast)
    top = adapter.n_layers
    layers: list[Any] = [0, top // 2, "last"]
    plain, counts = {}, []
    for layer in layers:
        batch, passes, served = _counted(
            adapter, lambda layer=layer: adapter.token_vectors(WORDS, layer=layer, words=True))
        plain[layer] = (batch.vectors.copy(), batch.offsets.copy())
        counts.append(passes)
        assert served == 0
    one = counts[0]
    assert one >= 2 and counts == [one] * len(layers)  # several batches, the same for each layer
    keeping.append(adapter)
    adapter.keep_layers(layers)
    kept = {}
    for order, layer in enumerate(reversed(layers)):  # the first asked runs, the rest are served
        batch, passes, served = _counted(
            adapter, lambda layer=layer: adapter.token_vectors(WORDS, layer=layer, words=True))
        kept[layer] = (batch.vectors.copy(), batch.offsets.copy())
        assert (passes, served) == ((one, 0) if order == 0 else (0, one)), layer
    for layer in layers:
        assert kept[layer][0].dtype == plain[layer][0].dtype == np.float32
        assert np.array_equal(kept[layer][1], plain[layer][1])
        assert kept[layer][0].tobytes() == plain[layer][0].tobytes(), layer
    assert not np.array_equal(plain[0][0], plain["last"][0])  # the layers do differ
    # each kept layer is read once: asking again runs the model again, with the same result
    again, passes, served = _counted(
        adapter, lambda: adapter.token_vectors(WORDS, layer=0, words=True))
    assert (passes, served) == (one, 0)
    assert again.vectors.tobytes() == plain[0][0].tobytes()


@pytest.mark.parametrize("model", ["minilm", "tiny_llama"])
def test_prefix_vectors_from_the_stash_equal_plain_passes(
        model: str, request: pytest.FixtureRequest, keeping: list[Any]) -> None:
    adapter = request.getfixturevalue(model)
    top = adapter.n_layers
    layers: list[Any] = [1, top // 2, "last"]
    pooling = "mean"
    adapter.clear_prefix_memo()
    adapter.prefix_vectors_many(DOCUMENTS, GRIDS, pooling)  # a decoder probes its one pass once
    adapter.clear_prefix_memo()

    def prefixes(layer: Any) -> list[np.ndarray]:
        out = [m.copy() for m in adapter.prefix_vectors_many(DOCUMENTS, GRIDS, pooling,
                                                             layer=layer)]
        adapter.clear_prefix_memo()  # the next layer must come from the model or the stash
        return out

    plain, counts = {}, []
    for layer in layers:
        plain[layer], passes, served = _counted(adapter, lambda layer=layer: prefixes(layer))
        counts.append(passes)
        assert served == 0
    one = counts[0]
    assert one >= 1 and counts == [one] * len(layers)
    keeping.append(adapter)
    adapter.keep_layers(layers)
    kept = {}
    total_passes = total_served = 0
    for layer in layers:
        kept[layer], passes, served = _counted(adapter, lambda layer=layer: prefixes(layer))
        total_passes += passes
        total_served += served
    assert total_passes == one  # three layers for the price of one
    assert total_served == (len(layers) - 1) * one
    for layer in layers:
        assert len(kept[layer]) == len(plain[layer]) == len(DOCUMENTS)
        for a, b, grid in zip(kept[layer], plain[layer], GRIDS, strict=True):
            assert a.shape == b.shape == (len(grid), adapter.dim)
            assert a.tobytes() == b.tobytes(), layer
    assert not np.array_equal(plain[1][0], plain["last"][0])


def test_the_audits_keep_gives_identical_vectors(minilm: Any, keeping: list[Any]) -> None:
    """What ``profile_layers`` tells the adapter to keep leaves each layer's vectors as they are."""
    plain = {name: minilm.token_vectors(WORDS, layer=as_layer(name), words=True).vectors.copy()
             for name in ("input", "0", "3", "last")}
    keeping.append(minilm)
    names = profile_layers(minilm, "encoder", AuditSettings(layers="input,0,3"))
    assert names == ("input", "0", "3", "last")
    for name in reversed(names):
        got = minilm.token_vectors(WORDS, layer=as_layer(name), words=True).vectors
        assert got.tobytes() == plain[name].tobytes(), name


def test_the_audits_keep_runs_each_batch_once(minilm: Any, keeping: list[Any]) -> None:
    _, one, _ = _counted(minilm, lambda: minilm.token_vectors(WORDS, layer="last", words=True))
    keeping.append(minilm)
    names = profile_layers(minilm, "encoder", AuditSettings(layers="0,3"))
    passes = served = 0
    for name in names:
        _, p, s = _counted(minilm, lambda name=name: minilm.token_vectors(
            WORDS, layer=as_layer(name), words=True))
        passes, served = passes + p, served + s
    assert (passes, served) == (one, (len(names) - 1) * one)


# -- 3. an audit with a profile ------------------------------------------------------------------
@dataclasses.dataclass
class Profiled:
    report: Report
    #: what the adapter's stash kept and held right after the audit
    layers_after: frozenset[Any]
    plain: Report


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[Profiled]:
    """MiniLM-L6 audited with ``layers="all"`` and without, each on a fresh cache (~45 s)."""
    from normtest.models.cache.adapter import CachedAdapter
    from normtest.models.cache.embeddings import EmbeddingCache
    from normtest.models.registry import load

    model = load("minilm-l6", cache_dir=tmp_path_factory.mktemp("cache-profile"),
                 progress=False)
    report = run_audit(model, claim_ids=CLAIMS, settings=AuditSettings(**SIZES, layers="all"))
    layers_after = frozenset(model.layer_stash.layers)
    model.keep_layers(())
    # the session's MiniLM (already loaded), read through a cache of its own
    plain_model = CachedAdapter(minilm, EmbeddingCache(tmp_path_factory.mktemp("cache-plain")))
    plain = run_audit(plain_model, claim_ids=CLAIMS, settings=AuditSettings(**SIZES))
    assert minilm.layer_stash.layers == frozenset()  # no profile: nothing kept
    yield Profiled(report, layers_after, plain)


def _key(r: Result) -> tuple[str | None, str]:
    return r.claim, variant_key({k: v for k, v in sorted(r.variant.items())
                                 if k != "representation"})


def test_a_profile_measures_every_layer(audited: Profiled) -> None:
    rows = audited.report.results
    groups: dict[tuple[str | None, str], list[str]] = {}
    for r in rows:
        assert r.verdict not in (Verdict.ERROR, Verdict.SKIPPED), r.id
        groups.setdefault(_key(r), []).append(r.variant["representation"])
    assert {c for c, _ in groups} == set(CLAIMS)
    for key, reps in groups.items():
        assert sorted(reps, key=REPS.index) == list(REPS), key
    assert len(rows) == len(REPS) * len(audited.plain.results)


def test_the_last_layers_rows_are_the_plain_audits(audited: Profiled) -> None:
    last = {_key(r): r for r in audited.report.results if r.variant["representation"] == "last"}
    plain = {_key(r): r for r in audited.plain.results}
    assert {r.variant["representation"] for r in audited.plain.results} == {"last"}
    assert set(last) == set(plain)
    for key, row in plain.items():
        got = last[key]
        assert (got.verdict, got.estimate, got.ci, got.role) == \
            (row.verdict, row.estimate, row.ci, row.role), key
    assert any(r.confirmatory for r in plain.values())


def test_rows_below_the_last_layer_are_exploratory(audited: Profiled) -> None:
    below = [r for r in audited.report.results if r.variant["representation"] != "last"]
    assert len(below) == (len(REPS) - 1) * len(audited.plain.results)
    assert all(r.role == "exploratory" and not r.confirmatory for r in below)
    numeric = [r for r in below if r.variant["representation"].isdigit()]
    assert len(numeric) == 6 * len(audited.plain.results)
    assert all(in_profile(r) for r in numeric)
    assert not any(in_profile(r) for r in audited.report.results
                   if not r.variant["representation"].isdigit())
    confirmatory = {r.id for r in audited.report.results if r.confirmatory}
    assert confirmatory == {r.id for r in audited.plain.results if r.confirmatory}


def test_provenance_records_the_profile(audited: Profiled, tmp_path: Path) -> None:
    provenance = audited.report.provenance
    assert provenance["layers"] == list(REPS)
    assert provenance["n_layers"] == 6
    assert "layers" not in audited.plain.provenance and "n_layers" not in audited.plain.provenance
    again = Report.read(audited.report.write(tmp_path / "report.json"))
    assert again.provenance["layers"] == list(REPS) and again.provenance["n_layers"] == 6


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def test_the_stored_plot_data_leaves_out_hidden_layers(audited: Profiled) -> None:
    keys = list(_keys(audited.report.data))
    assert not [k for k in keys if re.search(r"representation=\d", k)]
    for rep in ("input", "last"):  # the series that stay are there
        assert any(f"representation={rep}" in k for k in keys), rep
    plain = set(audited.plain.data["words"]["squared_norms"])
    assert set(audited.report.data["words"]["squared_norms"]) == plain | {
        k.replace("representation=last", "representation=input") for k in plain}
    curves = audited.report.data["prefixes"]["curves"]
    assert {k for k in curves if "representation=last" in k} == \
        set(audited.plain.data["prefixes"]["curves"])


def test_the_audit_stops_keeping_layers_with_the_profile(audited: Profiled) -> None:
    assert audited.layers_after == frozenset()


def test_a_static_model_refuses_a_profile(glove: Any) -> None:
    for layers in ("all", "0,last"):
        with pytest.raises(NormtestError, match="transformers encoder or decoder"):
            run_audit(glove, claim_ids=["word.norm_ic"],
                      settings=AuditSettings(words=60, resamples=100, layers=layers))


# -- 4. rendering --------------------------------------------------------------------------------
def test_layer_profiles_follow_each_claim_in_layer_order(audited: Profiled) -> None:
    profiles = layer_profiles(audited.report.results, 6)
    assert {p.claim for p in profiles} == set(CLAIMS)
    for p in profiles:
        assert [r.variant["representation"] for r in p.rows] == list(REPS)
        assert p.positions == (-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
        assert {_key(r) for r in p.rows} == {_key(p.rows[-1])}
        assert p.label == ", ".join(v for k, v in p.rows[-1].variant.items()
                                    if k != "representation")
    # per claim: the variants confirmatory at the last layer, else the claim's first variant
    for claim in CLAIMS:
        followed = [p.rows[-1].id for p in profiles if p.claim == claim]
        confirmatory = [r.id for r in audited.report.results
                        if r.claim == claim and r.confirmatory]
        first = next(r for r in audited.report.results if r.claim == claim)
        last_of_first = next(r.id for r in audited.report.results
                             if _key(r) == _key(first) and r.variant["representation"] == "last")
        assert followed == (confirmatory[:4] or [last_of_first]), claim
    assert report_profiles(audited.report) == (profiles, 6)
    assert report_profiles(audited.plain) is None


def test_profile_summary_lines(audited: Profiled) -> None:
    profiles = layer_profiles(audited.report.results, 6)
    for p in profiles:
        line = profile_summary(p)
        assert line.startswith(f"{p.claim}[{p.label}]: ")
        passing = [r for r in p.rows if r.verdict is Verdict.PASS]
        if not passing:
            assert "PASS at no layer" in line
        elif len(passing) == len(p.rows):
            assert "PASS at every layer" in line
        else:
            assert f"of {len(p.rows)}" in line and passing[-1].variant["representation"] in line
        greater = p.rows[-1].criterion is not None and p.rows[-1].criterion.direction == "greater"
        assert ("; peak " in line) == greater
        if greater:
            best = max(p.rows, key=lambda r: r.estimate)
            assert line.endswith(f"at layer {best.variant['representation']}")
    assert any("; peak " in profile_summary(p) for p in profiles)  # word.norm_ic is "greater"


def test_profile_summary_names_runs_of_layers(audited: Profiled) -> None:
    (p, *_) = [p for p in layer_profiles(audited.report.results, 6) if p.claim == "cer.fixed_point"]
    passing = {"input", "0", "1", "2", "4", "last"}
    rows = tuple(dataclasses.replace(r, verdict=Verdict.PASS if r.variant["representation"] in
                                     passing else Verdict.FAIL) for r in p.rows)
    line = profile_summary(dataclasses.replace(p, rows=rows))
    assert "PASS at layers input, 0–2, 4, last of 8" in line
    none = tuple(dataclasses.replace(r, verdict=Verdict.FAIL) for r in p.rows)
    assert "PASS at no layer" in profile_summary(dataclasses.replace(p, rows=none))
    every = tuple(dataclasses.replace(r, verdict=Verdict.PASS) for r in p.rows)
    assert "PASS at every layer" in profile_summary(dataclasses.replace(p, rows=every))


def test_layer_table(audited: Profiled) -> None:
    profiles = layer_profiles(audited.report.results, 6)
    table = layer_table(profiles)
    assert table[0] == ["row", *REPS]
    assert len(table) == len(profiles) + 1
    for p, row in zip(profiles, table[1:], strict=True):
        assert row[0] == f"{p.claim}[{p.label}]"
        assert len(row) == len(REPS) + 1
        for cell, r in zip(row[1:], p.rows, strict=True):
            assert cell.endswith(" " + r.verdict.value)


def test_markdown_html_and_terminal_show_the_profile(audited: Profiled) -> None:
    profiles = layer_profiles(audited.report.results, 6)
    markdown = render(audited.report, "md")
    assert "### Layer profile" in markdown
    assert markdown.index("### Layer profile") < markdown.index("### Confirmatory rows")
    assert "| row | input | 0 | 1 | 2 | 3 | 4 | 5 | last |" in markdown
    assert "### Layer profile" not in render(audited.plain, "md")

    page = render(audited.report, "html")
    assert page.count('id="layers"') == 1 and "<h2>Layer profile</h2>" in page
    section = page[page.index('<section id="layers"'):]
    section = section[:section.index("</section>")]
    assert "<img" in section or "<svg" in section  # the figure

    text = audit_text(audited.report, width=240)
    assert "Layer profile over 8 representations" in text
    for p in profiles:
        assert profile_summary(p) in text
    assert "Layer profile" not in audit_text(audited.plain, width=240)


@pytest.fixture(scope="module")
def stored(audited: Profiled, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the profile's report.json, the plain audit's report.json)."""
    folder = tmp_path_factory.mktemp("reports")
    return (audited.report.write(folder / "profile.json"),
            audited.plain.write(folder / "plain.json"))


def test_report_command_draws_the_layer_profile(
        stored: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figures" / "layers.svg"
    assert main(["report", str(stored[0]), "--format", "layers", "--out", str(out)]) == EXIT_OK
    assert f"layer profile written to {out}" in capsys.readouterr().out
    root = ET.fromstring(out.read_bytes())
    assert root.tag.endswith("svg")
    assert "word.norm_ic" in out.read_text(encoding="utf-8")


def _clear_error(code: int, err: str, *needles: str) -> None:
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err and "normtest: error:" in err
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"


@pytest.mark.parametrize("out", [None, "layers.txt", "layers"])
def test_report_command_needs_a_figure_file(
        out: str | None, stored: tuple[Path, Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    args = ["report", str(stored[0]), "--format", "layers"]
    if out is not None:
        args += ["--out", str(tmp_path / out)]
    code = main(args)
    _clear_error(code, capsys.readouterr().err, "--format layers writes a figure", "--out")
    assert not list(tmp_path.iterdir())


def test_report_command_refuses_a_report_without_a_profile(
        stored: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "layers.svg"
    code = main(["report", str(stored[1]), "--format", "layers", "--out", str(out)])
    _clear_error(code, capsys.readouterr().err, "has no layer profile", "--layers")
    assert not out.exists()
