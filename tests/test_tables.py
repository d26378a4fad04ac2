"""A report as flat tables (normtest.audit.tables): its rows as CSV, its metrics as JSON lines,
its data as one CSV per kind — each read back by the standard library as a user's tool would."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path

import pytest

from normtest.audit.tables import data_tables
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.render.formats import render

TESTS = Path(__file__).parent


def _rich_report():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("_figures", TESTS / "test_render_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.rich_report()


def test_the_rows_csv_has_a_line_per_row_and_every_axis_as_a_column() -> None:
    report = _rich_report()
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert [r["id"] for r in rows] == [r.id for r in report.results]
    for row, result in zip(rows, report.results, strict=True):
        assert float(row["estimate"]) == pytest.approx(result.estimate)
        assert row["verdict"] == result.verdict.value
        for axis, value in result.variant.items():
            assert row[axis] == value
        assert float(row["low"]) <= float(row["estimate"]) <= float(row["high"])


def test_the_metrics_are_one_json_object_per_line() -> None:
    report = _rich_report()
    lines = render(report, "metrics").splitlines()
    parsed = [json.loads(line) for line in lines]
    assert {p["model"] for p in parsed} == {"m"}
    names = {p["metric"] for p in parsed}
    for r in report.results:
        assert {f"row/{r.id}/estimate", f"row/{r.id}/verdict"} <= names
    assert all(line.split("/")[0] in ("line", "row") for line in names)


def test_the_data_tables_have_a_line_per_word_sentence_and_prefix(tmp_path: Path) -> None:
    report = _rich_report()
    tables = data_tables(report)
    assert set(tables) == {"words.csv", "sentences.csv", "curves.csv"}
    words = list(csv.DictReader(io.StringIO(tables["words.csv"])))
    assert len(words) == len(report.data["words"]["words"])
    assert set(words[0]) == {"word", "information", "token_count",
                             *(f"squared_norm[{k}]" for k in report.data["words"]["squared_norms"])}
    sentences = list(csv.DictReader(io.StringIO(tables["sentences.csv"])))
    assert len(sentences) == len(report.data["texts"]["information"])
    curves = list(csv.DictReader(io.StringIO(tables["curves.csv"])))
    assert len(curves) == sum(len(c["lengths"]) for c in
                              report.data["prefixes"]["curves"].values())
    # the command line writes them from a stored report
    path = report.write(tmp_path / "report.json")
    assert main(["report", str(path), "--format", "csv", "--out", str(tmp_path / "rows.csv"),
                 "--data", str(tmp_path / "tables")]) == 0
    assert sorted(p.name for p in (tmp_path / "tables").iterdir()) == [
        "curves.csv", "sentences.csv", "words.csv"]
    assert (tmp_path / "rows.csv").read_text(encoding="utf-8") == render(report, "csv")


def test_to_pandas_gives_each_table_as_a_data_frame() -> None:
    pandas = pytest.importorskip("pandas", reason="pandas (the optional extra) is not installed")
    report = _rich_report()
    rows = report.to_pandas()
    assert isinstance(rows, pandas.DataFrame)
    assert list(rows["id"]) == [r.id for r in report.results]
    assert list(rows["verdict"]) == [r.verdict.value for r in report.results]
    assert rows["estimate"].tolist() == pytest.approx([r.estimate for r in report.results])
    words = report.to_pandas("words")
    assert len(words) == len(report.data["words"]["words"])
    assert words["information"].dtype.kind == "f"
    with pytest.raises(NormtestError, match="the tables are rows, words, sentences, curves"):
        report.to_pandas("people")
