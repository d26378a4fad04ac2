"""Corpus specs at scale: files, folders and glob patterns; plain, gzip, bz2 and parquet text.

A **corpus spec** is any mix of

- files: ``*.gz`` read as gzip, ``*.bz2`` as bzip2, ``*.parquet`` as Parquet (one text per row of
  the text column, default ``"text"``), anything else as plain text;
- folders, searched recursively for ``*.txt``, ``*.txt.gz``, ``*.txt.bz2`` and ``*.parquet``;
- glob patterns (``corpus/**/*.txt.gz``; ``**`` crosses folders).

Files come in sorted order (a folder's, a pattern's), each once. Every file is **streamed**: read in
pieces of about a MiB cut where a document boundary lies (a blank line for ``split = "paragraph"``,
a newline for ``"line"``; never for ``"file"``), so that the documents of the pieces are exactly
those of the whole text (a cut falls inside a gap of whitespace holding two newlines, which the
paragraph split breaks at anyway). Bytes that are not UTF-8 are replaced and counted as
:func:`~normtest.data.information.texts.read_text_file` does; a byte-order mark at a file's start is
dropped.

A corpus is cut into **blocks** for counting in parallel (:func:`plan_blocks`): small files
grouped, large plain files cut into byte ranges at paragraph (or line) boundaries, Parquet files
into runs of row groups; a compressed file is one block (a gzip or bzip2 stream cannot be
entered midway).
"""

from __future__ import annotations

import bz2
import glob
import gzip
import itertools
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from normtest.data.information.texts import (
    DocumentSplit,
    decode_utf8,
    read_text_file,
    split_documents,
    text_files,
)
from normtest.errors import NormtestError

__all__ = [
    "CORPUS_PATTERNS",
    "MAX_REPLACED_SHARE",
    "CorpusBlock",
    "CorpusEncoding",
    "CorpusFile",
    "FilePart",
    "Piece",
    "corpus_encoding",
    "corpus_files",
    "iter_documents",
    "plan_blocks",
    "read_part",
]

#: What a corpus folder is searched for (recursively).
CORPUS_PATTERNS = ("*.txt", "*.txt.gz", "*.txt.bz2", "*.parquet")
#: Bytes read at a time from a file (the streaming piece size, before cutting).
READ_BYTES = 1 << 20
#: Bytes read at a time when looking for a cut between blocks of one file.
SCAN_BYTES = 1 << 16
#: Rows per Parquet record batch.
PARQUET_BATCH = 1024
#: How much larger than the file a compressed text is assumed to be (for block sizes only).
COMPRESSION_RATIO = 4
_GLOB_CHARS = frozenset("*?[")

CorpusSpec = str | PathLike[str] | Iterable[str | PathLike[str]]


@dataclass(frozen=True)
class CorpusFile:
    """One file of a corpus: where, how it is read, and its size and modification time."""

    path: Path
    kind: str  # "text", "gzip", "bz2" or "parquet"
    size: int
    mtime_ns: int

    def fingerprint(self) -> list[Any]:
        """What identifies this version of the file (absolute path, kind, size, mtime)."""
        return [str(self.path.resolve()), self.kind, self.size, self.mtime_ns]


@dataclass(frozen=True)
class FilePart:
    """A run of one file: bytes [start, stop) of a plain text, row groups [start, stop) of a
    Parquet file, or the whole of a compressed one (``stop`` None: to the end)."""

    path: str
    kind: str
    start: int = 0
    stop: int | None = None
    text_column: str = "text"


class Piece(NamedTuple):
    """Text of whole documents read from a file, its replaced (not UTF-8) bytes and the bytes
    it was decoded from."""

    text: str
    n_replaced: int
    n_bytes: int


@dataclass(frozen=True)
class CorpusBlock:
    """What one worker counts: consecutive parts of the corpus, in corpus order."""

    index: int
    parts: tuple[FilePart, ...]
    n_bytes: int  # plain-text bytes (estimated for compressed files and Parquet)


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    return {".gz": "gzip", ".bz2": "bz2", ".parquet": "parquet"}.get(suffix, "text")


def _folder_files(folder: Path) -> list[Path]:
    inside = sorted({f for pattern in CORPUS_PATTERNS for f in folder.rglob(pattern)
                     if f.is_file()})
    if not inside:
        raise NormtestError(
            f"folder {folder} holds no corpus files ({', '.join(CORPUS_PATTERNS)}); add some, or "
            "name the files or a glob pattern"
        )
    return inside


