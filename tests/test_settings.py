"""One description per setting: the same name, default and validation from every front end."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import pytest

from normtest.audit.report import Report
from normtest.base.settings import (
    BY_NAME,
    SETTINGS,
    AuditSettings,
    add_cli_options,
    audit_settings,
    from_config,
    given,
    resolve,
)
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.gate.config import load_config
from normtest.gate.run import audit_settings as gate_settings

ROOT = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]


def test_every_audit_setting_is_a_field_with_the_described_default() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(AuditSettings)}
    for s in SETTINGS:
        if s.audit:
            assert fields[s.name] == s.default, s.name
    assert len(BY_NAME) == len(SETTINGS)  # no name declared twice


def test_the_documented_settings_table_matches_the_description() -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = text[text.index("## Settings"):text.index("## The pytest plugin")]
    rows = {m[1]: m[0] for m in re.finditer(r"^\| `(\w+)` \|.*$", section, flags=re.M)}
    assert set(rows) == set(BY_NAME)
    for s in SETTINGS:
        assert f"`{s.option}" in rows[s.name] and f"`{s.pytest_option}" in rows[s.name]


@pytest.mark.parametrize("command", ["audit", "gate"])
def test_the_commands_offer_every_setting(command: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    for s in SETTINGS:
        assert s.option in out, (command, s.option)


def test_layers_apply_default_then_file_then_command_line(tmp_path: Path) -> None:
    (tmp_path / "normtest.toml").write_text("words = 500\nseed = 3\n", encoding="utf-8")
    config = load_config(tmp_path / "normtest.toml")
    parser = argparse.ArgumentParser()
    add_cli_options(parser)
    args = parser.parse_args(["--words", "700", "--no-cache"])
    values = resolve(config.settings, given(args))
    assert values["words"] == 700 and values["seed"] == 3 and values["cache"] is False
    assert values["resamples"] == BY_NAME["resamples"].default
    chosen = audit_settings(values)
    assert (chosen.words, chosen.seed, chosen.resamples) == (700, 3, 1000)


@pytest.mark.parametrize(("name", "value", "needle"), [
    ("words", 5, "must be at least 10"),
    ("words", "many", "give a whole number"),
    ("scope", "everything", "choose one of standard, full"),
    ("cache", "yes", "give true or false"),
    ("corpus", 3, "give a list of paths"),
])
@pytest.mark.slow
def test_a_bad_value_gets_the_same_reason_from_every_front_end(
    name: str, value: object, needle: str, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], pytester: pytest.Pytester,
) -> None:
    with pytest.raises(NormtestError, match=needle):
        from_config({name: value}, "normtest.toml")
    if isinstance(value, bool | str) or name in ("words", "scope"):
        literal = f'"{value}"' if isinstance(value, str) else str(value).lower()
        (tmp_path / "normtest.toml").write_text(f"{name} = {literal}\n", encoding="utf-8")
        with pytest.raises(NormtestError, match=rf"normtest\.toml: {name} = .*{needle}"):
            load_config(tmp_path / "normtest.toml")
    setting = BY_NAME[name]
    if setting.kind in ("int", "str"):
        parser = argparse.ArgumentParser()
        add_cli_options(parser)
        with pytest.raises(SystemExit):
            parser.parse_args([setting.option, str(value)])
        assert needle in capsys.readouterr().err
        result = pytester.runpytest_subprocess("--normtest-model", "glove-6b-50d",
                                               setting.pytest_option, str(value))
        assert needle in result.stderr.str()


def test_a_baseline_written_with_the_old_name_is_read_with_the_new_one() -> None:
    baseline = Report(results=[], provenance={"seed": 4, "n_resamples": 300,
                                              "audit_settings": {"words": 600}})
    chosen = gate_settings(load_config(None, start=Path("/")), baseline)
    assert (chosen.seed, chosen.resamples, chosen.words) == (4, 300, 600)


def test_a_setting_that_is_not_known_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / "normtest.toml").write_text("n_resamples = 300\n", encoding="utf-8")
    with pytest.raises(NormtestError, match=r"unknown key\(s\) \['n_resamples'\].*resamples"):
        load_config(tmp_path / "normtest.toml")


# -- profiles --------------------------------------------------------------------------------
def test_a_profile_sets_the_sample_sizes_and_an_explicit_size_wins(tmp_path: Path) -> None:
    from normtest.base.settings import PROFILES

    quick = resolve({"profile": "quick"})
    assert {k: quick[k] for k in PROFILES["quick"]} == PROFILES["quick"]
    assert resolve({"profile": "quick"}, {"words": 777})["words"] == 777
    # a size in the configuration file wins over a profile given on the command line, too
    assert resolve({"words": 600}, {"profile": "thorough"})["words"] == 600
    assert resolve({"profile": "thorough"})["documents"] == PROFILES["thorough"]["documents"]
    assert resolve()["words"] == BY_NAME["words"].default  # standard: the defaults
    (tmp_path / "normtest.toml").write_text('profile = "quick"\n', encoding="utf-8")
    gate = gate_settings(load_config(tmp_path / "normtest.toml"))
    assert (gate.profile, gate.words) == ("quick", PROFILES["quick"]["words"])
    with pytest.raises(NormtestError, match="profile"):
        AuditSettings(profile="fastest")


@pytest.mark.slow
def test_the_report_records_the_profile(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--profile",
                 "quick", "--words", "300", "--resamples", "200", "--out", str(tmp_path),
                 "--format", "json"]) == 0
    provenance = Report.read(tmp_path / "report.json").provenance
    assert provenance["profile"] == "quick" and provenance["resamples"] == 200
    assert provenance["words"] <= 300
