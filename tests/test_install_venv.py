"""scripts/install_venv.py: pip's configuration carried over to uv, or pip where it cannot be."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))  # tests/repo_scripts.py
from repo_scripts import ROOT, load_script

LISTING = """\
:env:.default-timeout='180'
:env:.disable-pip-version-check='1'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/pip/constraints.txt'
global.extra-index-url='file:///a/simple file:///b/simple'
global.find-links='/srv/other'
"""


def test_pips_configuration_becomes_uvs_flags_and_variables() -> None:
    script: Any = load_script("install_venv")
    options = script.pip_options(LISTING)
    assert options["find-links"] == "/opt/wheels"  # a PIP_ variable overrides a file
    flags, variables = script.uv_arguments(options)
    assert flags[:2] == ["--index-strategy", "unsafe-best-match"]  # every index, as pip does
    pairs = list(zip(flags[2::2], flags[3::2], strict=True))
    assert ("--find-links", "/opt/wheels") in pairs
    assert ("--constraint", "/etc/pip/constraints.txt") in pairs
    assert [v for f, v in pairs if f == "--index"] == ["file:///a/simple", "file:///b/simple"]
    assert variables == {"UV_HTTP_TIMEOUT": "180",
                         "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"}


def test_only_what_pip_install_reads_counts_and_a_doubled_option_keeps_pip() -> None:
    script: Any = load_script("install_venv")
    listing = ("global.timeout='12.5'\ndownload.index-url='https://elsewhere'\n"
               "install.find-links='/srv/install'\nglobal.find-links='/srv/global'\n"
               "global.cert=''\n")
    options = script.pip_options(listing)
    assert options == {"timeout": "12.5", "find-links": "/srv/install"}  # install over global
    flags, variables = script.uv_arguments(options)
    assert variables == {"UV_HTTP_TIMEOUT": "13"}  # uv takes whole seconds
    assert "https://elsewhere" not in flags
    # two files setting one option in one section: which wins is pip's to say
    assert script.pip_options("global.constraint='/a'\nglobal.constraint='/b'\n") is None


def test_an_option_uv_is_not_given_keeps_pip() -> None:
    script: Any = load_script("install_venv")
    assert script.uv_arguments(script.pip_options(LISTING + "global.proxy='http://p:3128'\n")) \
        is None
    assert script.uv_arguments(script.pip_options("global.trusted-host='example'\n")) is None
    assert script.uv_arguments({}) == (["--index-strategy", "unsafe-best-match"], {})
    assert script.pip_options("global.timeout=\nnot an option line\n") == {}


def test_steps_are_separated_by_double_dashes() -> None:
    script: Any = load_script("install_venv")
    assert script.steps_of(["torch==2.13.0", "--", "-e", ".[dev]", "--", "--no-deps", "x==1"]) \
        == [["torch==2.13.0"], ["-e", ".[dev]"], ["--no-deps", "x==1"]]
    assert script.steps_of([]) == []


def test_the_makefile_installs_through_it() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "scripts/install_venv.py torch==$(TORCH_VERSION)" in makefile
    assert "pip install" not in makefile.split("$(STAMP): pyproject.toml", 1)[1].split("touch")[0]


def test_a_step_pip_cannot_install_ends_with_pips_code_and_says_where_to_look(
        monkeypatch: Any, capsys: Any) -> None:
    script: Any = load_script("install_venv")
    monkeypatch.setenv("NORMTEST_INSTALLER", "pip")
    calls: list[tuple[str, ...]] = []

    def pip(*arguments: str, check: bool = True) -> None:
        calls.append(arguments)
        if "no-such-package==0" in arguments:
            raise script.subprocess.CalledProcessError(1, ["pip", *arguments])

    monkeypatch.setattr(script, "_pip", pip)
    assert script.main(["no-such-package==0", "--", "never"]) == 1
    assert calls == [("install", "--quiet", "--upgrade", "pip"),
                     ("install", "--quiet", "no-such-package==0")]  # nothing after the failure
    assert "could not install no-such-package==0" in capsys.readouterr().err
