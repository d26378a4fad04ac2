"""Hugging Face ids in every front end, offline: a cache in the ``models--owner--name/snapshots/
REV`` layout built from a small random BERT (MiniLM's tokenizer), as huggingface_hub lays it out
after a download. Nothing here reaches the network (HF_HUB_OFFLINE=1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import normtest
from normtest.base.progress import without_progress
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.models.hub import is_hub_id, split

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

REPO, REV, OTHER_REV = "lab/tiny-bert", "a" * 40, "b" * 40


def _tiny_bert(folder: Path, hidden: int) -> None:
    from normtest.adapters.embedded import minilm_folder

    tok = transformers.AutoTokenizer.from_pretrained(minilm_folder())
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=2 * hidden,
                                     max_position_embeddings=512, pad_token_id=tok.pad_token_id)
    transformers.BertModel(config).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Hugging Face cache holding lab/tiny-bert at two commits, main → the first."""
    cache = tmp_path_factory.mktemp("hf") / "hub"
    repo = cache / "models--lab--tiny-bert"
    for rev, hidden in ((REV, 32), (OTHER_REV, 16)):
        _tiny_bert(repo / "snapshots" / rev, hidden)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(REV, encoding="utf-8")
    return cache


@pytest.fixture
def offline_cache(hub_cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setenv("NORMTEST_CACHE_DIR", str(tmp_path / "normtest-cache"))
    return hub_cache


def test_what_reads_as_a_hub_id(tmp_path: Path) -> None:
    assert is_hub_id("owner/name") and is_hub_id("owner/name@main") and is_hub_id(f"o/n@{REV}")
    assert not is_hub_id("glove-6b-50d") and not is_hub_id("./owner/name")
    assert not is_hub_id("a/b/c") and not is_hub_id("module:attr")
    assert split("owner/name@v1.0") == ("owner/name", "v1.0")
    (tmp_path / "owner").mkdir()
    (tmp_path / "owner" / "name").mkdir()
    with pytest.MonkeyPatch.context() as m:
        m.chdir(tmp_path)
        assert not is_hub_id("owner/name")  # an existing local path wins


@pytest.mark.slow
def test_an_id_loads_from_the_local_cache(offline_cache: Path) -> None:
    adapter = normtest.load(REPO, cache=False, progress=False)
    assert adapter.name == REPO and adapter.dim == 32
    (vectors,) = adapter.token_vectors(["information"])
    assert vectors.shape[1] == 32


def test_a_revision_picks_its_snapshot(offline_cache: Path) -> None:
    assert normtest.load(f"{REPO}@{OTHER_REV}", cache=False, progress=False).dim == 16
    assert normtest.load(f"{REPO}@main", cache=False, progress=False).dim == 32


def test_offline_and_uncached_is_one_clear_line(offline_cache: Path) -> None:
    with pytest.raises(NormtestError, match=r"'lab/absent' is not in the Hugging Face cache .*"
                                            r"HF_HUB_OFFLINE is set.*huggingface-cli download"):
        normtest.load("lab/absent", cache=False)
    with pytest.raises(NormtestError, match="HF_HUB_OFFLINE is set"):
        normtest.load(f"{REPO}@{'c' * 40}", cache=False)  # a commit the cache lacks


def test_remote_code_in_a_cached_repository_stays_refused(
    offline_cache: Path, tmp_path: Path
) -> None:
    repo = offline_cache / "models--lab--custom"
    snapshot = repo / "snapshots" / REV
    shutil.copytree(offline_cache / "models--lab--tiny-bert" / "snapshots" / REV, snapshot)
    config = json.loads((snapshot / "config.json").read_text(encoding="utf-8"))
    config["auto_map"] = {"AutoModel": "modeling_x.XModel"}
    (snapshot / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (snapshot / "modeling_x.py").write_text("raise SystemExit('remote code ran')\n")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REV, encoding="utf-8")
    with pytest.raises(NormtestError, match="asks to run its own Python code"):
        normtest.load("lab/custom", cache=False)


@pytest.mark.slow
def test_the_command_line_audits_an_id(offline_cache: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "--model", REPO, "--suite", "word", "--words", "60", "--resamples",
                 "100", "--no-robustness", "--no-controls", "--out", str(tmp_path / "out"),
                 "--format", "json"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    assert f"normtest audit of {REPO} (encoder)" in out
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["model"]["name"] == REPO
    code = main(["audit", "--model", "lab/absent", "--suite", "word", "--words", "60"])
    err = without_progress(capsys.readouterr().err)
    assert code == EXIT_USAGE and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.strip()]
    assert line.startswith("normtest: error: 'lab/absent' is not in the Hugging Face cache")


@pytest.mark.slow
def test_the_configuration_names_an_id_as_the_command_line_does(
    offline_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "normtest.toml").write_text(f'model = "{REPO}"\nwords = 60\n', encoding="utf-8")
    code = main(["gate", "--config", str(tmp_path / "normtest.toml"), "--require",
                 "word.norm_ic", "--resamples", "100"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and REPO in out + err
    assert code in (0, 1)  # the gate ran on the model (its verdict is the model's business)
