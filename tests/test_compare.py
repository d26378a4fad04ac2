"""``normtest compare``: two real models on one paired sample, stored reports compared again, the
paper's ModernBERT-vs-BERT claim confirmatory for that pair of architectures, and the errors.

The statistics of the paired differences (both ways, size and power) are in tests/test_paired.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from normtest.audit.compare import Comparison, compare_reports
from normtest.audit.report import Report
from normtest.claims.comparative import Pair, comparatives
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.verdict.result import Result, Verdict

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

SMALL = ["--documents", "10", "--sentences", "24", "--resamples", "200"]
CLAIMS = ["compare.cer.linearity", "compare.text.norm_surprisal"]
STATE = "compare.cer.linearity[first=minilm-l6,second=smollm2-135m,composition=state]"


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``normtest compare --model minilm-l6 --model smollm2-135m`` on the CER and text claims."""
    out = tmp_path_factory.mktemp("compare")
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["compare", "--model", "minilm-l6", "--model", "smollm2-135m", "--claims",
                     *CLAIMS, *SMALL, "--out", str(out), "--no-cache", "-q"])
    assert code == 0, buffer.getvalue()
    return out, buffer.getvalue()


def test_compare_two_real_models_on_a_word_grid(compared: tuple[Path, str]) -> None:
    out, printed = compared
    assert printed.startswith("normtest compare: minilm-l6 vs smollm2-135m")
    comparison = Comparison.read(out / "comparison.json")
    ids = {r.id for r in comparison.results}
    assert STATE in ids
    assert any(i.startswith("compare.text.norm_surprisal[") for i in ids)
    state = comparison.result(STATE)
    assert state.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE)
    assert state.details["states"] == "cls vs eos"
    assert state.role == "exploratory"  # the paper states nothing about this pair
    for report in comparison.reports:  # the same word grid, read as each model's own tokens
        assert report.provenance["prefix_unit"] == "words"
        assert report.data["prefixes"]["unit"] == "words"
    grids = [{(d, tuple(c["lengths"])) for d, c in _by_document(r)} for r in comparison.reports]
    assert grids[0] == grids[1]
    tokens = [r.data["prefixes"]["tokens"] for r in comparison.reports]
    assert tokens[0] != tokens[1]  # two tokenizers, one word grid
    for name in ("comparison.md", "comparison.html", "minilm-l6/report.json",
                 "smollm2-135m/report.json"):
        assert (out / name).is_file()
    assert "Leaderboard" in (out / "comparison.md").read_text()
    assert "cls vs eos" in printed


def _by_document(report: Report) -> list[tuple[str, dict[str, Any]]]:
    block = report.data["prefixes"]
    key = next(iter(block["curves"]))
    curve = block["curves"][key]
    docs: dict[str, dict[str, list[int]]] = {}
    for i, n in zip(curve["document"], curve["lengths"], strict=True):
        docs.setdefault(block["documents"][i], {"lengths": []})["lengths"].append(n)
    return list(docs.items())


def test_stored_reports_compare_again_identically(compared: tuple[Path, str],
                                                  tmp_path: Path) -> None:
    out, _ = compared
    first = Comparison.read(out / "comparison.json")
    code = main(["compare", "--report", str(out / "minilm-l6" / "report.json"),
                 "--report", str(out / "smollm2-135m" / "report.json"), "--claims", *CLAIMS,
                 "--resamples", "200", "--out", str(tmp_path), "-q"])
    assert code == 0
    again = Comparison.read(tmp_path / "comparison.json")
    assert [(r.id, r.verdict, r.estimate) for r in again.results] == \
        [(r.id, r.verdict, r.estimate) for r in first.results]


