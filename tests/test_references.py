"""The reference reports that ship with normtest, and ``normtest compare --reference``.

The five references are slim reports written by one run of ``scripts/references.py``, which also
wrote docs/leaderboard.md from them: the page and the references must name the same commit and
show the same scorecards. A model compared with a reference is audited on the reference's
sample, the reference is not audited again, and a setting that would draw another sample is
refused before any audit."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from normtest.audit.compare import Comparison
from normtest.audit.references import read_reference, reference_names, reference_path
from normtest.cli.main import main
from normtest.errors import NormtestError

ROOT = Path(__file__).resolve().parent.parent
MODELS = ["gemma-3-270m", "glove-6b-50d", "minilm-l6", "nomic-embed-text-v1.5", "smollm2-135m"]


def _leaderboard() -> dict:  # type: ignore[type-arg]
    return json.loads((ROOT / "docs" / "numbers" / "leaderboard.json").read_text(
        encoding="utf-8"))


def test_the_five_references_ship_slim_and_signed() -> None:
    assert reference_names() == MODELS
    for name in MODELS:
        path = reference_path(name)
        assert path.stat().st_size < 2_000_000  # slim and compressed
        report = read_reference(name)  # its digest and every row checked
        assert report.model["name"] == name and report.slim_note


def test_the_leaderboard_is_the_comparison_of_the_references_at_their_commit() -> None:
    numbers = _leaderboard()
    stamps = {json.dumps(read_reference(n).provenance["reference"], sort_keys=True)
              for n in MODELS}
    assert len(stamps) == 1  # one run
    stamp = json.loads(stamps.pop())
    assert (stamp["commit"], stamp["created"]) == (numbers["commit"], numbers["created"])
    # each column of the page's scorecard grid is that reference's scorecard
    for column, name in enumerate(numbers["names"], start=1):
        lines = {line.title: line.status for line in read_reference(name).scorecard}
        for row in numbers["grid"]:
            assert lines.get(row[0], "—") == row[column] or row[column] in ("—", "not tested")


def test_an_unknown_reference_is_refused_with_the_names() -> None:
    with pytest.raises(NormtestError, match=r"did you mean minilm-l6\?.*glove-6b-50d"):
        reference_path("minilm")


def test_a_setting_that_draws_another_sample_is_refused_before_any_audit(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["compare", "--model", "glove-6b-50d", "--reference", "minilm-l6",
                 "--words", "300", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--reference minilm-l6" in err and "different samples" in err and "words" in err
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_a_model_is_compared_with_a_reference_without_auditing_the_reference(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code = main(["compare", "--model", "glove-6b-50d", "--reference", "minilm-l6",
                 "--suite", "word", "--out", str(tmp_path), "--no-robustness",
                 "--no-controls"])
    seconds = time.monotonic() - started
    out = capsys.readouterr().out
    assert code == 0, out
    comparison = Comparison.read(tmp_path / "comparison.json")
    audited, reference = comparison.reports  # in the order given
    # the reference is the shipped report, row for row (not audited again) ...
    shipped = read_reference("minilm-l6")
    assert [(r.id, r.verdict, r.estimate) for r in reference.results] == [
        (r.id, r.verdict, r.estimate) for r in shipped.results]
    # ... and the model was audited on its sample
    assert audited.model["name"] == "glove-6b-50d"
    assert audited.provenance["sample"]["words"] == shipped.provenance["sample"]["words"]
    assert audited.provenance["sample"]["seed"] == shipped.provenance["sample"]["seed"]
    rows = [r for r in comparison.results if "first=glove-6b-50d,second=minilm-l6" in r.id]
    assert rows and any(r.measurement is not None for r in rows)
    print(f"compare --model glove-6b-50d --reference minilm-l6 --suite word: {seconds:.1f} s")


def test_the_python_api_refuses_another_sample_before_auditing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import normtest
    import normtest.audit.compare as comparing

    def audited(*args: object, **kwargs: object) -> None:
        raise AssertionError("audited before the sample was checked")

    monkeypatch.setattr(comparing, "run_audit", audited)
    with pytest.raises(NormtestError, match="different samples"):
        normtest.compare(["glove-6b-50d"], reference="minilm-l6", words=300)
