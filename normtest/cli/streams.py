"""Standard output and error that fail cleanly: what the command line does when the place its
text goes cannot take it.

- **A full disk or an I/O error** (``> /dev/full``): :class:`OutputFailed`, a
  :class:`~normtest.errors.NormtestError`, so the command ends with exit 2 and one line on
  standard error. The reports are written before anything is printed, so they are kept.
- **A closed pipe** (``| head``): exit 0, as Unix tools do (handled by :func:`normtest.cli.main`).
- **A closed standard output** (``>&-``): refused with exit 2 before any work.
- **An encoding that lacks a character** (``PYTHONIOENCODING=ascii``, a C locale): the
  typographic characters normtest prints (``ρ``, ``α``, ``≥``, ``—``, ``·``, …) are written in
  ASCII (``rho``, ``alpha``, ``>=``, ``-``, ``.``) and any other as ``?``; never a crash.
"""

from __future__ import annotations

import codecs
import os
import sys
from typing import Any

from normtest.errors import NormtestError

__all__ = ["ASCII_FALLBACK", "OutputFailed", "guard_standard_streams"]

#: The name of the codec error handler that writes normtest's typography in ASCII.
ASCII_FALLBACK = "normtest-ascii"

#: What the characters normtest prints become where the output's encoding lacks them.
_ASCII = {"ρ": "rho", "α": "alpha", "β": "beta", "μ": "mu", "σ": "sigma", "Δ": "delta",
          "≥": ">=", "≤": "<=", "≈": "~", "≠": "!=", "±": "+/-", "×": "x", "−": "-",
          "—": "-", "–": "-", "·": ".", "…": "...", "→": "->", "←": "<-", "‖": "||",
          "²": "^2", "√": "sqrt", "†": "+", "✓": "ok", "✗": "x", "“": '"', "”": '"',
          "‘": "'", "’": "'", "█": "#", "▏": "|", "│": "|", "─": "-", "━": "-",
          "⟨": "<", "⟩": ">", "\u00a0": " ", "\u2009": " ", "\u202f": " "}


def _ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = "".join(_ASCII.get(c, "?") for c in error.object[error.start:error.end])
    return text, error.end


codecs.register_error(ASCII_FALLBACK, _ascii_fallback)


class OutputFailed(NormtestError):
    """Standard output (or error) could not be written: a full disk, an I/O error."""


class _Guarded:
    """A text stream whose write errors (other than a closed pipe) become
    :class:`OutputFailed`; everything else is the stream's own."""

    def __init__(self, stream: Any, name: str) -> None:
        self._stream = stream
        self._name = name

    def _failed(self, exc: OSError) -> OutputFailed:
        return OutputFailed(f"cannot write to standard {self._name} ({exc.strerror or exc}); "
                            "what the command wrote to files is kept")

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise self._failed(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _never_fails_to_encode(stream: Any) -> None:
    """Write what the stream's encoding lacks in ASCII (:data:`ASCII_FALLBACK`)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors=ASCII_FALLBACK)
        except (ValueError, OSError):  # pragma: no cover - a stream that cannot be reconfigured
            pass


def guard_standard_streams() -> None:
    """Set up the process's standard streams for the command line (:func:`normtest.cli.run`):
    a closed standard output is refused (:class:`NormtestError`); a closed standard error is
    pointed at the null device (diagnostics are lost, never the command); both write what their
    encoding lacks in ASCII and turn a write error into :class:`OutputFailed`."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if sys.stdout is None:
        raise NormtestError("standard output is closed; give it somewhere to go (> FILE, or "
                            "> /dev/null to discard what normtest prints)")
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, _Guarded):
            continue
        _never_fails_to_encode(stream)
        setattr(sys, name, _Guarded(stream, "output" if name == "stdout" else "error"))
