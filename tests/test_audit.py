"""The audit runner on synthetic models with known truth and on the real GloVe vectors."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import normtest
from normtest.adapters.protocol import family_of
from normtest.audit.report import Report
from normtest.audit.run import AuditSettings, run_audit, variants
from normtest.claims.catalogue import get
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main
from normtest.data.information.frequency import InformationContent, information_content
from normtest.errors import NormtestError
from normtest.models.synthetic import IsotropicModel, OracleModel, ShuffledNormModel, make_oracle
from normtest.verdict.result import Verdict

FAST = AuditSettings(words=400, resamples=300)


class OracleFrequencies:
    """The oracle's own unigram distribution as a frequency source (known truth)."""

    def __init__(self, model: OracleModel) -> None:
        self.p = dict(zip(model.words, model.unigram, strict=True))

    def information_content(self, words: Sequence[str]) -> InformationContent:
        probabilities = np.array([self.p.get(w, 0.0) for w in words])
        return information_content(probabilities, words, "oracle")


@pytest.fixture(scope="module")
def oracle() -> OracleModel:
    # a little noise: an exact oracle ranks every word perfectly, every bootstrap replicate is
    # ρ = 1 and the verdict is INCONCLUSIVE (docs/statistics.md, "An interval that cannot be read")
    return make_oracle(150, seed=0, b=20.0, noise=0.05)


def _raw(report: Report, claim: str) -> Verdict:
    (row,) = [r for r in report.results
              if r.claim == claim and r.variant.get("transform") == "raw"]
    return row.verdict


@pytest.mark.slow
def test_oracle_passes_and_negative_controls_fail(oracle: OracleModel) -> None:
    words, source = list(oracle.words), OracleFrequencies(oracle)
    good = run_audit(oracle, ["word.norm_ic"], settings=FAST, words=words, source=source)
    assert _raw(good, "word.norm_ic") is Verdict.PASS
    for control in (ShuffledNormModel(oracle), IsotropicModel(oracle.distribution, dim=16)):
        bad = run_audit(control, ["word.norm_ic"], settings=FAST, words=words, source=source)
        assert _raw(bad, "word.norm_ic") is Verdict.FAIL, control.name


def test_family_and_variants(oracle: OracleModel) -> None:
    assert family_of(oracle) == "static"
    static = variants(get("word.norm_ic"), "static")
    assert static == [{"transform": t} for t in get("word.norm_ic").axes["transform"]]
    subword = variants(get("word.norm_ic"), "encoder")
    assert len(subword) == 9 * 2 * 5 and {"composition": "sqrt_n", "representation": "input",
                                          "transform": "raw"} in subword
    assert all(v["composition"] not in ("cls", "eos") for v in subword)


@pytest.mark.slow
def test_glove_word_suite(tmp_path: Path) -> None:
    glove = normtest.load("glove-6b-50d", cache=False)
    report = run_audit(glove, suite="word", settings=FAST)
    by_id = {r.id: r for r in report.results}
    whitened = by_id["word.norm_ic[transform=whiten_zipf]"]
    assert whitened.expected is Verdict.PASS
    # measured, not assumed: GloVe's raw norms fall with IC; Zipfian whitening reverses that
    assert whitened.verdict is Verdict.PASS, whitened.reason
    assert by_id["word.norm_ic[transform=raw]"].estimate < 0
    multitoken = by_id["word.norm_ic.multitoken"]
    assert multitoken.verdict is Verdict.SKIPPED and "capabilities" in multitoken.reason
    assert all(r.p_adjusted is not None for r in report.results if r.claim == "word.norm_ic")
    assert report.provenance["words"] > 300 and "no frequency" in report.provenance["dropped_words"]
    again = Report.read(report.write(tmp_path / "report.json"))
    assert [r.verdict for r in again.results] == [r.verdict for r in report.results]
    # the plots' data travel with the report: one ‖e(w)‖² per word and word.norm_ic variant
    words = again.data["words"]
    assert set(words["squared_norms"]) == {"transform=raw", "transform=center_zipf",
                                           "transform=whiten_zipf"}
    assert len(words["words"]) == len(words["information"]) == report.provenance["words"]
    assert all(len(v) == len(words["words"]) for v in words["squared_norms"].values())


