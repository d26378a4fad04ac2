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

from normtest.cli import main
from normtest.comparison import Comparison, Pair, comparatives, compare_reports
from normtest.errors import NormtestError
from normtest.report import Report
from normtest.result import Verdict

SMALL = ["--documents", "12", "--sentences", "40", "--resamples", "200"]
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
    from normtest.comparison import compare_models
    from normtest.models import load
    from normtest.settings import AuditSettings

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
    from normtest.audit import run_audit
    from normtest.models import load
    from normtest.settings import AuditSettings

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
    other = replace(reports[1], provenance={**reports[1].provenance, "seed": 7})
    with pytest.raises(NormtestError, match=r"different samples.*seed"):
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

    from normtest.information.documents import Document, PrefixPlan, on_token_grid

    text = " ".join(f"w{i}" for i in range(45))
    counts = {8: 10, 16: 12, 24: 11, 32: 12, 40: 60, 45: 50}  # the whole text: 50 tokens

    def tokenize(piece: str) -> SimpleNamespace:
        return SimpleNamespace(ids=list(range(counts[len(piece.split())])))

    adapter = SimpleNamespace(tokenize=tokenize, name="stub")
    plan = PrefixPlan(Document("d", text, "test"), 45, np.array([8, 16, 24, 32, 40]))
    (grid,) = on_token_grid(adapter, [plan])
    assert grid.lengths.tolist() == [8, 16]
    assert grid.tokens is not None and grid.tokens.tolist() == [10, 12]
