"""What normtest stores and reads back: the corpus counts and the sentence surprisal.

Each store's files carry a SHA-256 of their arrays (the key they were computed from included) and
are checked on read (normtest/data/information/checked_files.py). Hostile files are built from sound
ones in a temporary folder — counts multiplied on half the rows, word or token offsets shifted with
the same total, values reversed, the file cut to half its bytes, random bytes, a file of another
format, another entry's file — each with its checksum left as it was and, where the content can
still be caught, recomputed as a forger would: every one is recomputed (equal to a fresh
computation) and replaced, with exactly one ``normtest: warning:`` line naming the file. A sound
entry is read back without computing and without a word on stderr; an absent one is computed
silently.

The surprisal model is SmolLM2 (its real tokenizer counts the tokens the store is checked
against); its log-probabilities are remembered per text list after the first scoring, so that a
recomputation (still one counted call of ``token_logprobs``) costs nothing on a busy CPU.
"""

from __future__ import annotations

import contextlib
import importlib
import shutil
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.adapters.protocol import Tokenization
from normtest.base.fingerprint import arrays_sha256
from normtest.cli.main import _one_line_warning
from normtest.data.information import scaled
from normtest.data.information.checked_files import CHECKSUM, write_checked
from normtest.data.information.samples import default_word_sample
from normtest.data.information.surprisal import surprisal
from normtest.data.information.texts import lee_texts
from normtest.data.information.vocabulary_counts import FORMAT, CorpusCounts
from normtest.errors import NormtestError

# the module, not the function normtest.data.information exports under the same name
surprisal_module = importlib.import_module("normtest.data.information.surprisal")

RECOMPUTED = "; recomputing it and replacing the file"


# ---------------------------------------------------------------------------- helpers


@contextlib.contextmanager
def cli_warnings() -> Iterator[None]:
    """Warnings printed as the command line prints them (one ``normtest: warning:`` line each),
    every one of them (not once per place)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _one_line_warning
        yield


def stderr_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.splitlines()


def assert_one_warning(lines: list[str], path: Path, what: str) -> None:
    assert len(lines) == 1, lines
    (line,) = lines
    assert line.startswith(f"normtest: warning: {path} cannot be used as {what}: "), line
    assert line.endswith(RECOMPUTED), line


def members(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {name: z[name] for name in z.files}


def rewrite(path: Path, change: Callable[[dict[str, np.ndarray]], None], *,
            checksum: bool) -> None:
    """Change a stored file's arrays in place, keeping its old checksum (``checksum=False``) or
    writing the checksum of the new content, as a forger would (``checksum=True``)."""
    arrays = members(path)
    change(arrays)
    if checksum:
        arrays[CHECKSUM] = np.array(arrays_sha256(
            {k: v for k, v in arrays.items() if k != CHECKSUM}))
    with path.open("wb") as out:
        np.savez(out, **arrays)


def without_checksum(path: Path, change: Callable[[dict[str, np.ndarray]], None]) -> None:
    """The file as the previous format wrote it: the same arrays, no checksum."""
    arrays = members(path)
    del arrays[CHECKSUM]
    change(arrays)
    with path.open("wb") as out:
        np.savez(out, **arrays)


def another_store(path: Path, names: Sequence[str]) -> None:
    """A sound store file (its checksum matches) of another store's layout."""
    write_checked(path, {name: np.arange(4, dtype=np.int64) for name in names})


