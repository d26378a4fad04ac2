"""A report is validated against its schema (``normtest.report/1``) before anything renders,
gates or compares it: one NormtestError naming the first bad key path, a junk file refused fast,
and every report normtest writes (and older ones) read back."""

from __future__ import annotations

import copy
import json
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from normtest.audit.report import SCHEMA, Report
from normtest.audit.report_schema import SchemaError, validate
from normtest.cli.common import EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, glove: Any) -> Path:
    """GloVe's word claims with controls and robustness: every part of the schema filled."""
    from normtest.audit.run import run_audit
    from normtest.base.settings import AuditSettings

    root = tmp_path_factory.mktemp("schema")
    report = run_audit(glove, ["word.norm_ic", "word.norm_kl"],
                       settings=AuditSettings(words=300, resamples=100))
    assert report.controls and report.robustness and report.data
    return report.write(root / "report.json")


@pytest.fixture(scope="module")
def stored(audited: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(audited.read_text(encoding="utf-8"))
    return data


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_reports_normtest_writes_validate(audited: Path, stored: dict[str, Any]) -> None:
    from normtest.audit.demo import run_demo

    validate(stored)
    Report.read(audited)  # the digest, rows and schema all hold
    Report.from_json(run_demo(seed=0, n_words=200).to_json())
    Report.from_json(Report([]).to_json())  # an empty report of no model is still a report


def test_an_older_report_without_the_later_keys_validates(stored: dict[str, Any],
                                                          tmp_path: Path) -> None:
    """What the first reports held: no scorecard, robustness, controls, data or digest, and
    rows without role, hypothesis, stands_for and p_fail_adjusted."""
    older = {k: v for k, v in stored.items()
             if k in ("schema", "model", "provenance", "results", "summary")}
    older["results"] = [{k: v for k, v in row.items()
                         if k not in ("role", "hypothesis", "stands_for", "p_fail_adjusted")}
                        for row in stored["results"]]
    with pytest.warns(UserWarning, match="carries no digest"):
        report = Report.read(_write(tmp_path / "older.json", older))
    assert len(report.results) == len(stored["results"])


def test_a_schema_only_file_is_refused_naming_the_missing_key(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str],
                                                             ) -> None:
    path = tmp_path / "schema-only.json"
    path.write_text('{"schema": "normtest.report/1"}', encoding="utf-8")
    with pytest.raises(NormtestError, match=r"not a valid normtest\.report/1 report: model: "
                                            r"missing \(a required key\)"):
        Report.read(path)
    for argv in (["report", str(path)], ["report", str(path), "--format", "html"],
                 ["gate", "--report", str(path), "--replicated", "word_level"],
                 ["compare", "--report", str(path), "--report", str(path)]):
        assert main(argv) == EXIT_USAGE, argv
        captured = capsys.readouterr()
        assert "unnamed model" not in captured.out and "Traceback" not in captured.err
        lines = [x for x in captured.err.splitlines() if x.strip()]
        assert len(lines) == 1 and "model: missing (a required key)" in lines[0], lines


