"""normtest.load: embedded names, paths, hub ids (offline), and the errors a user can make."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import normtest
from normtest.errors import NormtestError
from normtest.models.cache.adapter import CachedAdapter
from normtest.models.registry import embedded_names


def test_embedded_names() -> None:
    assert embedded_names() == ("glove-6b-50d", "minilm-l6", "smollm2-135m")


@pytest.mark.slow
def test_load_glove_by_name_with_and_without_cache(tmp_path: Path) -> None:
    plain = normtest.load("glove-6b-50d", cache=False)
    cached = normtest.load("glove-6b-50d", cache_dir=tmp_path)
    assert isinstance(cached, CachedAdapter) and not isinstance(plain, CachedAdapter)
    assert cached.name == plain.name == "glove-6b-50d" and cached.revision == plain.revision
    np.testing.assert_array_equal(cached.word_vectors(["king"]), plain.word_vectors(["king"]))


def test_unknown_name_gets_did_you_mean() -> None:
    with pytest.raises(NormtestError, match="did you mean 'glove-6b-50d'"):
        normtest.load("glove-6b-5od")
    with pytest.raises(NormtestError, match="Embedded models"):
        normtest.load("completely-unknown")


def test_hub_id_offline_and_uncached_is_refused(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    with pytest.raises(NormtestError, match=r"not in the Hugging Face cache .*HF_HUB_OFFLINE"):
        normtest.load("bert-base/uncased-variant")


def test_paths_are_read_by_what_they_are(tmp_path: Path) -> None:
    words = ["one", "two", "three"]
    np.save(tmp_path / "m.npy", np.eye(3, dtype=np.float32))
    (tmp_path / "vocab.txt").write_text("\n".join(words))
    model = normtest.load(tmp_path / "m.npy", vocabulary=tmp_path / "vocab.txt", cache=False)
    np.testing.assert_array_equal(model.word_vectors(["two"]), [[0, 1, 0]])
    (tmp_path / "v.txt").write_text("one 1 2\ntwo 3 4\n")
    assert normtest.load(tmp_path / "v.txt", cache=False).dim == 2
    np.savez(tmp_path / "p.npz", keys=np.array(words), vectors=np.eye(3))
    assert normtest.load(tmp_path / "p.npz", cache=False).dim == 3


def test_path_errors(tmp_path: Path) -> None:
    np.save(tmp_path / "m.npy", np.eye(3, dtype=np.float32))
    with pytest.raises(NormtestError, match="vocabulary=PATH"):
        normtest.load(tmp_path / "m.npy")
    with pytest.raises(NormtestError, match="no such file"):
        normtest.load(tmp_path / "absent.vec")
    with pytest.raises(NormtestError, match=r"without config\.json"):
        normtest.load(tmp_path)
    with pytest.raises(NormtestError, match="kind must be one of"):
        normtest.load("glove-6b-50d", kind="sideways")
    with pytest.raises(NormtestError, match="static model, not encoder"):
        normtest.load("glove-6b-50d", kind="encoder")
    with pytest.raises(NormtestError, match="do not apply"):
        normtest.load(tmp_path / "m.npy", vocabulary=tmp_path / "m.npy", layer=3)


@pytest.mark.slow
def test_embedded_transformers_load_by_name(tmp_path: Path) -> None:
    minilm = normtest.load("minilm-l6", cache_dir=tmp_path)
    assert minilm.name == "minilm-l6" and minilm.dim == 384 and minilm.states == ("cls",)
    assert minilm.special_states(["a cat."], "cls").shape == (1, 384)
    smol = normtest.load("smollm2-135m", cache=False)  # float32 copy from the default cache
    assert smol.dim == 576 and (smol.start_token_id, smol.end_token_id) == (0, 0)
    folder = normtest.load(str(smol.folder), cache=False, start_token_id=0, end_token_id=0)
    assert type(folder).__name__ == "DecoderAdapter"  # detected from config.json
    assert folder.revision == smol.revision


def _config_folder(root: Path, architecture: str, model_type: str) -> Path:
    import json

    folder = root / architecture
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps({"architectures": [architecture], "model_type": model_type})
    )
    return folder


def test_kind_is_decided_from_the_architecture() -> None:
    from normtest.models.registry import _config_kind

    assert _config_kind({"architectures": ["LlamaForCausalLM"]}) == "decoder"
    assert _config_kind({"architectures": ["BertModel"]}) == "encoder"
    assert _config_kind({"model_type": "qwen2"}) == "decoder"
    assert _config_kind({}) == "encoder"


def test_one_record_type_and_one_lookup_for_every_model_known_by_name() -> None:
    """Embedded and installable models are rows of one type (``NamedModel``), found through
    one lookup, each with the family its adapter reports."""
    from normtest.models.installable import INSTALLABLE
    from normtest.models.named import NamedModel
    from normtest.models.registry import EMBEDDED, model_rows, named_models

    known = named_models()
    assert list(known) == [*EMBEDDED, *INSTALLABLE]
    assert all(isinstance(row, NamedModel) and row.architecture and row.size and row.licence
               for row in known.values())
    assert [row.name for row, _ in model_rows()] == list(known)