def corpus_files(spec: CorpusSpec) -> list[CorpusFile]:
    """The files of a corpus spec (module doc), each once, with size and modification time."""
    items = [spec] if isinstance(spec, str | PathLike) else list(spec)
    if not items:
        raise NormtestError("no corpus files were given; pass text files, folders or patterns")
    found: list[Path] = []
    for item in items:
        text = os.fspath(item)
        p = Path(text)
        if p.is_dir():
            found.extend(_folder_files(p))
        elif p.exists():
            found.append(p)
        elif _GLOB_CHARS & set(text):
            matches = sorted(Path(m) for m in glob.glob(text, recursive=True))
            if not matches:
                raise NormtestError(
                    f"the pattern {text!r} matches no file; check it (quote it, so that the "
                    "shell passes it on unexpanded)"
                )
            for m in matches:
                found.extend(_folder_files(m) if m.is_dir() else [m])
        else:
            raise NormtestError(f"corpus file {p} does not exist; check the path")
    out: list[CorpusFile] = []
    seen: set[Path] = set()
    for p in found:
        key = p.resolve()
        if key in seen:
            continue
        seen.add(key)
        try:
            st = p.stat()
        except OSError as exc:
            raise NormtestError(f"cannot read {p}: {exc.strerror or exc}; check that the file "
                                "exists and is readable") from None
        if not stat.S_ISREG(st.st_mode):
            raise NormtestError(
                f"{p} is not a regular file (a pipe, socket or device); copy the text into a file"
            )
        out.append(CorpusFile(p, _kind(p), st.st_size, st.st_mtime_ns))
    return out


# ---------------------------------------------------------------------------- reading a part


def _cut(buffer: bytes | bytearray, split: DocumentSplit, last: bool, start: int = 0) -> int:
    """A safe cut in ``buffer`` (bytes before it form whole documents): after the first newline
    of the last (``last``) or first blank line — ``\\n\\n`` or ``\\n\\r\\n`` — for paragraphs,
    after a newline for lines; −1 when there is none (and always for ``"file"``). Only blank
    lines that begin at ``start`` or later are looked at."""
    if split == "file":
        return -1
    find = buffer.rfind if last else buffer.find
    if split == "line":
        i = find(b"\n", start)
        return -1 if i < 0 else i + 1
    hits = [i for i in (find(b"\n\n", start), find(b"\n\r\n", start)) if i >= 0]
    if not hits:
        return -1
    return (max(hits) if last else min(hits)) + 1


def _open(part: FilePart) -> BinaryIO | gzip.GzipFile | bz2.BZ2File:
    path = Path(part.path)
    try:
        if part.kind == "gzip":
            return gzip.open(path, "rb")
        if part.kind == "bz2":
            return bz2.open(path, "rb")
        return open(path, "rb")  # closed by the caller
    except OSError as exc:
        raise NormtestError(f"cannot read {path}: {exc.strerror or exc}; check that the file "
                            "exists and is readable") from None


def _piece(raw: bytes, first: bool) -> Piece:
    text, n_bad = decode_utf8(raw)
    return Piece(text.removeprefix("\ufeff") if first else text, n_bad, len(raw))


def _stream_pieces(part: FilePart, split: DocumentSplit) -> Iterator[Piece]:
    path = Path(part.path)
    remaining = None if part.stop is None else part.stop - part.start
    buffer = bytearray()
    first = part.start == 0
    with _open(part) as stream:
        try:
            if part.start:
                stream.seek(part.start)
            while remaining is None or remaining > 0:
                size = READ_BYTES if remaining is None else min(READ_BYTES, remaining)
                chunk = stream.read(size)
                if not chunk:
                    break
                if remaining is not None:
                    remaining -= len(chunk)
                buffer += chunk  # the bytes before the chunk hold no cut: look from there on
                cut = _cut(buffer, split, last=True, start=max(0, len(buffer) - len(chunk) - 2))
                if cut > 0:
                    piece = _piece(bytes(buffer[:cut]), first)
                    del buffer[:cut]
                    yield piece
                    first = False
        except (OSError, EOFError, zlib.error) as exc:
            what = {"gzip": "gzip", "bz2": "bzip2"}.get(part.kind, "text")
            raise NormtestError(
                f"cannot read {path} as {what}: {exc}; check that the file is complete and "
                f"really {what} (re-create it, or decompress it and pass the text)"
            ) from None
    if buffer:
        yield _piece(bytes(buffer), first)