def _set(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(data)
    here: Any = changed
    for key in path[:-1]:
        here = here[key]
    if value is _DELETE:
        del here[path[-1]]
    else:
        here[path[-1]] = value
    return changed


_DELETE = object()


def _first(rows: list[dict[str, Any]], test: Any) -> int:
    return next(i for i, row in enumerate(rows) if test(row))


@pytest.mark.parametrize(("where", "value", "message"), [
    (("results", 0, "verdict"), "MAYBE", "results[0].verdict: expected one of PASS, FAIL"),
    (("results", 0, "verdict"), _DELETE, "results[0].verdict: missing (a required key)"),
    (("results", 1, "ci"), [0.1], "results[1].ci: expected a list of 2, found a list of 1"),
    (("results", 0, "variant"), {"transform": 3}, "results[0].variant.transform: expected a "
                                                  "string, found the number 3"),
    (("results", "measured", "measurement", "n"), "x",
     "measurement.n: expected a whole number, found the string 'x'"),
    (("results", "measured", "measurement", "sampling", "replicates", 5), "a",
     "measurement.sampling.replicates[5]: expected a number or null"),
    (("results", "measured", "criterion", "direction"), "up",
     "criterion.direction: expected one of greater, less, within"),
    (("results",), {"0": {}}, "results: expected a list, found an object"),
    (("summary", "PASS"), "3", "summary.PASS: expected a whole number"),
    (("model", "name"), ["m"], "model.name: expected a string, found a list of 1"),
    (("model", "note"), "x" * 5000, "model.note: a string of 5,000 characters"),
    (("provenance", "layers"), "0,last", "provenance.layers: expected a list of strings"),
    (("controls", 0, "positive", "kind"), 3, "controls[0].positive.kind: expected one of"),
    (("robustness", 0, "specifications", 0, "choices"), [],
     "robustness[0].specifications[0].choices: expected an object, found a list of 0"),
    (("data", "words", "information", 3), "x", "data.words.information[3]: expected a number"),
    (("data", "words", "squared_norms"), [],
     "data.words.squared_norms: expected an object"),
    (("scorecard", 0, "key"), None, "scorecard[0].key: expected a string, found null"),
    (("junk",), "x", "junk: unknown key (a report holds schema, model"),
    (("provenance",), _DELETE, "provenance: missing (a required key)"),
])
def test_a_bad_key_is_named_by_its_path(stored: dict[str, Any], tmp_path: Path,
                                        where: tuple[Any, ...], value: Any, message: str) -> None:
    if "measured" in where:  # the first row with a bootstrap measurement
        at = _first(stored["results"], lambda r: (r.get("measurement") or {}).get(
            "sampling", {}) and r["measurement"]["sampling"]["kind"] == "bootstrap")
        where = tuple(at if k == "measured" else k for k in where)
        message = f"results[{at}].{message}"
    bad = _set(stored, where, value)
    with pytest.raises(SchemaError) as caught:
        validate(bad)
    assert message in str(caught.value)
    # the file reader says the same, in one line, before any digest or row check
    with pytest.raises(NormtestError, match=r"not a valid normtest\.report/1 report") as read:
        Report.read(_write(tmp_path / "bad.json", bad))
    assert message in str(read.value) and "\n" not in str(read.value)


def _junk_files(root: Path) -> dict[str, Path]:
    """50 MB of junk under the report's schema, three ways."""
    big = "x" * (50 * 2**20)
    rows = ",".join(["[1,2,3,4,5,6,7,8,9]"] * (50 * 2**20 // 20))
    texts = {
        "key": json.dumps({"schema": SCHEMA, "junk": big}),
        "rows": ('{"schema": "normtest.report/1", "model": {}, "provenance": {}, "summary": {}, '
                 f'"results": [{rows}]}}'),
        "model": json.dumps({"schema": SCHEMA, "model": {"name": big}, "provenance": {},
                             "summary": {}, "results": []}),
    }
    out = {}
    for name, text in texts.items():
        out[name] = root / f"{name}.json"
        out[name].write_text(text, encoding="utf-8")
        assert out[name].stat().st_size >= 50 * 2**20
    return out


def test_fifty_megabytes_of_junk_fail_fast_and_clearly(tmp_path: Path) -> None:
    expected = {"key": "junk: unknown key", "rows": "results[0]: expected an object (a result "
                                                     "row), found a list of 9",
                "model": "model.name: a string of 52,428,800 characters"}
    for name, path in _junk_files(tmp_path).items():
        began = time.perf_counter()
        with pytest.raises(NormtestError) as caught:
            Report.read(path)
        seconds = time.perf_counter() - began
        assert expected[name] in str(caught.value), caught.value
        assert seconds < 5, (name, seconds)  # about 0.1–0.5 s: refused at its first bad entry
        path.unlink()


def test_a_file_larger_than_any_report_is_refused_before_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import normtest.audit.report

    path = tmp_path / "large.json"
    path.write_text('{"schema": "normtest.report/1"}' + " " * 5000, encoding="utf-8")
    monkeypatch.setattr(normtest.audit.report, "MAX_REPORT_BYTES", 4096)  # where it is read
    with pytest.raises(NormtestError, match="larger than any report normtest writes"):
        Report.read(path)


def test_json_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    deep = '{"schema": "normtest.report/1", "model": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path = tmp_path / "deep.json"
    path.write_text(deep, encoding="utf-8")
    with pytest.raises(NormtestError, match=r"nested too deeply|model: expected an object"):
        Report.read(path)
    with pytest.raises(NormtestError):
        Report.from_json("[" * 100_000 + "]" * 100_000)


def test_another_schema_is_still_named_as_such(tmp_path: Path) -> None:
    path = _write(tmp_path / "other.json", {"schema": "normtest.report/9", "junk": 1})
    with pytest.raises(NormtestError, match="written by a newer normtest"):
        Report.read(path)
    path = _write(tmp_path / "else.json", {"junk": 1, "schema": "normtest.report/1"})
    with pytest.raises(NormtestError, match="junk: unknown key"):
        Report.read(path)  # the schema second: validated whole after parsing


def test_the_streaming_reader_parses_as_json_does(audited: Path) -> None:
    from normtest.audit.report_schema import load

    text = audited.read_text(encoding="utf-8")
    assert load(text, SCHEMA) == json.loads(text)
    spaced = json.dumps(json.loads(text), indent=3)
    assert load(spaced, SCHEMA) == json.loads(text)
    for broken in (text[:-5], text + "x", text.replace('"results": [', '"results": [,', 1)):
        with pytest.raises(json.JSONDecodeError):
            load(broken, SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Report.read(audited)
