"""Sentence encoders (``encode(texts)``): the embedded MiniLM as a sentence-transformers folder
and object, synthetic encode models whose CER truth is known, and precomputed text vectors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import normtest
from normtest.adapters.embedded import minilm_folder
from normtest.adapters.protocol import family_of
from normtest.adapters.sentence import EncodeAdapter, PrecomputedTexts, load_sentence_folder
from normtest.audit.report import Report
from normtest.audit.run import run_audit
from normtest.base.settings import AuditSettings
from normtest.cli.main import main
from normtest.data.information.documents import Document, plan_word_prefixes, word_prefix
from normtest.errors import NormtestError
from normtest.testing.conformance import check_adapter
from normtest.verdict.result import Result, Verdict

#: Loads real models, starts processes or simulates: not in the fast loop (make test-fast).
pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
SMALL = AuditSettings(words=300, documents=16, sentences=40, resamples=200)
SMALL_FLAGS = ["--words", "300", "--documents", "16", "--sentences", "40", "--resamples", "200"]
MEASURED = {"PASS", "FAIL", "INCONCLUSIVE"}
TEXTS = ["the cat", "information", "A longer sentence about the theory of information."]


@pytest.fixture(scope="module")
def through_st() -> EncodeAdapter:
    pytest.importorskip("sentence_transformers")
    adapter = load_sentence_folder(minilm_folder(), backend="sentence-transformers")
    assert isinstance(adapter, EncodeAdapter)
    return adapter


@pytest.fixture(autouse=True)
def _encode_models_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """``encode_models`` (next to this file) importable, as --model encode_models:NAME."""
    monkeypatch.syspath_prepend(str(HERE))


def test_both_readings_of_the_folder_agree_conform_and_are_not_normalised(
        through_st: EncodeAdapter) -> None:
    plain = load_sentence_folder(minilm_folder(), backend="transformers")
    a, b = through_st.text_vectors(TEXTS), plain.text_vectors(TEXTS)
    assert np.max(np.abs(a - b)) < 1e-4 * np.max(np.abs(a))
    norms = np.linalg.norm(a, axis=1)
    assert np.ptp(norms) > 0.1, "the Normalize module must be left out"
    assert through_st.normalize_removed and "normalize-removed" in through_st.revision
    assert through_st.states == plain.states == ("mean",)
    assert through_st.revision != plain.revision  # two readings never share cache entries
    check_adapter(through_st)
    check_adapter(plain)


def test_a_folder_is_a_sentence_encoder_unless_read_as_an_encoder() -> None:
    folder = minilm_folder()
    assert family_of(normtest.load(folder, cache=False, progress=False)) == "sentence"
    assert family_of(normtest.load(folder, kind="encoder", cache=False,
                                      progress=False)) == "encoder"
    embedded = normtest.load("minilm-l6", kind="sentence", cache=False, progress=False)
    assert family_of(embedded) == "sentence" and embedded.name == "minilm-l6"


def _rows(report_json: Path) -> dict[str, Result]:
    return {r.id: r for r in Report.read(report_json).results}


def test_the_cli_measures_word_text_and_cer_claims_of_a_sentence_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "--model", str(minilm_folder()), *SMALL_FLAGS, "--claims",
                 "word.norm_ic", "word.norm_kl", "word.norm_ic.multitoken", "text.norm_surprisal",
                 "cer.linear", "cer.monotone", "cer.fixed_point", "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    rows = _rows(tmp_path / "out" / "report.json")
    for claim in ("word.norm_ic[composition=mean,transform=raw]", "word.norm_kl"
                  "[composition=mean,transform=raw]", "text.norm_surprisal[composition=mean]",
                  "cer.linear[composition=mean]", "cer.monotone[composition=mean]",
                  "cer.fixed_point[composition=mean]"):
        assert rows[claim].verdict.value in MEASURED, (claim, rows[claim].reason)
    # mean pooling: the paper expects s(L) of a mean not to grow linearly (a confirmatory row)
    linear = rows["cer.linear[composition=mean]"]
    assert linear.role == "confirmatory" and linear.expected is Verdict.FAIL
    assert rows["word.norm_ic.multitoken"].verdict is Verdict.SKIPPED


def test_the_cli_audits_an_object_with_encode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    code = main(["audit", "--model", "encode_models:minilm", "--suite", "cer", *SMALL_FLAGS,
                 "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    rows = _rows(tmp_path / "report.json")
    assert {r.verdict.value for r in rows.values()} <= MEASURED
    assert set(rows) == {f"{c}[composition=mean]" for c in
                         ("cer.monotone", "cer.linear", "cer.fixed_point")}


def _audit(model: object, claims: list[str]) -> dict[str, Verdict]:
    report = run_audit(EncodeAdapter(model), claim_ids=claims, settings=SMALL)
    return {r.claim or "": r.verdict for r in report.results}


def test_known_truth_a_sum_of_independent_words_grows_linearly_a_mean_does_not() -> None:
    import encode_models  # type: ignore[import-not-found]

    claims = ["cer.linear", "cer.monotone"]
    assert _audit(encode_models.IndependentSum(), claims) == {
        "cer.linear": Verdict.PASS, "cer.monotone": Verdict.PASS}
    assert _audit(encode_models.IndependentMean(), claims) == {
        "cer.linear": Verdict.FAIL, "cer.monotone": Verdict.FAIL}


def test_unit_length_outputs_are_refused_with_the_reason() -> None:
    import encode_models

    # every claim errs, so the audit refuses to report, naming each claim and the reason
    with pytest.raises(NormtestError, match="normalises its output") as raised:
        run_audit(EncodeAdapter(encode_models.Normalised()),
                  claim_ids=["word.norm_ic", "cer.linear"], settings=SMALL)
    assert "word.norm_ic" in str(raised.value) and "cer.linear" in str(raised.value)


def test_precomputed_sentence_vectors_feed_the_text_claim(
        tmp_path: Path, through_st: EncodeAdapter) -> None:
    from normtest.data.information.documents import default_documents, document_sentences

    sentences = [t for _, t in document_sentences(default_documents(24), 60)]
    path = tmp_path / "sentences.npz"
    np.savez(path, keys=np.array(sentences), vectors=through_st.text_vectors(sentences))
    model = normtest.load(path)  # the surprisals of a re-run come from the embedding cache
    assert isinstance(model.adapter, PrecomputedTexts) and family_of(model) == "sentence"
    check_adapter(model)
    report = run_audit(model, settings=SMALL)
    rows = {r.id: r for r in report.results}
    text = rows["text.norm_surprisal[composition=pooled]"]
    assert text.verdict.value in MEASURED and text.n == len(sentences)
    others = [r for r in report.results if r.claim != "text.norm_surprisal"]
    assert others and all(r.verdict is Verdict.SKIPPED for r in others)
    assert "own texts" in rows["word.norm_ic"].reason and "own texts" in rows["cer.linear"].reason


def test_prefixes_of_a_sentence_encoder_are_cut_on_a_word_grid() -> None:
    text = "One, two three. Four five six seven, eight nine ten eleven twelve!"
    assert word_prefix(text, 3) == "One, two three."
    assert word_prefix(text, 99) == text
    doc = Document("d", text, "test")
    (plan,) = plan_word_prefixes([doc], step=4, max_length=100)
    assert plan.lengths.tolist() == [4, 8, 12]
    # a prefix the model would truncate is dropped from the grid, never embedded cut short
    (limited,) = plan_word_prefixes([doc], step=4, max_length=100,
                                    token_limit=(lambda ts: [len(t.split()) + 2 for t in ts], 10))
    assert limited.lengths.tolist() == [4, 8]


def test_a_folder_naming_foreign_modules_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "st"
    shutil.copytree(minilm_folder(), folder)
    modules = json.loads((folder / "modules.json").read_text())
    modules[1]["type"] = "my_package.pooling.Pooling"
    (folder / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(NormtestError, match="outside sentence-transformers"):
        normtest.load(folder, cache=False)


def test_the_pytest_plugin_checks_a_sentence_folder(pytester: pytest.Pytester) -> None:
    import normtest.checks

    checks = Path(normtest.checks.__file__).parent
    result = pytester.runpytest(str(checks), "-p", "no:cacheprovider", "--normtest-model",
                                str(minilm_folder()), "--normtest-claims", "cer.linear",
                                "--normtest-documents", "16",
                                "--normtest-resamples", "200", "--normtest-no-cache", "-rx")
    # the paper expects mean pooling not to grow linearly: its FAIL is the model behaving as the
    # paper says, an expected failure that names its verdict
    result.assert_outcomes(xfailed=1)
    out = result.stdout.str()
    assert "XFAIL" in out and "cer.linear[composition=mean]" in out and ": FAIL" in out, out


pytest_plugins = ["pytester"]