def _parquet_file(path: Path, text_column: str) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise NormtestError(
            f"reading {path} needs pyarrow: pip install pyarrow (it comes with "
            "'normtest[models]' and 'normtest[ray]')"
        ) from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own ArrowInvalid / OSError
        raise NormtestError(f"cannot read {path} as Parquet: {exc}; check that the file is a "
                            "complete Parquet file") from None
    names = list(pf.schema_arrow.names)
    if text_column not in names:
        raise NormtestError(
            f"the Parquet file {path} has no column {text_column!r}; its columns are "
            f"{', '.join(map(repr, names)) or 'none'}. Name the text column (text_column=...)"
        )
    import pyarrow as pa

    kind = pf.schema_arrow.field(text_column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
        raise NormtestError(f"column {text_column!r} of {path} holds {kind}, not text; name the "
                            "column that holds the texts")
    return pf


def _parquet_pieces(part: FilePart) -> Iterator[Piece]:
    path = Path(part.path)
    pf = _parquet_file(path, part.text_column)
    stop = pf.num_row_groups if part.stop is None else part.stop
    groups = list(range(part.start, stop))
    if not groups:
        return
    import pyarrow.compute as pc

    for batch in pf.iter_batches(batch_size=PARQUET_BATCH, row_groups=groups,
                                 columns=[part.text_column]):
        column = batch.column(0)
        sizes = pc.binary_length(column).to_pylist()
        for value, size in zip(column.to_pylist(), sizes, strict=True):
            if value is None:
                continue
            if isinstance(value, bytes):
                yield _piece(value, True)
            else:
                yield Piece(value, 0, size)


def read_part(part: FilePart, split: DocumentSplit) -> Iterator[Piece]:
    """The text of a part in pieces of whole documents (a Parquet part: one piece per row)."""
    if split not in ("file", "line", "paragraph"):
        raise NormtestError(f"unknown document split {split!r}; use 'file', 'line' or 'paragraph'")
    if part.kind == "parquet":
        return _parquet_pieces(part)
    return _stream_pieces(part, split)


def iter_documents(spec: CorpusSpec, split: DocumentSplit = "paragraph",
                   text_column: str = "text") -> Iterator[tuple[CorpusFile, int, str]]:
    """Every document of a corpus spec, streamed: (file, index within the file, text)."""
    for f in corpus_files(spec):
        i = 0
        for piece in read_part(FilePart(str(f.path), f.kind, text_column=text_column), split):
            for doc in split_documents(piece.text, split):
                yield f, i, doc
                i += 1


# ---------------------------------------------------------------------------- blocks


def _text_cuts(f: CorpusFile, split: DocumentSplit, block_bytes: int) -> list[int]:
    """Byte offsets that cut a plain file into runs of about ``block_bytes`` at safe cuts."""
    cuts = [0]
    if split == "file":
        return cuts
    with open(f.path, "rb") as stream:
        nominal = block_bytes
        while nominal < f.size:
            stream.seek(nominal)
            offset, tail, cut = nominal, b"", -1  # tail: the last bytes of the previous chunk
            while cut < 0:
                chunk = stream.read(SCAN_BYTES)
                if not chunk:
                    break
                cut = _cut(tail + chunk, split, last=False)
                if cut < 0:
                    offset += len(chunk)
                    tail = (tail + chunk)[-2:]
            if cut < 0:
                break  # no boundary after this point: the rest is one run
            at = offset - len(tail) + cut
            cuts.append(at)
            nominal = at + block_bytes
    return cuts


def _parts_of(f: CorpusFile, split: DocumentSplit, block_bytes: int,
              text_column: str) -> list[tuple[FilePart, int]]:
    path = str(f.path)
    if f.kind in ("gzip", "bz2"):
        return [(FilePart(path, f.kind), f.size * COMPRESSION_RATIO)]
    if f.kind == "parquet":
        pf = _parquet_file(f.path, text_column)
        meta = pf.metadata
        column = pf.schema_arrow.names.index(text_column)
        out: list[tuple[FilePart, int]] = []
        start, size = 0, 0
        for g in range(meta.num_row_groups):
            size += meta.row_group(g).column(column).total_uncompressed_size
            if size >= block_bytes or g == meta.num_row_groups - 1:
                out.append((FilePart(path, "parquet", start, g + 1, text_column), size))
                start, size = g + 1, 0
        return out
    cuts = [*_text_cuts(f, split, block_bytes), f.size]
    return [(FilePart(path, "text", a, b), b - a) for a, b in itertools.pairwise(cuts) if b > a]


def plan_blocks(files: list[CorpusFile], split: DocumentSplit, block_bytes: int,
                text_column: str = "text") -> list[CorpusBlock]:
    """The corpus cut into blocks of about ``block_bytes`` of text, in corpus order (module
    doc); parts of one block follow each other in the corpus."""
    if block_bytes < 1:
        raise NormtestError(f"block_bytes must be positive, got {block_bytes}")
    blocks: list[CorpusBlock] = []
    parts: list[FilePart] = []
    size = 0
    for f in files:
        for part, n in _parts_of(f, split, block_bytes, text_column):
            if parts and size + n > block_bytes:
                blocks.append(CorpusBlock(len(blocks), tuple(parts), size))
                parts, size = [], 0
            parts.append(part)
            size += n
    if parts:
        blocks.append(CorpusBlock(len(blocks), tuple(parts), size))
    return blocks


# -- how much of a corpus is not UTF-8 -------------------------------------------------------------
#: Largest share of a user corpus's bytes that may be replaced (not UTF-8) before it is refused:
#: one byte in a thousand is a stray character; more means the files are in another encoding.
MAX_REPLACED_SHARE = 0.001


@dataclass(frozen=True)
class CorpusEncoding:
    """How much of a corpus was not UTF-8: bytes replaced by U+FFFD out of all bytes read."""

    n_replaced_bytes: int
    n_bytes: int
    worst_file: str | None

    @property
    def share(self) -> float:
        """Replaced bytes as a share of all bytes (0 for an empty corpus)."""
        return self.n_replaced_bytes / self.n_bytes if self.n_bytes else 0.0


def _file_encodings(paths: str | PathLike[str] | Iterable[str | PathLike[str]],
                    pattern: str, text_column: str) -> Iterable[tuple[str, int, int]]:
    """(file, replaced bytes, bytes) of each file: with the default pattern, of a corpus spec
    (files, folders, globs; plain, gzip, bz2, Parquet), streamed; else of ``text_files``."""
    if pattern != "*.txt":
        for f in text_files(paths, pattern):
            yield str(f), read_text_file(f).n_replaced_bytes, f.stat().st_size
        return
    for cf in corpus_files(paths):
        replaced = total = 0
        for piece in read_part(FilePart(str(cf.path), cf.kind, text_column=text_column), "line"):
            replaced += piece.n_replaced
            total += piece.n_bytes
        yield str(cf.path), replaced, total


def corpus_encoding(paths: str | PathLike[str] | Iterable[str | PathLike[str]],
                    pattern: str = "*.txt", text_column: str = "text") -> CorpusEncoding:
    """Count the bytes of a corpus that are not UTF-8; refuse one that is mostly in another
    encoding (more than :data:`MAX_REPLACED_SHARE` of its bytes), saying how to convert it.

    ``paths`` is a corpus spec (:func:`corpus_files`: files,
    folders, glob patterns; compressed files count their decompressed bytes) unless another
    folder ``pattern`` than ``*.txt`` is given, which reads plain files as :func:`text_files`
    finds them."""
    replaced = total = 0
    worst: tuple[int, str] | None = None
    for name, n_bad, n_bytes in _file_encodings(paths, pattern, text_column):
        replaced += n_bad
        total += n_bytes
        if n_bad and (worst is None or n_bad > worst[0]):
            worst = (n_bad, name)
    found = CorpusEncoding(replaced, total, None if worst is None else worst[1])
    if found.share > MAX_REPLACED_SHARE:
        raise NormtestError(
            f"the corpus is not UTF-8 text: {replaced:,} of its {total:,} bytes "
            f"({found.share:.2%}, most in {found.worst_file}) are not valid UTF-8. Convert the "
            "files first, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8.txt (use the "
            "encoding they were written in)"
        )
    return found