@pytest.mark.slow
def test_glove_conditions_and_information_gain() -> None:
    glove = normtest.load("glove-6b-50d", cache=False)
    report = run_audit(glove, ["word.norm_kl", "cond.inner_pmi", "cond.self_pmi",
                               "cond.centered", "cer.linear"], settings=FAST)
    by_id = {r.id: r for r in report.results}
    # Oyama et al.'s positive control, measured here: ρ(‖e‖², 2·KL) after Zipfian whitening
    kl = by_id["word.norm_kl[transform=whiten_zipf]"]
    assert kl.verdict is Verdict.PASS and kl.expected is Verdict.PASS, kl.reason
    inner = by_id["cond.inner_pmi[transform=raw]"]
    assert inner.measurement is not None and inner.measurement.settings["pairs"] > 100
    # pairs share words: resampled by word, a pair weighing both its words' draws
    assert "two-way" in inner.measurement.method
    assert by_id["cond.self_pmi[transform=raw]"].measurement.statistic == "self_pmi_slope_ratio"
    centered = by_id["cond.centered[transform=raw]"]
    assert 0 < centered.estimate < 1  # a ratio of norms, by Cauchy–Schwarz
    assert by_id["cer.linear"].verdict is Verdict.SKIPPED


def test_a_run_where_nothing_ran_is_an_error(oracle: OracleModel) -> None:
    with pytest.raises(NormtestError, match="no claim could run"):
        run_audit(oracle, ["cer.linear", "text.norm_surprisal"], settings=FAST)


@pytest.mark.slow
def test_audit_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "--model", "glove-6b-50d", "--suite", "word", "--words", "300",
                 "--resamples", "200", "--no-cache", "--out", str(tmp_path)])
    assert code == EXIT_OK
    out = capsys.readouterr().out
    # one line per claim (the headline names its confirmatory variant); a skipped claim, folded
    assert "word.norm_ic " in out and "whiten_zipf: " in out
    assert re.search(r"word\.norm_ic\.multitoken +skipped: ", out)
    assert Report.read(tmp_path / "report.json").model["name"] == "glove-6b-50d"
    assert main(["audit", "--model", "glove-6b-5od"]) == EXIT_USAGE
    assert "did you mean" in capsys.readouterr().err


def test_scopes_select_variants() -> None:
    claim = get("word.norm_ic")
    assert len(variants(claim, "encoder", scope="full")) == 90
    standard = variants(claim, "encoder", scope="standard")
    assert len(standard) == 9 * 3 and {v["representation"] for v in standard} == {"last"}
    assert {v["transform"] for v in standard} == {"raw", "center_zipf", "whiten_zipf"}
    assert len(variants(claim, "static", scope="standard")) == 3
    with pytest.raises(NormtestError, match="unknown scope"):
        variants(claim, "static", scope="wide")


@pytest.mark.slow
def test_audit_on_the_users_corpus(tmp_path: Path) -> None:
    from normtest.data.information.texts import lee_texts

    corpus = tmp_path / "news.txt"
    corpus.write_text("\n\n".join(t.text for t in lee_texts()), encoding="utf-8")
    code = main(["audit", "--model", "glove-6b-50d", "--claims", "cond.inner_pmi", "--words",
                 "1000", "--resamples", "200", "--corpus", str(corpus), "--out", str(tmp_path)])
    assert code == EXIT_OK
    report = Report.read(tmp_path / "report.json")
    assert report.provenance["corpus"] == [str(corpus)]
    assert all(r.verdict is not Verdict.ERROR and r.n > 10 for r in report.results)


def test_audit_option_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["audit", "--model", "glove-6b-50d", "--documents", "5"]) == EXIT_USAGE
    assert "--documents: must be at least 10" in capsys.readouterr().err
    missing = tmp_path / "nothing.txt"
    assert main(["audit", "--model", "glove-6b-50d", "--corpus", str(missing)]) == EXIT_USAGE
    assert "no such file" in capsys.readouterr().err