def halve(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def random_bytes(path: Path) -> None:
    path.write_bytes(np.random.default_rng(0).bytes(path.stat().st_size))


# ---------------------------------------------------------------------------- corpus counts


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four files of 15 Lee paragraphs each."""
    docs = [t.text for t in lee_texts()]
    folder = tmp_path_factory.mktemp("corpus")
    for i in range(4):
        (folder / f"part{i}.txt").write_text("\n\n".join(docs[i * 15 : (i + 1) * 15]) + "\n",
                                             encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def words() -> list[str]:
    return [*default_word_sample(size=120, seed=0), "zzzznotaword"]


@pytest.fixture(scope="module")
def fresh(corpus: Path, words: list[str]) -> CorpusCounts:
    return scaled.corpus_counts(corpus, words, store=False)


def assert_same_counts(a: CorpusCounts, b: CorpusCounts) -> None:
    assert a.vocabulary == b.vocabulary and a.rows == b.rows
    assert np.array_equal(a.unigram_counts, b.unigram_counts)
    assert np.array_equal(a.marginals, b.marginals)
    assert (a.cooccurrence != b.cooccurrence).nnz == 0
    assert (a.window, a.lang, a.source, a.n_documents, a.n_empty_documents,
            a.n_replaced_bytes) == (b.window, b.lang, b.source, b.n_documents,
                                    b.n_empty_documents, b.n_replaced_bytes)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the corpus was counted (whole or in halves), as a list of one number."""
    calls = [0]
    real = scaled._count

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(scaled, "_count", counting)
    return calls


def _rows_multiplied(arrays: dict[str, np.ndarray]) -> None:
    """n(x, c) × 3 on the first half of the rows (the hostile file the user built)."""
    indptr = arrays["indptr"]
    half = int(indptr[(indptr.size - 1) // 2])
    arrays["data"] = arrays["data"].copy()
    arrays["data"][:half] *= 3


def _word_offsets_shifted(arrays: dict[str, np.ndarray]) -> None:
    """The words' byte offsets moved (the same total): other words, the same counts."""
    offsets = arrays["types_offsets"].copy()
    offsets[1:-1] += 1
    arrays["types_offsets"] = np.minimum(offsets, offsets[-1])


CORPUS_DAMAGE: dict[str, Callable[[Path], None]] = {
    "rows multiplied": lambda p: rewrite(p, _rows_multiplied, checksum=False),
    "rows multiplied, checksum recomputed": lambda p: rewrite(p, _rows_multiplied,
                                                              checksum=True),
    "word offsets shifted": lambda p: rewrite(p, _word_offsets_shifted, checksum=False),
    "word offsets shifted, checksum recomputed": lambda p: rewrite(p, _word_offsets_shifted,
                                                                   checksum=True),
    "truncated to half": halve,
    "random bytes": random_bytes,
    "empty": lambda p: p.write_bytes(b""),
    "text": lambda p: p.write_text("word count\nthe 12\n", encoding="utf-8"),
    "previous format, no checksum": lambda p: without_checksum(p, lambda a: None),
    "surprisal store's file": lambda p: another_store(p, ["key", "values", "offsets"]),
}


def test_sound_counts_are_read_back_silently(
        corpus: Path, words: list[str], fresh: CorpusCounts, tmp_path: Path,
        counted: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    with cli_warnings():
        first = scaled.corpus_counts(corpus, words, directory=tmp_path)  # absent: silent
        assert counted == [1] and stderr_lines(capsys) == []
        again = scaled.corpus_counts(corpus, words, directory=tmp_path)
        halves = again.halves(0)
        halves_again = scaled.corpus_counts(corpus, words, directory=tmp_path).halves(0)
    assert counted == [2]  # the halves, once; the whole corpus was read back
    assert stderr_lines(capsys) == []
    assert_same_counts(first, fresh)
    assert_same_counts(again, fresh)
    for a, b in zip(halves, halves_again, strict=True):
        assert_same_counts(a, b)
    (path,) = (p for p in tmp_path.iterdir() if CorpusCounts.load(p)[0].source == fresh.source)
    with np.load(path, allow_pickle=False) as z:
        assert CHECKSUM in z.files
    loaded, key = CorpusCounts.load(path)
    assert_same_counts(loaded, fresh)
    assert key["format"] == FORMAT and key["window"] == fresh.window


@pytest.mark.parametrize("damage", list(CORPUS_DAMAGE))
def test_damaged_counts_are_counted_again_with_one_warning(
        corpus: Path, words: list[str], fresh: CorpusCounts, tmp_path: Path,
        counted: list[int], capsys: pytest.CaptureFixture[str], damage: str) -> None:
    scaled.corpus_counts(corpus, words, directory=tmp_path)
    (path,) = tmp_path.iterdir()
    CORPUS_DAMAGE[damage](path)
    kept = tmp_path / "damaged.bin"
    shutil.copyfile(path, kept)
    with pytest.raises(NormtestError, match="cannot be used as corpus counts"):
        CorpusCounts.load(kept)  # public: a NormtestError, never a traceback
    with cli_warnings():
        again = scaled.corpus_counts(corpus, words, directory=tmp_path)
    assert counted == [2]
    assert_one_warning(stderr_lines(capsys), path, "corpus counts")
    assert_same_counts(again, fresh)
    assert_same_counts(CorpusCounts.load(path)[0], fresh)  # replaced
    with cli_warnings():
        assert_same_counts(scaled.corpus_counts(corpus, words, directory=tmp_path), fresh)
    assert counted == [2] and stderr_lines(capsys) == []


def test_another_entrys_counts_are_counted_again(
        corpus: Path, words: list[str], fresh: CorpusCounts, tmp_path: Path,
        counted: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    """A sound file of another key (window 4) under this key's name."""
    scaled.corpus_counts(corpus, words, window=4, directory=tmp_path)
    (other,) = tmp_path.iterdir()
    key = scaled._key(scaled.corpus_files(corpus), fresh.window, "en", "paragraph", "text")
    path = scaled._store_path(key, tmp_path)
    shutil.copyfile(other, path)
    with cli_warnings():
        again = scaled.corpus_counts(corpus, words, directory=tmp_path)
    assert counted == [2]
    lines = stderr_lines(capsys)
    assert_one_warning(lines, path, "corpus counts")
    assert "they were stored for another key" in lines[0]
    assert_same_counts(again, fresh)
    assert CorpusCounts.load(other)[0].window == 4  # the other entry is left as it was


def test_damaged_halves_are_counted_again_with_one_warning(
        corpus: Path, words: list[str], tmp_path: Path, counted: list[int],
        capsys: pytest.CaptureFixture[str]) -> None:
    whole = scaled.corpus_counts(corpus, words, directory=tmp_path)
    halves = whole.halves(0)
    (whole_path,) = (p for p in tmp_path.iterdir()
                     if CorpusCounts.load(p)[0].source == whole.source)
    half_path = next(p for p in tmp_path.iterdir()
                     if CorpusCounts.load(p)[0].source == halves[1].source)
    rewrite(half_path, _rows_multiplied, checksum=False)
    with cli_warnings():
        again = scaled.corpus_halves(corpus, words, directory=tmp_path)
    assert counted == [3]
    assert_one_warning(stderr_lines(capsys), half_path, "corpus counts")
    for a, b in zip(again, halves, strict=True):
        assert_same_counts(a, b)
    assert whole_path.exists()


def test_a_folder_in_place_of_the_counts_is_counted_with_a_warning(
        corpus: Path, words: list[str], fresh: CorpusCounts, tmp_path: Path,
        counted: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    """An entry that cannot even be opened: counted, used, not kept (it cannot be replaced)."""
    key = scaled._key(scaled.corpus_files(corpus), fresh.window, "en", "paragraph", "text")
    path = scaled._store_path(key, tmp_path)
    path.mkdir(parents=True)
    with cli_warnings():
        again = scaled.corpus_counts(corpus, words, directory=tmp_path)
    assert counted == [1]
    assert_one_warning(stderr_lines(capsys), path, "corpus counts")
    assert_same_counts(again, fresh)


# ---------------------------------------------------------------------------- sentence surprisal

SENTENCES = ["The fire spread quickly towards the town.",
             "Police said the man was arrested on Sunday.",
             "It rained."]


class Scored:
    """SmolLM2 (name, revision, tokenizer), its ``token_logprobs`` calls counted and their
    results remembered per text list: a recomputation is a counted call of the real values."""

    def __init__(self, model: Any, memo: dict[tuple[str, ...], list[np.ndarray]]) -> None:
        self.model, self.memo, self.calls = model, memo, 0
        self.name, self.revision = model.name, model.revision
        self.capabilities, self.dim = model.capabilities, model.dim

    def tokenize(self, text: str) -> Tokenization:
        return self.model.tokenize(text)

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.calls += 1
        if tuple(texts) not in self.memo:
            self.memo[tuple(texts)] = [np.array(a) for a in self.model.token_logprobs(texts)]
        return [a.copy() for a in self.memo[tuple(texts)]]


@pytest.fixture(scope="module")
def memo() -> dict[tuple[str, ...], list[np.ndarray]]:
    return {}


@pytest.fixture
def lm(smollm2: Any, memo: dict[tuple[str, ...], list[np.ndarray]]) -> Scored:
    pytest.importorskip("torch")
    return Scored(smollm2, memo)


def assert_same_surprisal(a: Any, b: Any) -> None:
    assert a.texts == b.texts and (a.model, a.revision) == (b.model, b.revision)
    assert len(a.tokens) == len(b.tokens)
    for x, y in zip(a.tokens, b.tokens, strict=True):
        np.testing.assert_array_equal(x, y)


def _offsets_shifted(arrays: dict[str, np.ndarray]) -> None:
    """One token moved from the first sentence to the second (the same total)."""
    arrays["offsets"] = arrays["offsets"].copy()
    arrays["offsets"][1] -= 1


def _reversed(arrays: dict[str, np.ndarray]) -> None:
    arrays["values"] = arrays["values"][::-1].copy()


def _negative(arrays: dict[str, np.ndarray]) -> None:
    arrays["values"] = -arrays["values"]


SURPRISAL_DAMAGE: dict[str, Callable[[Path], None]] = {
    "offsets shifted": lambda p: rewrite(p, _offsets_shifted, checksum=False),
    "offsets shifted, checksum recomputed": lambda p: rewrite(p, _offsets_shifted,
                                                              checksum=True),
    "values reversed": lambda p: rewrite(p, _reversed, checksum=False),
    "values negative, checksum recomputed": lambda p: rewrite(p, _negative, checksum=True),
    "truncated to half": halve,
    "random bytes": random_bytes,
    "empty": lambda p: p.write_bytes(b""),
    "text": lambda p: p.write_text('{"values": [1, 2]}', encoding="utf-8"),
    "previous format, no checksum": lambda p: without_checksum(p, lambda a: None),
    "corpus store's file": lambda p: another_store(p, ["meta", "unigram", "data"]),
}


@pytest.mark.slow
def test_sound_surprisal_is_read_back_silently(
        lm: Scored, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference = surprisal(lm, SENTENCES)
    assert lm.calls == 1
    with cli_warnings():
        first = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
        assert lm.calls == 2 and stderr_lines(capsys) == []  # absent: computed silently
        again = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
    assert lm.calls == 2 and stderr_lines(capsys) == []  # read back, the model not asked
    assert_same_surprisal(first, reference)
    assert_same_surprisal(again, reference)
    (path,) = tmp_path.iterdir()
    assert set(members(path)) == {"key", "values", "offsets", CHECKSUM}


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(SURPRISAL_DAMAGE))
def test_damaged_surprisal_is_computed_again_with_one_warning(
        lm: Scored, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    reference = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
    (path,) = tmp_path.iterdir()
    SURPRISAL_DAMAGE[damage](path)
    with cli_warnings():
        again = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
    assert lm.calls == 2
    assert_one_warning(stderr_lines(capsys), path, "stored surprisal")
    assert_same_surprisal(again, reference)
    with cli_warnings():  # replaced: read back, silently
        assert_same_surprisal(
            surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path), reference)
    assert lm.calls == 2 and stderr_lines(capsys) == []


def test_forged_token_counts_are_caught_by_the_tokenizer(
        lm: Scored, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Offsets shifted and the checksum recomputed: only the tokenizer can tell, and it does."""
    reference = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
    (path,) = tmp_path.iterdir()
    rewrite(path, _offsets_shifted, checksum=True)
    with cli_warnings():
        again = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
    lines = stderr_lines(capsys)
    assert_one_warning(lines, path, "stored surprisal")
    assert "token counts differ from the model's tokenizer's" in lines[0]
    assert_same_surprisal(again, reference)


@pytest.mark.slow
def test_another_entrys_surprisal_is_computed_again(
        lm: Scored, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A sound file of other texts under these texts' name."""
    surprisal_module.stored_surprisal(lm, SENTENCES[:2], directory=tmp_path)
    (other,) = tmp_path.iterdir()
    reference = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
    (path,) = set(tmp_path.iterdir()) - {other}
    shutil.copyfile(other, path)
    with cli_warnings():
        again = surprisal_module.stored_surprisal(lm, SENTENCES, directory=tmp_path)
    assert lm.calls == 3
    lines = stderr_lines(capsys)
    assert_one_warning(lines, path, "stored surprisal")
    assert "stored for another model, revision or texts" in lines[0]
    assert_same_surprisal(again, reference)