def test_a_token_grid_is_not_compared_on_growth(compared: tuple[Path, str]) -> None:
    out, _ = compared
    reports = [Report.read(out / m / "report.json") for m in ("minilm-l6", "smollm2-135m")]
    data = dict(reports[0].data)
    data["prefixes"] = {**data["prefixes"], "unit": "model tokens"}
    tokens = replace(reports[0], data=data)
    with pytest.raises(NormtestError, match="--prefix-unit words"):  # nothing could run
        compare_reports([tokens, reports[1]], ["compare.cer.linearity"])
    comparison = compare_reports([tokens, reports[1]], CLAIMS)
    skipped = comparison.result("compare.cer.linearity[first=minilm-l6,second=smollm2-135m]")
    assert skipped.verdict is Verdict.SKIPPED
    assert "--prefix-unit words" in skipped.reason
    assert any(r.claim == "compare.text.norm_surprisal" and r.measurement is not None
               for r in comparison.results)


def test_the_paper_s_modernbert_claim_is_confirmatory_for_that_pair() -> None:
    """The catalogue's expectation names ModernBERT (first) against BERT (second), CLS."""
    (claim,) = [c for c in comparatives() if c.id == "compare.cer.linearity"]
    assert "ModernBERT" in claim.source
    variant = {"composition": "state"}
    stated = claim.expectation({"architecture": "modernbert"}, {"architecture": "bert"}, variant)
    assert stated is not None and stated.verdict is Verdict.PASS
    assert claim.expectation({"architecture": "bert"}, {"architecture": "modernbert"},
                             variant) is None
    assert claim.expectation({"architecture": "modernbert"}, {"architecture": "bert"},
                             {"composition": "sqrt_n"}) is None


def test_tiny_modernbert_against_bert_is_a_confirmatory_row(tmp_path: Path) -> None:
    """Random tiny ModernBERT and BERT folders: the state row is confirmatory (Holm) and says
    what the paper expects; random weights may get any verdict."""
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    from normtest.adapters.embedded import minilm_folder
    from normtest.audit.compare import compare_models
    from normtest.base.settings import AuditSettings
    from normtest.models.registry import load

    tok = transformers.AutoTokenizer.from_pretrained(minilm_folder())
    small = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
             "intermediate_size": 64, "max_position_embeddings": 512}
    models = {
        "modernbert": transformers.ModernBertModel(transformers.ModernBertConfig(
            vocab_size=len(tok), **small, global_attn_every_n_layers=2, local_attention=16,
            pad_token_id=tok.pad_token_id, cls_token_id=tok.cls_token_id,
            sep_token_id=tok.sep_token_id, mask_token_id=tok.mask_token_id,
            bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id)),
        "bert": transformers.BertModel(transformers.BertConfig(
            vocab_size=len(tok), **small, pad_token_id=tok.pad_token_id)),
    }
    adapters = []
    for arch, model in models.items():
        torch.manual_seed(0)
        model.save_pretrained(tmp_path / arch, safe_serialization=True)
        tok.save_pretrained(tmp_path / arch)
        adapters.append(load(tmp_path / arch, cache=False, progress=False, name=f"tiny-{arch}"))
    comparison = compare_models(adapters, ["compare.cer.linearity"], suite="cer",
                                settings=AuditSettings(documents=12, resamples=200))
    row = comparison.result(
        "compare.cer.linearity[first=tiny-modernbert,second=tiny-bert,composition=state]")
    assert row.role == "confirmatory" and row.expected is Verdict.PASS
    assert row.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE)
    assert [r.model["architecture"] for r in comparison.reports] == ["modernbert", "bert"]
    others = [r for r in comparison.results if r is not row]
    assert others and all(r.role == "exploratory" for r in others)


def test_one_model_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--model", "minilm-l6"]) == 2
    assert "two models or more" in capsys.readouterr().err
    with pytest.raises(NormtestError, match="two models or more"):
        compare_reports([])


