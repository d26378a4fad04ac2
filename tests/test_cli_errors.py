"""Bad inputs and faults at the command line: one clear line and exit 2, or a correct result.

Each test is one case a new user met: it asserts the exit code, the words of the message that
say what to do, and that no Python traceback reached the terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from normtest.audit.report import SCHEMA, Report
from normtest.audit.run import AuditSettings
from normtest.base.progress import without_progress
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError

OFFLINE = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``normtest ARGS`` in this process: (exit code, stdout, stderr without the progress
    lines a command prints off a terminal)."""
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, without_progress(captured.err)


def assert_clear_error(code: int, err: str, *needles: str) -> None:
    """Exit 2, one ``normtest: error:`` line (argparse's usage lines aside), no traceback."""
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err
    assert "error:" in err
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"


@pytest.fixture(scope="module")
def minilm_files() -> Path:
    """The embedded MiniLM folder (its configuration and tokenizer are borrowed below)."""
    from normtest.adapters.embedded import minilm_folder

    return minilm_folder()


def _folder_with_tokenizer(target: Path, minilm: Path) -> Path:
    target.mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt",
                 "special_tokens_map.json"):
        if (minilm / name).is_file():
            shutil.copy(minilm / name, target / name)
    return target


# -- security ------------------------------------------------------------------------------------
def _remote_code_folder(tmp_path: Path, minilm: Path) -> tuple[Path, Path]:
    """A folder whose config names its own modules; they leave a marker file when imported."""
    folder = _folder_with_tokenizer(tmp_path / "custom", minilm)
    marker = tmp_path / "code-ran"
    (folder / "config.json").write_text(json.dumps({
        "model_type": "normtest_custom", "architectures": ["CustomModel"],
        "auto_map": {"AutoConfig": "configuration_custom.CustomConfig",
                     "AutoModel": "modeling_custom.CustomModel"},
        "hidden_size": 8, "num_hidden_layers": 1, "vocab_size": 30522,
    }), encoding="utf-8")
    code = (f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
            "from transformers import PretrainedConfig\n"
            "class CustomConfig(PretrainedConfig):\n    model_type = 'normtest_custom'\n")
    (folder / "configuration_custom.py").write_text(code, encoding="utf-8")
    (folder / "modeling_custom.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n", encoding="utf-8")
    return folder, marker


