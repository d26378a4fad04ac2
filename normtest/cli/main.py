"""The ``normtest`` command line.

Exit codes: 0 the command ran (whatever the verdicts), 1 a gate failed (``normtest gate``,
``normtest audit --gate``), 2 a usage or input error (the message says what to fix), 3 an
internal error, 130 interrupted (Ctrl-C; the embedding cache keeps what was computed). SIGTERM
(``kill``, ``timeout``, a job scheduler) is handled as Ctrl-C is — every clean-up runs (an
install removes its partial folders, forked workers end with the process) — and then ends the
process quietly by SIGTERM (status −15, 143 in a shell), as its sender expects.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

from normtest.cli import audit, catalogue, compare, demo, gate, models, plan, report
from normtest.cli.common import (
    EXIT_GATE_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
)
from normtest.cli.streams import OutputFailed, guard_standard_streams
from normtest.errors import NormtestError

__all__ = ["EXIT_GATE_FAILED", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED",
           "EXIT_USAGE", "Terminated", "main", "run"]


#: The subcommand modules, in the order ``normtest --help`` lists them: each registers its
#: parser (``register(sub)``) and the handler its arguments run (``args.handler``).
SUBCOMMANDS = (demo, catalogue, audit, compare, plan, gate, report, models)


def _parser() -> argparse.ArgumentParser:
    from normtest.base.version import VERSION as __version__

    parser = argparse.ArgumentParser(
        prog="normtest",
        description="Hypothesis tests for the squared-norm / information-content correspondence.",
    )
    parser.add_argument("--version", action="version", version=f"normtest {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def _silence_stdout() -> None:
    """Point standard output at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (captured output): nothing to do
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    previous, previous_hook = warnings.showwarning, sys.unraisablehook
    warnings.showwarning = _one_line_warning
    sys.unraisablehook = _keep_interrupts
    try:
        from normtest.base.parallel import workers_from_environment

        workers_from_environment()  # a bad $NORMTEST_WORKERS is refused before any work
        code = args.handler(args)
        sys.stdout.flush()  # a closed pipe is reported here, inside the handlers below
        return code
    except NormtestError as exc:
        if isinstance(exc, OutputFailed):
            _silence_stdout()  # what is still buffered would fail again as Python exits
        with contextlib.suppress(OSError, OutputFailed):  # standard error may be what failed
            print(f"normtest: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        if _ENDING_ON_INTERRUPT:
            _ignore_further_interrupts()
        if _terminating(exc):  # its sender wants it gone, not told
            return EXIT_TERMINATED
        # a subcommand may say what an interruption leaves (`normtest models install`)
        print("\nnormtest: interrupted; " + getattr(
            args, "interrupted", "every finished batch of vectors is in the embedding cache, "
            "and running the same command again resumes from it"), file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # the reader of standard output went away (`| head`): nothing left to say to it
        _silence_stdout()
        return EXIT_OK
    except Exception:
        traceback.print_exc()
        print("normtest: internal error; please report it with the trace above", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        warnings.showwarning, sys.unraisablehook = previous, previous_hook
        for pending in _REDELIVERIES:
            pending.cancel()
        _REDELIVERIES.clear()


#: What :func:`main` returns after a SIGTERM; :func:`run` then ends the process by SIGTERM.
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like a Ctrl-C, so that the same clean-up runs."""


#: Set once SIGTERM was received: the process ends by SIGTERM, whatever exception carries it to
#: :func:`main` (a SIGTERM that landed in a finaliser comes back as a plain interruption).
_TERMINATING = False
#: A :class:`Terminated` swallowed by a finaliser and not yet raised again.
_TERMINATION_SWALLOWED = False


def _on_sigterm(signum: int, frame: Any) -> None:
    """Raise :class:`Terminated` once; a second SIGTERM during the clean-up changes nothing,
    except that the one a finaliser swallowed (:func:`_keep_interrupts`) is raised again."""
    global _TERMINATING, _TERMINATION_SWALLOWED
    if _TERMINATING and not _TERMINATION_SWALLOWED:
        return
    _TERMINATING, _TERMINATION_SWALLOWED = True, False
    raise Terminated


def _terminating(exc: KeyboardInterrupt) -> bool:
    """Whether this interruption is a SIGTERM's (its own, or one delivered again)."""
    return isinstance(exc, Terminated) or _TERMINATING


#: Ctrl-Cs scheduled for delivery again (cancelled when the command ends, so that none fires
#: after the interruption was handled).
_REDELIVERIES: list[Any] = []


def _keep_interrupts(unraisable: Any) -> None:
    """A Ctrl-C that lands inside a finaliser (``__del__``, run by the garbage collector) cannot
    propagate there: Python prints "Exception ignored" with a traceback and carries on, and the
    audit would run to its end. Deliver it again a moment later from another thread, so that the
    main thread raises it once it is out of the finaliser (should it land in one again, this
    repeats)."""
    if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
        import functools
        import threading

        global _TERMINATION_SWALLOWED
        signum = signal.SIGINT
        if issubclass(unraisable.exc_type, Terminated):  # a SIGTERM's: delivered as SIGTERM
            _TERMINATION_SWALLOWED, signum = True, signal.SIGTERM
        # a real signal to the main thread, which also wakes it from a blocking call
        main_thread = threading.main_thread().ident
        assert main_thread is not None  # the main thread is running: it ran the finaliser
        again = threading.Timer(0.01, functools.partial(signal.pthread_kill, main_thread, signum))
        again.daemon = True
        _REDELIVERIES.append(again)
        again.start()
        return
    sys.__unraisablehook__(unraisable)


def _one_line_warning(message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, file: Any = None, line: str | None = None) -> None:
    """normtest's own warnings as one line on the terminal (no file name, no source line)."""
    print(f"normtest: warning: {message}", file=file or sys.stderr)


#: Set by :func:`run` (the process's entry point): once a Ctrl-C is handled, the process ends,
#: so further ones are ignored (never in a process that calls :func:`main` and goes on, pytest's).
_ENDING_ON_INTERRUPT = False


def _ignore_further_interrupts() -> None:
    """A Ctrl-C after the one being handled (a second press, or one delivered again from a
    finaliser, :func:`_keep_interrupts`, whose timer fired just as the command ended) changes
    nothing: without this it could raise KeyboardInterrupt after the exit code was chosen, and
    Python, finding it unhandled, ends the process by SIGINT (status −2) instead of 130."""
    signal.signal(signal.SIGINT, lambda signum, frame: None)


def run() -> None:
    """The console script: :func:`main`'s exit code; 130 quietly (no traceback) when it was
    stopped by Ctrl-C, however many were sent."""
    global _ENDING_ON_INTERRUPT
    _ENDING_ON_INTERRUPT = True
    try:
        guard_standard_streams()
    except NormtestError as exc:
        print(f"normtest: error: {exc}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        code = main()
    except KeyboardInterrupt as exc:  # a second one while the first was being handled
        _ignore_further_interrupts()
        code = EXIT_TERMINATED if _terminating(exc) else EXIT_INTERRUPTED
    if threading.current_thread() is threading.main_thread():
        # a SIGTERM re-delivered late (its timer past cancelling) changes nothing now, and one
        # that a finaliser swallowed just as the command finished still ends it by SIGTERM
        signal.signal(signal.SIGTERM, lambda signum, frame: None)
    if _TERMINATING:
        code = EXIT_TERMINATED
    if code == EXIT_TERMINATED:  # cleaned up: now end as the signal's sender expects
        with contextlib.suppress(OSError, ValueError, OutputFailed):
            sys.stdout.flush()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit(code)


if __name__ == "__main__":
    run()