def test_cross_fitted_whitening_removes_the_leverage_artefact(oracle: OracleModel) -> None:
    """Random vectors carry no information, yet in-sample Zipfian whitening bounds
    p(w)·‖e(w)‖² ≤ 1, so their whitened norms rise with IC. The audit fits each transform on the
    other half of the sample, and the random model then fails as it should."""
    from normtest.geometry.transforms import make_transform

    isotropic = IsotropicModel(oracle.distribution, dim=16)
    words, source = list(oracle.words), OracleFrequencies(oracle)
    vectors = isotropic.word_vectors(words)
    p = np.asarray(source.information_content(words).values)
    p = np.exp(-p) / np.exp(-p).sum()
    in_sample = make_transform("whiten_zipf").fit_apply(vectors, p)
    leverage = p * np.einsum("ij,ij->i", in_sample, in_sample)
    assert leverage.max() <= 1 + 1e-9  # the bound that manufactures the correlation
    report = run_audit(isotropic, ["word.norm_ic"], settings=FAST, words=words, source=source)
    for row in report.results:
        assert row.verdict is Verdict.FAIL, (row.id, row.estimate)


@pytest.mark.slow
def test_the_surprisal_model_reads_through_the_audited_models_cache(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from normtest.data.texts import surprisal_model
    from normtest.models.cache.adapter import CachedAdapter
    from normtest.models.cache.embeddings import EmbeddingCache
    from normtest.models.registry import load

    audited = load("minilm-l6", cache=False, progress=False)
    cache = EmbeddingCache(tmp_path)
    lm = surprisal_model("smollm2-135m", CachedAdapter(audited, cache))
    assert isinstance(lm, CachedAdapter) and lm.cache is cache and lm.name == "smollm2-135m"
    lm.token_logprobs(["The river rose above the bridge."])
    assert len(cache) == 1  # the surprisal went to the audit's cache
    uncached = surprisal_model("smollm2-135m", audited)  # --no-cache: nothing written anywhere
    assert not isinstance(uncached, CachedAdapter) and uncached is lm.adapter  # loaded once


@pytest.mark.slow
def test_audit_command_runs_a_transformers_model_in_bfloat16(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    from normtest.base.settings import resolve
    from normtest.models.registry import load_options

    values = resolve({"dtype": "bfloat16"})
    assert load_options("glove-6b-50d", values) == {"cache": True}  # static: neither applies
    assert load_options("minilm-l6", values) == {
        "cache": True, "progress": False, "device": "auto", "dtype": "bfloat16"}
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["audit", "--model", "minilm-l6", "--dtype", "bfloat16", "--claims",
                 "word.norm_ic", "--words", "60", "--resamples", "100", "--out",
                 str(tmp_path), "--format", "json"])
    assert code == EXIT_OK
    report = Report.read(tmp_path / "report.json")
    assert report.model["revision"].endswith(";bfloat16")
    assert main(["audit", "--model", "minilm-l6", "--dtype", "float8"]) == EXIT_USAGE
    capsys.readouterr()


@pytest.mark.slow
def test_self_pmi_slope_ratio_equals_two_least_squares_fits() -> None:
    """The slope ratio's one-matrix-product moments give what np.polyfit gives."""
    from normtest.checks.conditions import self_pmi
    from normtest.data.words import WordData

    glove = normtest.load("glove-6b-50d", cache=False)
    data = WordData.build(glove, FAST, "static")
    for transform in ("raw", "center_zipf"):
        variant = {"transform": transform}
        x, y, pmi = data.pairs()
        vectors = data.transformed(variant)
        inner = np.einsum("ij,ij->i", vectors[x], vectors[y])
        diagonal = np.polyfit(data.information, data.squared_norms(variant), 1)[0]
        off = np.polyfit(pmi, inner, 1)[0]
        measured = self_pmi(data, variant, FAST)
        assert measured.estimate == pytest.approx(diagonal / off, rel=1e-9)
        assert measured.ci[0] < measured.estimate < measured.ci[1]