@pytest.mark.slow
def test_a_folder_with_its_own_code_is_refused_even_with_yes_on_stdin(
    tmp_path: Path, minilm_files: Path
) -> None:
    folder, marker = _remote_code_folder(tmp_path, minilm_files)
    done = subprocess.run(
        [sys.executable, "-m", "normtest", "audit", "--model", str(folder), "--suite", "word",
         "--words", "10", "--no-cache"],
        input="y\ny\ny\n", capture_output=True, text=True, env=OFFLINE, timeout=120, check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert not marker.exists(), "the folder's own code ran"
    assert "Do you wish to run" not in done.stdout + done.stderr  # never a prompt
    assert "Traceback" not in done.stderr
    for needle in (str(folder), "--trust-remote-code", "modeling_custom.py", "security.md"):
        assert needle in done.stderr


def test_trust_remote_code_is_the_opt_in(tmp_path: Path, minilm_files: Path) -> None:
    import normtest

    folder, marker = _remote_code_folder(tmp_path, minilm_files)
    with pytest.raises(NormtestError, match="trust_remote_code=True"):
        normtest.load(folder, cache=False)
    assert not marker.exists()
    # with the opt-in transformers imports the folder's code (which then lacks weights)
    with pytest.raises(NormtestError, match="holds no weights"):
        normtest.load(folder, cache=False, trust_remote_code=True)
    assert marker.read_text() == "ran"


def test_trust_remote_code_in_the_configuration(tmp_path: Path) -> None:
    from normtest.gate.config import load_config

    (tmp_path / "normtest.toml").write_text("trust_remote_code = true\n", encoding="utf-8")
    assert load_config(tmp_path / "normtest.toml").settings["trust_remote_code"] is True
    (tmp_path / "normtest.toml").write_text('trust_remote_code = "yes"\n', encoding="utf-8")
    with pytest.raises(NormtestError, match=r"trust_remote_code.*true or false"):
        load_config(tmp_path / "normtest.toml")


@pytest.mark.slow
def test_pickled_weights_are_refused_with_a_clear_error(
    tmp_path: Path, minilm_files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    folder = _folder_with_tokenizer(tmp_path / "pickled", minilm_files)
    shutil.copy(minilm_files / "config.json", folder / "config.json")
    # a pickle that would call os.system on load: weights_only=True must refuse it
    torch.save({"embeddings.word_embeddings.weight": torch.zeros(2, 2),
                "payload": _Payload()}, folder / "pytorch_model.bin")
    code, _, err = run_cli(["audit", "--model", str(folder), "--suite", "word", "--words", "10",
                            "--no-cache"], capsys)
    assert_clear_error(code, err, "pickled objects", "weights_only=True", "safetensors")
    assert err.count("pickled objects") == 1  # the same reason is not repeated per claim


class _Payload:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("echo pwned",))


# -- tracebacks that are now clear errors ---------------------------------------------------------
@pytest.mark.parametrize("command", [
    ["audit", "--model", "glove-6b-50d", "--seed", "-1"],
    ["demo", "--seed", "-1"],
    ["gate", "--model", "glove-6b-50d", "--require", "word.norm_ic", "--seed", "-1"],
])
def test_a_negative_seed_is_a_usage_error(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(command, capsys)
    assert_clear_error(code, err, "--seed", "must be at least 0")


def test_a_negative_seed_is_refused_from_python_too() -> None:
    with pytest.raises(NormtestError, match="seed must be a whole number"):
        AuditSettings(seed=-1)


def _demo_report(folder: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["demo", "--words", "200", "--out", str(folder), "--format", "json"]) == EXIT_OK
    capsys.readouterr()
    return folder / "report.json"


def test_a_report_that_is_not_utf8_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes('{"schema": "caf\u00e9"}'.encode("latin-1"))
    code, _, err = run_cli(["report", str(bad)], capsys)
    assert_clear_error(code, err, str(bad), "not UTF-8")
    good = _demo_report(tmp_path / "demo", capsys)
    code, _, err = run_cli(["gate", "--report", str(good), "--baseline", str(bad), "--require",
                            "demo.norm_ic"], capsys)
    assert_clear_error(code, err, "baseline report", str(bad), "not UTF-8")
    code, _, err = run_cli(["gate", "--report", str(bad), "--require", "demo.norm_ic"], capsys)
    assert_clear_error(code, err, "candidate report", str(bad))


@pytest.mark.slow
def test_a_closed_pipe_is_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _demo_report(tmp_path, capsys)
    done = subprocess.run(
        f'"{sys.executable}" -m normtest report "{report}" | head -c 0; '
        'echo "status=${PIPESTATUS[0]}" >&2',
        shell=True, executable="/bin/bash", capture_output=True, text=True, env=OFFLINE,
        timeout=120, check=False,
    )
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert "status=0" in done.stderr


# -- messages that no longer mislead -----------------------------------------------------------
def test_a_hub_id_says_how_to_download_it(capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # offline and not in the (empty) local cache
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    code, _, err = run_cli(["audit", "--model", "someone/some-model"], capsys)
    assert_clear_error(code, err, "is not in the Hugging Face cache", "HF_HUB_OFFLINE",
                       "huggingface-cli download someone/some-model")
    assert "--allow-network" not in err  # an option that does not exist


@pytest.mark.slow
def test_a_bare_npy_takes_its_vocabulary_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from normtest.adapters.static import glove_6b_50d

    glove = glove_6b_50d()
    matrix, words = tmp_path / "vectors.npy", tmp_path / "words.txt"
    np.save(matrix, np.asarray(glove.vectors[:3000], dtype=np.float32))
    words.write_text("\n".join(glove.vocabulary[:3000]) + "\n", encoding="utf-8")
    code, _, err = run_cli(["audit", "--model", str(matrix), "--suite", "word"], capsys)
    assert_clear_error(code, err, "--vocabulary PATH")
    code, out, err = run_cli(["audit", "--model", str(matrix), "--vocabulary", str(words),
                              "--claims", "word.norm_ic", "--words", "200", "--resamples", "200",
                              "--no-cache"], capsys)
    assert code == EXIT_OK, err
    assert "word.norm_ic " in out  # its line in the per-claim list
    code, _, err = run_cli(["audit", "--model", "glove-6b-50d", "--vocabulary", str(words)],
                           capsys)
    assert_clear_error(code, err, "--vocabulary applies to a bare .npy matrix only")


def test_a_small_corpus_names_the_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tiny.txt").write_text("A few words here.\n\nAnd a few more there.\n",
                                     encoding="utf-8")
    code, out, err = run_cli(["audit", "--model", "glove-6b-50d", "--claims", "word.norm_kl",
                              "cond.inner_pmi", "--words", "200", "--resamples", "100",
                              "--corpus", str(corpus), "--no-cache"], capsys)
    # nothing could run: the one error says why, once per cause, and what to do
    assert_clear_error(code, err, "is too small", "larger corpus with --corpus")
    assert "list is empty" not in err + out


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_an_unwritable_out_is_refused_before_any_work(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "blocker.txt"
    blocker.write_text("not a folder", encoding="utf-8")
    out = blocker if where == "a file" else blocker / "reports"
    # an unknown model would fail later: the --out error must come first
    code, _, err = run_cli(["audit", "--model", "glove-6b-50d", "--out", str(out),
                            "--words", "10"], capsys)
    assert_clear_error(code, err, "--out", str(out))
    code, _, err = run_cli(["report", str(tmp_path / "missing.json"), "--out", str(tmp_path)],
                           capsys)
    assert_clear_error(code, err, "is a folder")


def test_an_out_under_a_folder_that_cannot_be_searched_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # as a user other than root, stat() of a path under a chmod-500 folder of another owner
    # raises PermissionError (root never sees it, so the refusal is simulated here)
    blocked = tmp_path / "blocked"
    real_stat = Path.stat

    def stat(self: Path, *args: object, **kwargs: object) -> os.stat_result:
        if self == blocked or blocked in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", stat)
    report = tmp_path / "missing.json"
    for args in (["audit", "--model", "glove-6b-50d", "--out", str(blocked / "sub")],
                 ["report", str(report), "--out", str(blocked / "sub" / "r.md")],
                 ["gate", "--report", str(report), "--summary", str(blocked / "sub" / "s.md")]):
        code, _, err = run_cli(args, capsys)
        assert_clear_error(code, err, "Permission denied", "writable folder")


def test_a_newer_report_says_upgrade(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    newer = tmp_path / "report.json"
    major = int(SCHEMA.rsplit("/", 1)[1]) + 1
    newer.write_text(json.dumps({"schema": f"normtest.report/{major}", "results": []}),
                     encoding="utf-8")
    code, _, err = run_cli(["report", str(newer)], capsys)
    assert_clear_error(code, err, "newer normtest", "pip install --upgrade normtest")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "something/else"}), encoding="utf-8")
    code, _, err = run_cli(["report", str(other)], capsys)
    assert_clear_error(code, err, "not a normtest report")
    assert "upgrade" not in err


def test_a_threshold_error_in_the_file_quotes_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.normtest]\nmodel = "glove-6b-50d"\nrequire = ["word.norm_ic"]\n'
                      '[tool.normtest.thresholds]\n"cer.linear" = 0.5\n', encoding="utf-8")
    code, _, err = run_cli(["gate", "--config", str(config)], capsys)
    assert_clear_error(code, err, str(config), '"cer.linear" = [0.8, 1.25]')
    assert "--threshold" not in err
    # and the command line's error quotes the command line's syntax
    report = _demo_report(tmp_path / "demo", capsys)
    code, _, err = run_cli(["report", str(report), "--threshold", "demo.cer_linear=0.5"], capsys)
    assert_clear_error(code, err, "--threshold", "CLAIM=LOW:HIGH")


