"""Reports that cannot be trusted are refused, and report folders are written whole.

- every report.json carries a digest of its contents; the gate, ``normtest compare`` and
  ``normtest report`` refuse a file modified after normtest wrote it, and any row whose estimate
  lies outside its own interval (or outside the range of its bootstrap replicates), naming it;
  a report without a digest (an older normtest) is read with a warning;
- a report folder is written as one set (temporary files renamed into place), and writers of one
  folder take turns, so two audits given one ``--out`` leave the whole set of one of them.

Each case both ways: the honest file or writer still works.
"""

from __future__ import annotations

import json
import threading
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.audit.report import Report, digest_of, implausible_rows
from normtest.cli.common import EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.stats.correlation import correlation
from normtest.verdict.result import Criterion, Measurement, Result
from normtest.verdict.sampling import Sampling

WHITENED = "word.norm_ic[transform=whiten_zipf]"


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory, glove: Any) -> Path:
    """GloVe's word.norm_ic report, written by normtest into a fresh folder."""
    from normtest.audit.run import run_audit
    from normtest.base.settings import AuditSettings

    root = tmp_path_factory.mktemp("honest")
    settings = AuditSettings(words=200, resamples=100, robustness=False, controls=False)
    return run_audit(glove, ["word.norm_ic"], settings=settings).write(root / "report.json")


