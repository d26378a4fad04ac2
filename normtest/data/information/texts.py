"""Reading text: user files and folders, the two corpora bundled with gensim's test data, and
the Python language reference that ships with Python.

Every file is read as bytes and decoded as UTF-8; bytes that are not valid UTF-8 are replaced by
U+FFFD and *counted* (never a crash, never silently). The bundled corpora are the Lee news corpus
(``lee_background.cor``: 300 news documents, one per line) and a shortened English Wikipedia dump
(106 articles) read with gensim's Wikipedia page reader; both are found with
``gensim.test.utils.datapath`` and need no network. A third source of another kind, technical
prose, is the reference manual's topics that every Python carries for ``help()``
(``pydoc_data.topics``), its code and grammar blocks left out (:func:`python_reference`).

Importing this module imports the standard library only; gensim loads on use.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Literal

from normtest.base.paths import atomic_write, default_cache_dir
from normtest.errors import NormtestError

__all__ = [
    "LEE_FILE",
    "WIKI_FILE",
    "DocumentSplit",
    "SourceText",
    "TextFile",
    "bundled_corpus_path",
    "decode_utf8",
    "lee_texts",
    "package_version",
    "python_reference",
    "read_text_file",
    "split_documents",
    "text_files",
    "wiki_articles",
]

#: The Lee news corpus inside gensim's test data: 300 documents, one per line.
LEE_FILE = "lee_background.cor"
#: The shortened English Wikipedia dump inside gensim's test data (106 articles).
WIKI_FILE = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"

#: How a text file is cut into documents: the whole file, each line, or blank-line paragraphs.
DocumentSplit = Literal["file", "line", "paragraph"]

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # what errors="surrogateescape" makes of a bad byte
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_WIKI_EMPHASIS = re.compile(r"'{2,}")  # ''italic'' and '''bold''' markup left by filter_wiki
_WIKI_HEADING = re.compile(r"^\s*=+\s*(.*?)\s*=+\s*$", re.MULTILINE)  # == Heading ==
_WIKI_MIN_WORDS = 50  # gensim's ARTICLE_MIN_WORDS: shorter pages are redirects and stubs


@dataclass(frozen=True)
class TextFile:
    """A decoded text file and how many of its bytes were not UTF-8 (replaced by U+FFFD)."""

    path: Path
    text: str
    n_replaced_bytes: int


@dataclass(frozen=True)
class SourceText:
    """One document of a bundled corpus: a stable id, an optional title, and its text."""

    doc_id: str
    title: str
    text: str


def package_version(name: str) -> str:
    """The installed version of a distribution, or ``"not installed"``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def read_text_file(path: str | PathLike[str]) -> TextFile:
    """Read one file as UTF-8, replacing and counting bytes that are not UTF-8."""
    p = Path(path)
    folder = NormtestError(
        f"{p} is a folder, not a file; pass it as a corpus folder (text_files/from_files "
        "collect the files inside it)"
    )
    try:
        mode = p.stat().st_mode
        if stat.S_ISDIR(mode):
            raise folder
        if not stat.S_ISREG(mode):  # a pipe, socket or device may never end
            raise NormtestError(
                f"{p} is not a regular file (a pipe, socket or device); copy the text into a file"
            )
        raw = p.read_bytes()
    except IsADirectoryError:
        raise folder from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise NormtestError(
            f"cannot read {p}: {reason}; check that the file exists and is readable"
        ) from None
    except ValueError as exc:  # a path with a NUL byte in it
        if isinstance(exc, NormtestError):
            raise
        raise NormtestError(f"cannot read {p!r}: {exc}; check the file name") from None
    text, n_bad = decode_utf8(raw)
    return TextFile(path=p, text=text.removeprefix("\ufeff"), n_replaced_bytes=n_bad)


def decode_utf8(raw: bytes) -> tuple[str, int]:
    """``raw`` decoded as UTF-8 with every byte that is not UTF-8 replaced by U+FFFD, and how
    many were replaced (a leading byte-order mark is kept: the caller drops it at a file's
    start)."""
    text = raw.decode("utf-8", errors="surrogateescape")
    n_bad = len(_ESCAPED_BYTE.findall(text))
    if n_bad:
        text = _ESCAPED_BYTE.sub("\ufffd", text)
    return text, n_bad


def text_files(
    paths: str | PathLike[str] | Iterable[str | PathLike[str]], pattern: str = "*.txt"
) -> list[Path]:
    """The files named by ``paths``: files as given, folders searched for ``pattern``."""
    items = [paths] if isinstance(paths, str | PathLike) else list(paths)
    if not items:
        raise NormtestError("no corpus files were given; pass text files or folders")
    found: list[Path] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            inside = sorted(f for f in p.rglob(pattern) if f.is_file())
            if not inside:
                raise NormtestError(
                    f"folder {p} holds no files matching {pattern!r}; add text files or pass "
                    "another pattern"
                )
            found.extend(inside)
        else:
            found.append(p)  # a missing or unreadable file is reported when it is read
    return found


def split_documents(text: str, split: DocumentSplit) -> list[str]:
    """Cut a file's text into documents (empty documents are dropped)."""
    if split == "file":
        parts = [text]
    elif split == "line":
        parts = text.splitlines()
    elif split == "paragraph":
        parts = _PARAGRAPH_BREAK.split(text)
    else:
        raise NormtestError(f"unknown document split {split!r}; use 'file', 'line' or 'paragraph'")
    return [p.strip() for p in parts if p.strip()]