def test_renderings_escape_model_names(compared: tuple[Path, str]) -> None:
    from normtest.render.comparison import render_comparison_html, render_comparison_markdown

    out, _ = compared
    comparison = Comparison.read(out / "comparison.json")
    evil = "<script>alert(1)</script>|x"
    reports = [replace(comparison.reports[0], model={**comparison.reports[0].model,
                                                     "name": evil}), comparison.reports[1]]
    hostile = compare_reports(reports, ["compare.cer.linearity"])
    page = render_comparison_html(hostile)
    assert "<script>" not in page and "&lt;script&gt;" in page
    markdown = render_comparison_markdown(hostile)
    assert "<script>" not in markdown.replace("\\<script>", "")
    json.dumps(hostile.to_dict())  # JSON-ready


def test_pair_requires_the_data(compared: tuple[Path, str]) -> None:
    out, _ = compared
    reports = [Report.read(out / m / "report.json") for m in ("minilm-l6", "smollm2-135m")]
    assert Pair(*reports).missing("words") is not None
    assert Pair(*reports).missing("prefixes") is None


def test_word_comparison_pairs_a_static_model_with_an_encoder() -> None:
    """GloVe's one vector per word stands for every composition; MiniLM's rows are read at
    its last layer; both on the same words with the same IC."""
    from normtest.audit.run import run_audit
    from normtest.base.settings import AuditSettings
    from normtest.models.registry import load

    settings = AuditSettings(words=400, resamples=200, prefix_unit="words")
    reports = [run_audit(load(m, cache=False), ["word.norm_ic"],
                         settings=settings) for m in ("glove-6b-50d", "minilm-l6")]
    comparison = compare_reports(reports, ["compare.word.norm_ic"], settings)
    rows = {r.variant["composition"]: r for r in comparison.results}
    assert set(rows) == {"sqrt_n", "f_ind", "sum", "mean"}
    for r in rows.values():
        assert r.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE), r.reason
        assert r.measurement is not None and r.measurement.n >= 300


def test_reports_of_different_samples_are_refused(compared: tuple[Path, str]) -> None:
    out, _ = compared
    reports = [Report.read(out / m / "report.json") for m in ("minilm-l6", "smollm2-135m")]
    sample = {**reports[1].provenance["sample"], "seed": 7}
    other = replace(reports[1], provenance={**reports[1].provenance, "seed": 7,
                                            "sample": sample})
    with pytest.raises(NormtestError, match=r"different samples \(seed 0 vs 7\).*--seed 0"):
        compare_reports([reports[0], other])


def test_the_order_of_models_and_reports_is_kept(compared: tuple[Path, str],
                                                 tmp_path: Path) -> None:
    out, _ = compared
    code = main(["compare", "--report", str(out / "smollm2-135m" / "report.json"),
                 "--report", str(out / "minilm-l6" / "report.json"), "--claims",
                 "compare.cer.linearity", "--resamples", "200", "--out", str(tmp_path), "-q"])
    assert code == 0
    again = Comparison.read(tmp_path / "comparison.json")
    assert again.provenance["models"] == ["smollm2-135m", "minilm-l6"]
    assert all(r.variant["first"] == "smollm2-135m" for r in again.results)


def test_a_word_grid_keeps_strictly_growing_token_counts_within_the_text() -> None:
    """A tokenizer that is not prefix-consistent (a longer prefix with fewer tokens) or a prefix
    with more tokens than the whole text: those lengths are dropped, never read past the text."""
    from types import SimpleNamespace

    import numpy as np

    from normtest.data.information.documents import Document, PrefixPlan, on_token_grid

    text = " ".join(f"w{i}" for i in range(45))
    counts = {8: 10, 16: 12, 24: 11, 32: 12, 40: 60, 45: 50}  # the whole text: 50 tokens

    def tokenize(piece: str) -> SimpleNamespace:
        return SimpleNamespace(ids=list(range(counts[len(piece.split())])))

    adapter = SimpleNamespace(tokenize=tokenize, name="stub")
    plan = PrefixPlan(Document("d", text, "test"), 45, np.array([8, 16, 24, 32, 40]))
    (grid,) = on_token_grid(adapter, [plan])
    assert grid.lengths.tolist() == [8, 16]
    assert grid.tokens is not None and grid.tokens.tolist() == [10, 12]