# -- silently wrong no more ----------------------------------------------------------------------
def _lee_paragraphs() -> str:
    from gensim.test.utils import datapath

    lines = Path(datapath("lee_background.cor")).read_text(encoding="utf-8").splitlines()
    return "\n\n".join(lines)


def test_a_latin1_corpus_is_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "latin1"
    corpus.mkdir()
    (corpus / "news.txt").write_bytes(_lee_paragraphs().replace("e", "\u00e9").encode("latin-1"))
    code, _, err = run_cli(["audit", "--model", "glove-6b-50d", "--suite", "conditions",
                            "--corpus", str(corpus)], capsys)
    assert_clear_error(code, err, "not UTF-8", "iconv -f latin1 -t utf-8", "news.txt")


@pytest.mark.slow
def test_a_few_replaced_bytes_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "mostly-utf8"
    corpus.mkdir()
    text = _lee_paragraphs().encode("utf-8")
    (corpus / "news.txt").write_bytes(text[:1000] + b"\xe9\xe9\xe9" + text[1000:])
    code, out, err = run_cli(["audit", "--model", "glove-6b-50d", "--claims", "cond.centered",
                              "--words", "200", "--resamples", "100", "--corpus", str(corpus),
                              "--out", str(tmp_path / "out"), "--format", "json", "--no-cache"],
                             capsys)
    assert code == EXIT_OK, err
    assert "3 of the corpus's" in out and "U+FFFD" in out
    provenance = Report.read(tmp_path / "out" / "report.json").provenance
    assert provenance["corpus_replaced_bytes"] == 3
    assert provenance["corpus_bytes"] == len(text) + 3


