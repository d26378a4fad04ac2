"""When two registrations of one claim id are one measurement: the same function, or the same
definition made twice (a claim file imported again, under another module name, by ``importlib``
or by pytest's assertion rewriting). The catalogue refuses a claim id that names two."""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any


def source_file(function: Callable[..., Any]) -> str | None:
    code = getattr(function, "__code__", None)
    return None if code is None else str(Path(code.co_filename).resolve())


def same_measure(first: Any, second: Any) -> bool:
    """Whether two measurements are one: the same object, or the same definition made twice —
    a file imported again (under another module name, by ``importlib`` or by pytest, which may
    rewrite its ``assert`` statements) gives a new function object with the same source file,
    qualified name, first line and code, and equal closure and default values.

    Anything else is another measurement: a function of another file (whose module-level names
    may differ even where the code is the same), another definition in the same file, or the
    same factory closed over other values. Callables that are not functions (a
    ``functools.partial``, a bound method) compare by their parts; other objects by identity."""
    return _same_callable(first, second, set())


def _same_callable(a: Any, b: Any, seen: set[tuple[int, int]]) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    pair = (id(a), id(b))
    if pair in seen:  # a recursive closure: equal so far
        return True
    seen.add(pair)
    if isinstance(a, functools.partial) and isinstance(b, functools.partial):
        return (_same_callable(a.func, b.func, seen) and _same_value(a.args, b.args, seen)
                and _same_value(a.keywords, b.keywords, seen))
    if isinstance(a, types.MethodType) and isinstance(b, types.MethodType):
        return (_same_callable(a.__func__, b.__func__, seen)
                and _same_value(a.__self__, b.__self__, seen))
    if not (isinstance(a, types.FunctionType) and isinstance(b, types.FunctionType)):
        return False
    ca, cb = a.__code__, b.__code__
    if (source_file(a), a.__qualname__, ca.co_firstlineno) != \
            (source_file(b), b.__qualname__, cb.co_firstlineno):
        return False
    if _code_key(ca) != _code_key(cb) and not (_rewritten(a) or _rewritten(b)):
        return False
    cells_a, cells_b = a.__closure__ or (), b.__closure__ or ()
    return (_same_value(a.__defaults__, b.__defaults__, seen)
            and _same_value(a.__kwdefaults__, b.__kwdefaults__, seen)
            and len(cells_a) == len(cells_b)
            and all(_same_value(_cell(x), _cell(y), seen)
                    for x, y in zip(cells_a, cells_b, strict=True)))


_EMPTY_CELL = object()


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet filled
        return _EMPTY_CELL


def _rewritten(function: types.FunctionType) -> bool:
    """Whether pytest imported the function's module, rewriting its ``assert`` statements (the
    same source then compiles to other code)."""
    loader = function.__globals__.get("__loader__")
    return type(loader).__module__.startswith("_pytest.")


def _code_key(code: types.CodeType) -> tuple[Any, ...]:
    """What a code object computes, comparable across two compilations of the same source."""
    consts = tuple(_code_key(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_argcount, code.co_posonlyargcount,
            code.co_kwonlyargcount, code.co_flags)


def _same_value(a: Any, b: Any, seen: set[tuple[int, int]]) -> bool:
    """Equality of values a measurement closes over (functions by :func:`same_measure`, arrays
    element by element, classes by where they are defined; anything else by ``==``)."""
    if a is b:
        return True
    if callable(a) and callable(b) and not isinstance(a, type) and not isinstance(b, type) \
            and isinstance(a, _CALLABLES) and isinstance(b, _CALLABLES):
        return _same_callable(a, b, seen)
    if isinstance(a, type) and isinstance(b, type):
        where = _defined_in(a)
        return a.__qualname__ == b.__qualname__ and where is not None \
            and where == _defined_in(b)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return (type(a) is type(b) and len(a) == len(b)
                and all(_same_value(x, y, seen) for x, y in zip(a, b, strict=True)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k], seen) for k in a)
    if type(a).__module__ == "numpy" and type(b).__module__ == "numpy":
        import numpy as np

        try:
            return bool(np.array_equal(a, b, equal_nan=True)) and \
                getattr(a, "dtype", None) == getattr(b, "dtype", None)
        except TypeError:
            return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:  # an object without a truth value for ==: not known to be equal
        return False


_CALLABLES = (types.FunctionType, types.MethodType, functools.partial)


def _defined_in(cls: type) -> str | None:
    try:
        return str(Path(inspect.getfile(cls)).resolve())
    except (TypeError, OSError):  # a built-in class, or one without a file
        return None