# -- one sample, or no comparison ---------------------------------------------------------------
@pytest.fixture(scope="module")
def words(tmp_path_factory: pytest.TempPathFactory, glove: Any) -> Path:
    """GloVe's reports on 200 and on 300 words, written from scratch."""
    from normtest.audit.run import run_audit
    from normtest.base.settings import AuditSettings

    root = tmp_path_factory.mktemp("samples")
    for n in (200, 300):
        settings = AuditSettings(words=n, resamples=100, robustness=False, controls=False)
        run_audit(glove, ["word.norm_ic"], settings=settings).write(root / f"g{n}.json")
    return root


def test_reports_of_different_requested_sizes_are_refused(
        words: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """200 words against 300: the samples share about fifty words, which would pair by
    accident; the comparison is refused, naming both reports, what differs and the fix."""
    g200, g300 = words / "g200.json", words / "g300.json"
    assert main(["compare", "--report", str(g200), "--report", str(g300), "--out",
                 str(words / "out"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("normtest: error: ")
    assert f"glove-6b-50d ({g200}) and glove-6b-50d ({g300}) are on different samples " \
           "(words requested 200 vs 300)" in err
    assert "--words 200 for both" in err and "same model" in err
    # a model to audit with other sizes than a stored report's: refused before the audit
    import normtest.audit.several_models

    def no_audit(*args: Any, **kwargs: Any) -> list[Report]:
        raise AssertionError("audited before the samples were checked")

    monkeypatch.setattr(normtest.audit.several_models, "audit_models", no_audit)
    assert main(["compare", "--report", str(g200), "--model", "glove-6b-50d", "--words", "300",
                 "--out", str(words / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"glove-6b-50d ({g200}) and --model glove-6b-50d are on different samples " \
           "(words requested 200 vs 300)" in err
    # the Python API refuses alike, and reports of an older normtest (no sample recorded) by
    # their requested word count
    reports = [Report.read(g200), Report.read(g300)]
    with pytest.raises(NormtestError, match=r"words requested 200 vs 300"):
        compare_reports(reports, ["compare.word.norm_ic"])
    older = [replace(r, provenance={k: v for k, v in r.provenance.items() if k != "sample"})
             for r in reports]
    with pytest.raises(NormtestError, match=r"words requested 200 vs 300"):
        compare_reports(older, ["compare.word.norm_ic"])


def test_a_model_compared_with_itself_is_no_finding(
        words: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same model on the same sample: its differences are zero by construction, never
    INCONCLUSIVE rows presented as findings. Alone, refused; beside another model, its pair
    is left out and the output says so."""
    g200 = str(words / "g200.json")
    assert main(["compare", "--report", g200, "--report", g200, "--out", str(tmp_path),
                 "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "are the same model (glove-6b-50d, same revision) on the same sample" in err
    assert "zero by construction" in err
    # the same vectors under another name are the same model too
    other = Report.read(g200)
    renamed = replace(other, model={**other.model, "name": "glove-copy", "revision": "copy"})
    with pytest.raises(NormtestError, match=r"the same model \(the same vectors\)"):
        compare_reports([other, renamed], ["compare.word.norm_ic"])
    # beside a different model (here GloVe's squared norms given to other words)
    block = other.data["words"]
    norms = {k: v[::-1] for k, v in block["squared_norms"].items()}
    twin = replace(renamed, data={**other.data, "words": {**block, "squared_norms": norms}})
    comparison = compare_reports([other, Report.read(g200), twin], ["compare.word.norm_ic"])
    names = comparison.provenance["models"]
    assert comparison.provenance["same_model"] == [names[:2]]
    assert not [r for r in comparison.results
                if {r.variant["first"], r.variant["second"]} == set(names[:2])]
    assert comparison.results  # the other pairs are compared
    from normtest.render.comparison import comparison_text, render_comparison_markdown

    said = f"{names[0]} and {names[1]} are the same model"
    assert said in comparison_text(comparison, width=300)
    assert said in render_comparison_markdown(comparison)


def test_the_header_states_the_paired_count_as_measured(
        words: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stored 200-word report and a model audited next to it: the model draws the stored
    report's sample, and the header says what was requested and what was paired."""
    code = main(["compare", "--report", str(words / "g200.json"), "--model", "minilm-l6",
                 "--claims", "compare.word.norm_ic", "--suite", "word", "--resamples", "100",
                 "--no-robustness", "--no-controls", "--out", str(tmp_path), "-q"])
    out = capsys.readouterr().out
    assert code == 0, out
    comparison = Comparison.read(tmp_path / "comparison.json")
    assert comparison.reports[1].provenance["sample"]["words"] == 200
    (paired,) = {r.measurement.n for r in comparison.results if r.measurement is not None}
    shared = set(comparison.reports[0].data["words"]["words"]) \
        & set(comparison.reports[1].data["words"]["words"])
    assert paired == len(shared) and paired > 150
    line = out.splitlines()[1]
    assert line == (f"one sample for every model (seed 0; requested 200 words); paired as "
                    f"measured: {paired} words")
    assert f"paired as measured: {paired} words" in (tmp_path / "comparison.md").read_text()


def test_text_claims_on_a_static_model_name_the_model(capsys: pytest.CaptureFixture[str],
                                                      tmp_path: Path) -> None:
    code = main(["compare", "--model", "glove-6b-50d", "--model", "minilm-l6", "--claims",
                 "compare.text.norm_surprisal", "--sentences", "40", "--resamples", "100",
                 "--out", str(tmp_path), "-q"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("normtest: error: no claim could run on glove-6b-50d: ")
    assert "this model" not in err


def test_the_paper_pair_is_confirmatory_and_its_proxy_exploratory() -> None:
    """ModernBERT's CLS against BERT's is the paper's row; nomic-embed's first-token state
    against BERT's stands in for it where no ModernBERT weights are installed — exploratory,
    saying which pair it stands for, never counted as agreeing with the paper."""
    from normtest.claims.comparative import get_comparative
    from normtest.render.comparison import _expected

    claim = get_comparative("compare.cer.linearity")
    state = {"composition": "state"}
    paper = claim.expectation({"architecture": "modernbert"}, {"architecture": "bert"}, state)
    proxy = claim.expectation({"architecture": "nomic_bert"}, {"architecture": "bert"}, state)
    assert paper is not None and not paper.proxy and paper.verdict is Verdict.PASS
    assert proxy is not None and proxy.proxy and "standing for ModernBERT" in proxy.note
    assert claim.expectation({"architecture": "nomic_bert"}, {"architecture": "bert"},
                             {"composition": "sqrt_n"}) is None
    assert claim.expectation({"architecture": "bert"}, {"architecture": "nomic_bert"},
                             state) is None  # the order matters: the newer design first
    row = Result(Verdict.PASS, "", claim=claim.id, role="exploratory",
                 details={"proxy": proxy.note})
    assert _expected(row) == f"exploratory (proxy: {proxy.note})"
    assert _expected(Result(Verdict.PASS, "", claim=claim.id, expected=Verdict.PASS)) == "PASS"


def test_a_claim_runs_on_every_pair_holding_its_data(compared: tuple[Path, str]) -> None:
    """Beside a model without prefix or text series (GloVe among contextual models), the CER
    and text comparisons still run on the pairs that hold them; the others say why not."""
    out, _ = compared
    reports = [Report.read(out / m / "report.json") for m in ("minilm-l6", "smollm2-135m")]
    bare = replace(reports[0], data={},
                   model={**reports[0].model, "name": "no-series", "revision": "r0"})
    comparison = compare_reports([*reports, bare])
    measured = {r.claim for r in comparison.results if r.verdict is not Verdict.SKIPPED}
    assert set(CLAIMS) <= measured
    skipped = [r for r in comparison.results if r.verdict is Verdict.SKIPPED]
    assert skipped and all("no-series" in r.variant.values() for r in skipped)