def _stored(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _row(data: dict[str, Any], result_id: str) -> dict[str, Any]:
    for row in data["results"]:
        variant = ",".join(f"{k}={v}" for k, v in row["variant"].items())
        if f"{row['claim']}[{variant}]" == result_id:
            return row
    raise AssertionError(result_id)


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- digests ------------------------------------------------------------------------------------
def test_a_report_carries_the_digest_of_its_contents(honest: Path, tmp_path: Path) -> None:
    data = _stored(honest)
    assert data["digest"].startswith("sha256:") and data["digest"] == digest_of(data)
    assert list(data)[-1] == "digest"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for an honest file
        Report.read(honest)
    # reformatted, or with Windows line endings (a git checkout), it is the same report
    again = tmp_path / "reformatted.json"
    again.write_bytes(json.dumps(data, indent=4, sort_keys=True).replace("\n", "\r\n")
                      .encode("utf-8"))
    assert Report.read(again).summary == Report.read(honest).summary
    # written again, the same digest
    assert _stored(Report.read(honest).write(tmp_path / "again.json"))["digest"] == data["digest"]


def _tampered(honest: Path, tmp_path: Path) -> Path:
    """The report with the whitened row's estimate raised to 0.99 (its interval kept)."""
    data = _stored(honest)
    row = _row(data, WHITENED)
    row["estimate"] = row["measurement"]["estimate"] = 0.99
    return _write(tmp_path / "tampered.json", data)


def test_a_modified_report_is_refused_by_gate_compare_and_report(
        honest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tampered = _tampered(honest, tmp_path)
    with pytest.raises(NormtestError, match=f"{tampered} was modified after normtest wrote it"):
        Report.read(tampered)
    commands = {
        "gate (candidate)": ["gate", "--report", str(tampered), "--require", WHITENED],
        "gate (baseline)": ["gate", "--report", str(honest), "--baseline", str(tampered)],
        "compare": ["compare", "--report", str(honest), "--report", str(tampered), "--out",
                    str(tmp_path / "cmp")],
        "report": ["report", str(tampered), "--threshold", "word.norm_ic=0.5"],
    }
    for name, args in commands.items():
        assert main(args) == EXIT_USAGE, name
        captured = capsys.readouterr()
        err = captured.err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("normtest: error: "), name
        assert f"{tampered} was modified after normtest wrote it" in err, name
        assert "✅" not in captured.out, name
    # the honest file passes the same gate
    assert main(["gate", "--report", str(honest), "--baseline", str(honest), "--require",
                 WHITENED]) == 0
    assert "normtest gate ✅ passed" in capsys.readouterr().out


def test_a_row_outside_its_replicates_is_refused_naming_it(
        honest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a digest to check (removed, or an older report), the rows still are: an
    estimate outside the range of its own bootstrap replicates is no estimate normtest wrote."""
    data = _stored(honest)
    del data["digest"]
    row = _row(data, WHITENED)
    row["estimate"] = row["measurement"]["estimate"] = 0.99
    stripped = _write(tmp_path / "stripped.json", data)
    with pytest.warns(UserWarning, match="carries no digest"), \
            pytest.raises(NormtestError, match=rf"row {_escaped(WHITENED)}: its estimate 0\.99 "
                                               r"lies outside the range of its 100 bootstrap"):
        Report.read(stripped)
    assert main(["gate", "--report", str(stripped), "--require", WHITENED]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "carries no digest" in err and f"row {WHITENED}: its estimate 0.99" in err
    # only the shown estimate edited (the measurement kept): refused too
    data = _stored(honest)
    del data["digest"]
    _row(data, WHITENED)["estimate"] = 0.99
    with pytest.warns(UserWarning), pytest.raises(NormtestError, match="is not its measurement"):
        Report.read(_write(tmp_path / "shown.json", data))


def test_an_older_report_without_a_digest_is_read_with_a_warning(
        honest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _stored(honest)
    del data["digest"]
    older = _write(tmp_path / "older.json", data)
    with pytest.warns(UserWarning, match=f"{older} carries no digest"):
        assert Report.read(older).summary == Report.read(honest).summary
    assert main(["gate", "--report", str(older), "--require", WHITENED]) == 0
    assert f"normtest: warning: the candidate report {older} carries no digest" in \
        capsys.readouterr().err


def test_an_estimate_outside_its_own_interval_is_refused(tmp_path: Path) -> None:
    """A parametric row (no replicates) whose estimate lies outside its interval, though its
    digest is right (normtest never writes one: the file was made by hand)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=100)
    honest = replace(correlation(x, x + rng.normal(size=100), min_effect=0.3,
                                 n_resamples=100, seed=0), claim="word.norm_ic")
    measurement = Measurement("slope", 0.5, 100, "ols", Sampling("normal", 0.5, 0.01))
    fine = Result.judged(measurement, Criterion("greater", threshold=0.3), claim="x.slope")
    forged = replace(fine, measurement=replace(measurement, estimate=0.9))
    assert implausible_rows(Report([honest, fine])) == []
    assert implausible_rows(Report([honest, forged])) == [
        "row x.slope: its estimate 0.9 lies outside its own interval [0.483551, 0.516449]"]
    path = Report([honest, forged], {"name": "m"}).write(tmp_path / "report.json")
    with pytest.raises(NormtestError, match=r"row x\.slope: its estimate 0\.9 lies outside its "
                                            r"own interval"):
        Report.read(path)
    Report.read(Report([honest, fine], {"name": "m"}).write(tmp_path / "fine.json"))


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


# -- report folders -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demos() -> tuple[Report, Report]:
    """Two different reports (the demonstration at two seeds)."""
    from normtest.audit.demo import run_demo

    return run_demo(seed=0, n_words=200), run_demo(seed=1, n_words=200)


def _whole_set(folder: Path, reports: tuple[Report, ...]) -> int:
    """Which of ``reports`` the folder holds, every file of it; fails on a mix."""
    from normtest.render.formats import render

    json_text = (folder / "report.json").read_text(encoding="utf-8")
    (index,) = [i for i, r in enumerate(reports) if render(r, "json") == json_text]
    for fmt in ("md", "html"):
        assert (folder / f"report.{fmt}").read_text(encoding="utf-8") == \
            render(reports[index], fmt)
    return index


@pytest.mark.slow
def test_a_report_folder_is_written_whole_or_not_at_all(
        demos: tuple[Report, Report], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import normtest.render.formats as rendering
    from normtest.render.formats import write_renderings

    folder = tmp_path / "out"
    write_renderings(demos[0], folder)
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.json",
                                                        "report.md"]  # no lock, no leftovers
    mask = os.umask(0)
    os.umask(mask)
    assert (folder / "report.json").stat().st_mode & 0o777 == 0o666 & ~mask  # as a plain write
    real = rendering.render

    def failing(report: Report, fmt: str) -> str:
        if fmt == "html":
            raise RuntimeError("the page could not be drawn")
        return real(report, fmt)

    monkeypatch.setattr(rendering, "render", failing)
    with pytest.raises(RuntimeError):
        write_renderings(demos[1], folder)
    monkeypatch.setattr(rendering, "render", real)
    assert _whole_set(folder, demos) == 0  # nothing of the failed write
    # a file that cannot be written: nothing replaced, nothing left behind
    real_fdopen = os.fdopen
    calls = []

    def full_disk(handle: int, mode: str) -> Any:
        calls.append(handle)
        if len(calls) == 3:
            os.close(handle)
            raise OSError(28, "No space left on device")
        return real_fdopen(handle, mode)

    monkeypatch.setattr(os, "fdopen", full_disk)
    with pytest.raises(NormtestError, match="No space left on device; nothing was replaced"):
        write_renderings(demos[1], folder)
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert _whole_set(folder, demos) == 0
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.json",
                                                        "report.md"]
    # another set of formats replaces the whole set: no rendering of the older audit is left
    write_renderings(demos[1], folder, ["json"])
    assert sorted(p.name for p in folder.iterdir()) == ["report.json"]
    assert Report.read(folder / "report.json").summary == demos[1].summary


@pytest.mark.slow
def test_two_writers_of_one_folder_take_turns(demos: tuple[Report, Report], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two audits writing one --out at once (threads here; flock locks separate opens of the
    lock file alike): the folder always holds the whole set of one of them. (Without the lock,
    about a third of such races left a mix, measured over 200.)"""
    import normtest.render.formats as rendering
    from normtest.render.formats import write_renderings

    texts = {id(r): {fmt: rendering.render(r, fmt) for fmt in ("json", "md", "html")}
             for r in demos}
    monkeypatch.setattr(rendering, "render", lambda r, fmt: texts[id(r)][fmt])
    folder = tmp_path / "out"
    def write(report: Report, start: threading.Barrier, errors: list[BaseException]) -> None:
        try:
            start.wait()
            write_renderings(report, folder)
        except BaseException as exc:
            errors.append(exc)

    for _ in range(30):
        start = threading.Barrier(2)
        errors: list[BaseException] = []
        threads = [threading.Thread(target=write, args=(r, start, errors)) for r in demos]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        found = {fmt: (folder / f"report.{fmt}").read_text(encoding="utf-8")
                 for fmt in ("json", "md", "html")}
        assert found in list(texts.values())  # one writer's whole set
        assert not (folder / ".normtest.lock").exists()


@pytest.mark.slow
def test_a_writer_waits_for_the_lock_then_gives_up_with_a_clear_message(
        demos: tuple[Report, Report], tmp_path: Path) -> None:
    from normtest.render.formats import write_renderings
    from normtest.render.locking import folder_lock

    folder = tmp_path / "out"
    folder.mkdir()
    with folder_lock(folder):
        with pytest.raises(NormtestError, match=rf"another normtest is writing reports to "
                                                rf"{_escaped(str(folder))}.*give another --out"):
            with folder_lock(folder, wait=0.2):
                pass
        done = threading.Event()

        def write() -> None:
            write_renderings(demos[1], folder)
            done.set()

        waiting = threading.Thread(target=write)
        waiting.start()
        assert not done.wait(0.3)  # it waits for the holder …
        assert not (folder / "report.json").exists()
    waiting.join(10)
    assert done.is_set()  # … and writes once the lock is free
    assert _whole_set(folder, demos) == 1


def test_a_signed_bootstrap_row_outside_its_replicates_is_read(tmp_path: Path) -> None:
    """A ratio of slopes can fall outside the range of its own replicates (MiniLM's input-layer
    late/early ratio did: −320 against [−81, 49]); a report normtest signed is read as written,
    while the same row without a digest is held to the range."""
    from normtest.stats.equivalence import measure_mean

    honest = measure_mean(np.linspace(0.0, 1.0, 50), n_resamples=100, seed=0)
    ratio = replace(honest, estimate=-320.0, sampling=Sampling.bootstrap(
        np.linspace(-81.0, 49.0, 100), -320.0))
    result = Result.judged(ratio, Criterion.minimum_effect(0.0))
    path = tmp_path / "report.json"
    path.write_text(Report(results=[result], model={"name": "m"}).to_json(), encoding="utf-8")
    assert Report.read(path).results[0].estimate == -320.0
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["digest"]
    with pytest.warns(UserWarning, match="carries no digest"), \
            pytest.raises(NormtestError, match="outside the range of its 100 bootstrap"):
        Report.read(_write(tmp_path / "unsigned.json", data))