def bundled_corpus_path(name: str) -> Path:
    """Path of a file in gensim's bundled test data (``LEE_FILE``, ``WIKI_FILE``, ...)."""
    try:
        from gensim.test.utils import datapath
    except ImportError:
        raise NormtestError(
            "the bundled corpora come with gensim; install it (pip install gensim) or pass your "
            "own text files"
        ) from None
    p = Path(datapath(name))
    if not p.is_file():
        raise NormtestError(f"gensim's test data lack {name} (looked at {p}); reinstall gensim")
    return p


@functools.lru_cache(maxsize=1)
def lee_texts() -> tuple[SourceText, ...]:
    """The 300 documents of the Lee news corpus, in file order (ids ``lee:0`` ...)."""
    tf = read_text_file(bundled_corpus_path(LEE_FILE))
    docs = split_documents(tf.text, "line")
    return tuple(SourceText(f"lee:{i}", "", d) for i, d in enumerate(docs))


_REST_UNDERLINE = re.compile(r"^[*=~^-]+$")


@functools.lru_cache(maxsize=1)
def python_reference() -> tuple[SourceText, ...]:
    """The topics of the Python language reference that Python itself ships for ``help()``
    (``pydoc_data.topics``; ids ``pydoc:<topic>``): prose only — a paragraph with an indented
    line (code, grammar, examples), a heading's underline, a grammar rule (``::=``) or an
    interactive prompt is left out, and emphasis asterisks are removed."""
    from pydoc_data.topics import topics

    out = []
    for name in sorted(topics):
        kept = []
        for paragraph in _PARAGRAPH_BREAK.split(topics[name]):
            lines = [line for line in paragraph.splitlines() if line.strip()]
            if not lines or any(line[:1].isspace() or _REST_UNDERLINE.match(line.strip())
                                for line in lines) or "::=" in paragraph or ">>>" in paragraph:
                continue
            text = " ".join(" ".join(lines).split()).replace("*", "")
            if len(text.split()) >= 3:
                kept.append(text)
        if kept:
            out.append(SourceText(f"pydoc:{name}", name, "\n".join(kept)))
    return tuple(out)


def _clean_wiki_text(text: str) -> str:
    """Drop the emphasis quotes filter_wiki leaves and turn ``== Heading ==`` lines into text."""
    text = _WIKI_HEADING.sub(lambda m: m.group(1) + ".", text)
    text = _WIKI_EMPHASIS.sub("", text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


#: The parsed Wikipedia sample's stored form; part of its key (another form is parsed again).
_WIKI_STORE_FORMAT = 1


@functools.lru_cache(maxsize=1)
def wiki_articles() -> tuple[SourceText, ...]:
    """The articles of the bundled Wikipedia sample, markup removed (ids ``wiki:<page id>``).

    Read with :class:`gensim.corpora.WikiCorpus` (its ``filter_wiki`` strips the markup; its
    namespace filter drops non-articles) using a tokenizer that keeps each article's text whole,
    so that the words are tokenised exactly like every other corpus here. Pages under 50
    whitespace-separated words (redirects, stubs: gensim's own ``ARTICLE_MIN_WORDS``) are dropped.
    Parsing takes about two seconds, so the articles are kept: once per process, and as JSON
    under ``<cache root>/texts/``, keyed by the dump file (path, size, mtime) and gensim's
    version, for every later process.
    """
    import hashlib
    import json


    source = bundled_corpus_path(WIKI_FILE)
    info = source.stat()
    key = [_WIKI_STORE_FORMAT, str(source.resolve()), info.st_size, info.st_mtime_ns,
           package_version("gensim")]
    name = hashlib.sha256(json.dumps(key).encode("utf-8")).hexdigest()[:32]
    stored = default_cache_dir() / "texts" / f"wiki-{name}.json"
    try:
        found = json.loads(stored.read_text(encoding="utf-8"))
        if found["key"] == key:
            return tuple(SourceText(str(i), str(t), str(x)) for i, t, x in found["articles"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not stored yet, or unreadable: parsed again and replaced
    articles = _parse_wiki(source)
    text = json.dumps({"key": key, "articles": [[a.doc_id, a.title, a.text] for a in articles]})
    try:
        atomic_write(stored, lambda out: out.write(text.encode("utf-8")))
    except OSError:
        pass  # a read-only cache folder: parsed in every process
    return articles


def _parse_wiki(source: Path) -> tuple[SourceText, ...]:
    """The articles of a Wikipedia dump, parsed with gensim's own page reader and markup filter
    (see :func:`wiki_articles`), in this process.

    This is what ``WikiCorpus(..., processes=1).get_texts()`` yields, without its process pool:
    ``get_texts`` opens a ``multiprocessing.Pool`` (and a feeder process) even for one process,
    which fails inside a forked worker of an audit (a daemonic process may not have children),
    and it swallows a Ctrl-C, returning the articles read so far as if they were all."""
    import bz2

    from gensim.corpora.wikicorpus import IGNORED_NAMESPACES, extract_pages, filter_wiki

    out: list[SourceText] = []
    with bz2.BZ2File(source) as dump:
        for title, raw, pageid in extract_pages(dump, filter_namespaces=("0",)):
            if any(title.startswith(ignored + ":") for ignored in IGNORED_NAMESPACES):
                continue
            text = _clean_wiki_text(filter_wiki(raw))
            if len(text.split()) >= _WIKI_MIN_WORDS:
                out.append(SourceText(f"wiki:{pageid}", str(title), text))
    return tuple(out)