def test_ctrl_c_inside_a_finaliser_is_not_lost(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, ctrl_c_delivered: None
) -> None:
    # a Ctrl-C delivered while the garbage collector runs a __del__ used to be printed as
    # "Exception ignored ... KeyboardInterrupt" and dropped: the audit ran on to its end
    import normtest.cli.main as cli

    class Finalised:
        def __del__(self) -> None:
            raise KeyboardInterrupt

    def command(args: object) -> int:
        Finalised()  # collected at once; its KeyboardInterrupt cannot propagate from __del__
        deadline = time.monotonic() + 5  # the interrupt is raised again here, outside it
        while time.monotonic() < deadline:
            pass
        return EXIT_OK

    monkeypatch.setattr(cli.catalogue, "list_claims", command)
    code, _, err = run_cli(["list"], capsys)
    assert code == cli.EXIT_INTERRUPTED
    assert "interrupted" in err and "Exception ignored" not in err and "Traceback" not in err


# -- the embedding cache's folder removed while an audit runs ----------------------------------
GLOVE_WORDS = ["audit", "--model", "glove-6b-50d", "--suite", "word", "--words", "60",
               "--resamples", "100", "--format", "json"]


def _rows(folder: Path) -> list[dict[str, object]]:
    return [r.to_dict() for r in Report.read(folder / "report.json").results]


@pytest.mark.slow
def test_a_cache_folder_removed_mid_audit_is_made_again_and_loses_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import normtest.models.cache.adapter as cached

    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "reference-cache"))
    code, _, err = run_cli([*GLOVE_WORDS, "--out", str(tmp_path / "reference")], capsys)
    assert code == EXIT_OK, err
    cache = tmp_path / "cache"
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(cache))
    # an earlier audit (other words) left vectors in the cache
    code, _, err = run_cli([*GLOVE_WORDS, "--seed", "1", "--out", str(tmp_path / "earlier")],
                           capsys)
    assert code == EXIT_OK, err
    real = cached.compute_items

    def removing(*args: object, **kwargs: object) -> object:
        shutil.rmtree(cache)  # `rm -rf` of the cache folder while the model computes
        monkeypatch.setattr(cached, "compute_items", real)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cached, "compute_items", removing)
    code, _, err = run_cli([*GLOVE_WORDS, "--out", str(tmp_path / "out")], capsys)
    assert code == EXIT_OK, err
    assert "Traceback" not in err and "readonly database" not in err
    warned = [line for line in err.splitlines() if line.strip()]
    assert len(warned) == 1, err
    assert warned[0].startswith(f"normtest: warning: the embedding cache {cache}")
    assert "was removed during the run; made it again" in warned[0]
    assert "vectors it held were copied over, so none is lost" in warned[0]
    assert _rows(tmp_path / "out") == _rows(tmp_path / "reference")
    # every vector of both audits is in the cache made again: neither computes one now
    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("a vector was computed although the cache holds every one")

    monkeypatch.setattr(cached, "compute_items", no_model)
    for seed, out in (("0", "again"), ("1", "earlier-again")):
        code, _, err = run_cli([*GLOVE_WORDS, "--seed", seed, "--out", str(tmp_path / out)],
                               capsys)
        assert code == EXIT_OK, err
        assert "warning" not in err
    assert _rows(tmp_path / "again") == _rows(tmp_path / "reference")


# -- Ray options that cannot work together ------------------------------------------------------
def test_ray_with_no_cache_names_no_cache_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was loaded for options that cannot run")

    monkeypatch.setattr("normtest.models.registry.load", no_model)
    code, _, err = run_cli([*GLOVE_WORDS, "--out", str(tmp_path), "--executor", "ray",
                            "--no-cache"], capsys)
    assert_clear_error(code, err, "--executor ray cannot run with --no-cache",
                       "Drop --no-cache", "NORMTEST_CACHE_DIR", "--executor local")
    assert "module:attribute" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1


@pytest.mark.slow
def test_no_cache_still_runs_with_the_local_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli([*GLOVE_WORDS, "--out", str(tmp_path), "--executor", "local",
                            "--no-cache"], capsys)
    assert code == EXIT_OK, err
    assert (tmp_path / "report.json").is_file()
