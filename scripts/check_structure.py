"""Structural checks of the normtest tree: exit 1 on a violation (``make lint`` runs it).

1. **Layers.** ``normtest`` is laid out by stage, and :data:`LAYERS` declares their order,
   lowest first. A package imports only its own layer or a lower one, and the packages of one
   layer (the two front ends, ``cli`` and ``pytest``) do not import each other. Every import
   counts: at module level (also inside a ``try``/``if``/``with`` or a class body), inside
   functions, under ``if TYPE_CHECKING:``, names a package re-exports on first use
   (``lazy_exports``) and modules loaded through ``importlib.import_module``,
   ``importlib.util.find_spec`` or ``__import__`` with a literal (or f-string) name. There is no
   allow-list: an upward arrow means a name sits in the wrong layer. A package that is not in
   :data:`LAYERS`, or a loose module beside ``__init__``, ``__main__`` and ``errors``, is a
   violation too. ``checks/`` and ``theorems/`` are included under the names they are installed
   as, ``normtest.checks`` and ``normtest.theorems``.
2. **No import cycle** among modules: the same arrows but those under ``TYPE_CHECKING`` (a
   lazy import closes a circle as surely, only later). An import of a module's own package
   (``normtest.adapters`` from ``normtest.adapters.static``) is ignored.
3. **The gate's configuration is read by the front ends only:** ``load_config`` and
   ``find_config`` are imported in ``normtest.cli``, ``normtest.pytest`` and ``normtest.gate``
   alone.
4. No module longer than :data:`MAX_LINES` lines (the five longest are listed).
5. One definition of each setting: no module declares a command-line or pytest flag of a
   setting of ``normtest/base/settings.py`` (``SETTINGS``) by hand; those flags come from
   ``normtest.base.settings.add_cli_options``.
6. No reference to a file outside the repository (:data:`OUTSIDE_FILES`) in the tracked (or
   untracked, not ignored) files of :data:`REFERENCE_SCOPE`.

Standard library only; nothing of normtest is imported::

    python scripts/check_structure.py [--root PATH]
"""

from __future__ import annotations

import argparse
import ast
import itertools
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Installed package name → folder of the repository (pyproject's package-dir map).
PACKAGE_DIRS: dict[str, str] = {
    "normtest": "normtest",
    "normtest.checks": "checks",
    "normtest.theorems": "theorems",
}
MAX_LINES = 900
#: The stages of the package, lowest first; a package imports only its own layer or lower ones.
#: Packages that share a layer (the front ends) do not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("normtest.errors",),
    ("normtest.base",),
    ("normtest.verdict",),
    ("normtest.stats",),
    ("normtest.geometry",),
    ("normtest.adapters",),
    ("normtest.models",),
    ("normtest.data",),
    ("normtest.claims",),
    ("normtest.checks",),
    ("normtest.scorecard",),
    ("normtest.audit",),
    ("normtest.gate",),
    ("normtest.render",),
    ("normtest.testing",),
    ("normtest.cli", "normtest.pytest"),
    ("normtest.theorems",),
    ("normtest",),
)
#: The only modules that may sit loose at the package's top level.
LOOSE_ALLOWED = ("normtest", "normtest.__main__", "normtest.errors")
#: The gate configuration's readers, and what they may import.
CONFIG_READERS = ("normtest.cli", "normtest.pytest", "normtest.gate")
CONFIG_NAMES = ("load_config", "find_config")
#: Where the settings table lives, and the calls that declare a command-line flag.
SETTINGS_FILE = "normtest/base/settings.py"
FLAG_CALLS = ("add_argument", "addoption", "add_option")
#: Files that are not part of the repository and must never be cited.
OUTSIDE_FILES = ("THEORY.md", "ARCHITECTURE.md", "MODELS.md")
REFERENCE_SCOPE = ("normtest/", "checks/", "tests/", "docs/", "README.md", "theorems/",
                   "benchmarks/", "scripts/")
#: Files that name the outside files on purpose (to look for them).
REFERENCE_EXEMPT = ("scripts/check_structure.py", "tests/test_structure.py")
_OUTSIDE = re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(re.escape(n) for n in OUTSIDE_FILES)
                      + r")(?![A-Za-z0-9_])")


# --------------------------------------------------------------------------- the import graph


@dataclass(frozen=True)
class Module:
    """One module of the package: its dotted name, its file, whether it is a package."""

    name: str
    path: Path
    is_package: bool


@dataclass(frozen=True)
class Edge:
    """An import of ``target`` by ``source`` at ``path:line``; ``lazy`` when it sits inside a
    function (it runs when the function is first called); ``kind`` says how it imports:
    ``import`` (a statement that runs), ``type`` (under ``TYPE_CHECKING``), ``importlib`` (a
    module loaded by name) or ``lazy-export`` (a name a package re-exports on first use)."""

    source: str
    target: str
    path: Path
    line: int
    lazy: bool = False
    kind: str = "import"


def discover(root: Path, package_dirs: Mapping[str, str] = PACKAGE_DIRS) -> dict[str, Module]:
    """Every module of the package, by dotted name (folders that do not exist are skipped)."""
    modules: dict[str, Module] = {}
    for package, folder in package_dirs.items():
        base = root / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if "__pycache__" in parts or any(not p.isidentifier() for p in parts):
                continue
            is_package = parts[-1] == "__init__"
            name = ".".join((package, *(parts[:-1] if is_package else parts)))
            modules[name] = Module(name, path, is_package)
    return modules


_READ: dict[tuple[str, int, int], tuple[ast.Module, tuple[Any, ...], tuple[Any, ...]]] = {}


def read_module(path: Path) -> tuple[ast.Module, tuple[Any, ...], tuple[Any, ...]]:
    """The syntax tree of ``path``, its import statements (:func:`all_imports`) and the modules
    it loads by name (:func:`dynamic_imports`): read once per version of the file, since every
    check walks the same modules."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        _READ[key] = (tree, tuple(all_imports(tree)), tuple(dynamic_imports(tree)))
    return _READ[key]


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def all_imports(tree: ast.Module
                ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import statement, with whether it sits inside a function and whether it is under
    ``if TYPE_CHECKING:`` (read by type checkers only)."""
    def walk(nodes: Iterable[ast.AST], lazy: bool, typing: bool
             ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node, lazy, typing
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                yield from walk(node.body, lazy, True)
                yield from walk(node.orelse, lazy, typing)
            else:
                inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                           | ast.Lambda)
                yield from walk(ast.iter_child_nodes(node), inner, typing)

    return walk(tree.body, False, False)


def runtime_imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement that can run, with whether it sits inside a function (see the
    module doc): all but those under ``if TYPE_CHECKING:``."""
    return ((node, lazy) for node, lazy, typing in all_imports(tree) if not typing)


def module_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported (not inside a function)."""
    return (node for node, lazy in runtime_imports(tree) if not lazy)


def _known_prefix(name: str, modules: Mapping[str, Module]) -> str | None:
    """The deepest module of ``modules`` that ``name`` is or lies inside."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _targets(node: ast.Import | ast.ImportFrom, module: Module,
             modules: Mapping[str, Module]) -> list[str]:
    if isinstance(node, ast.Import):
        found = (_known_prefix(alias.name, modules) for alias in node.names)
        return [t for t in found if t is not None]
    if node.level:
        base = module.name.split(".")
        if not module.is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        stem = ".".join([*base, *([node.module] if node.module else [])])
    else:
        stem = node.module or ""
    out = []
    for alias in node.names:
        child = f"{stem}.{alias.name}"
        target = child if child in modules else _known_prefix(stem, modules)
        if target is not None:
            out.append(target)
    return out


_LOADERS = ("import_module", "find_spec", "__import__")


def _literal_prefix(node: ast.expr) -> str | None:
    """The module name a literal or f-string argument names (an f-string: its text up to the
    first placeholder, less a trailing dot)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and \
            isinstance(node.values[0], ast.Constant) and isinstance(node.values[0].value, str):
        return node.values[0].value.rstrip(".")
    return None


def dynamic_imports(tree: ast.Module) -> Iterator[tuple[str, int, bool, str]]:
    """(module name, line, inside a function, kind) of every module loaded by name: through
    ``importlib`` (or ``__import__``) with a literal name, and the modules of a package's
    ``lazy_exports`` table."""
    assigned = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}

    def visit(node: ast.AST, lazy: bool) -> Iterator[tuple[str, int, bool, str]]:
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _LOADERS and node.args:
                name = _literal_prefix(node.args[0])
                if name:
                    yield name, node.lineno, lazy, "importlib"
            if called == "lazy_exports" and len(node.args) > 1:
                table = node.args[1]
                if isinstance(table, ast.Name):
                    table = assigned.get(table.id, table)
                if isinstance(table, ast.Dict):
                    for key in table.keys:
                        if isinstance(key, ast.Constant) and isinstance(key.value, str):
                            yield key.value, node.lineno, lazy, "lazy-export"
        inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            yield from visit(child, inner)

    for top in tree.body:
        yield from visit(top, False)


def import_edges(modules: Mapping[str, Module]) -> list[Edge]:
    """Every import between the modules, of every kind (a module's own ancestors excluded)."""
    edges = []
    for module in modules.values():
        _, statements, by_name = read_module(module.path)
        found: list[tuple[str, int, bool, str]] = [
            (target, node.lineno, lazy, "type" if typing else "import")
            for node, lazy, typing in statements
            for target in _targets(node, module, modules)]
        for name, line, lazy, kind in by_name:
            target = _known_prefix(name, modules)
            if target is not None:
                found.append((target, line, lazy, kind))
        for target, line, lazy, kind in found:
            if target == module.name or module.name.startswith(target + "."):
                continue  # itself, or its own package's __init__ (intra-package)
            edges.append(Edge(module.name, target, module.path, line, lazy, kind))
    return edges


def package_of(name: str) -> str:
    """The package a module belongs to: its first two dotted components (the root package's
    own ``__init__`` and ``__main__`` belong to ``normtest``)."""
    if name == "normtest.__main__":
        return "normtest"
    return ".".join(name.split(".")[:2])


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def one_cycle(graph: Mapping[str, Iterable[str]], component: Sequence[str]) -> list[str]:
    """A shortest cycle through the first node of a strongly connected component."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return [start]


def cycles(edges: Sequence[Edge], key: str = "module") -> list[tuple[list[str], list[Edge]]]:
    """Import cycles among modules (``key="module"``) or packages (``key="package"``): each as
    one concrete cycle and the import statements that make its arrows."""
    name = package_of if key == "package" else (lambda n: n)
    graph: dict[str, set[str]] = {}
    evidence: dict[tuple[str, str], list[Edge]] = {}
    for e in edges:
        a, b = name(e.source), name(e.target)
        if a == b:
            continue
        graph.setdefault(a, set()).add(b)
        evidence.setdefault((a, b), []).append(e)
    out = []
    for component in strongly_connected(graph):
        loop = one_cycle(graph, component)
        out.append((loop, [evidence[(a, b)][0] for a, b in itertools.pairwise(loop)]))
    return out


def check_imports(root: Path, package_dirs: Mapping[str, str] = PACKAGE_DIRS) -> list[str]:
    """Violations: import cycles among modules (every arrow that can run; type-only ones
    left out)."""
    edges = [e for e in import_edges(discover(root, package_dirs)) if e.kind != "type"]
    problems = []
    for loop, proof in cycles(edges, "module"):
        arrows = "; ".join(f"{e.source} → {e.target} ({_rel(e.path, root)}:{e.line}"
                           f"{', in a function' if e.lazy else ''})" for e in proof)
        problems.append(f"module cycle {' → '.join(loop)}: {arrows}")
    return problems


def layer_of(package: str, layers: Sequence[Sequence[str]] = LAYERS) -> int | None:
    """The rank of ``package`` in ``layers`` (None: not declared)."""
    return next((rank for rank, members in enumerate(layers) if package in members), None)


def _how(edge: Edge) -> str:
    return {"type": ", under TYPE_CHECKING", "importlib": ", loaded by name",
            "lazy-export": ", a lazy re-export"}.get(edge.kind, ", in a function" if edge.lazy
                                                     else "")


def check_layers(root: Path, package_dirs: Mapping[str, str] = PACKAGE_DIRS,
                 layers: Sequence[Sequence[str]] = LAYERS,
                 loose: Sequence[str] = LOOSE_ALLOWED) -> list[str]:
    """Violations: an import that points up the layers or across one; a package that is not
    declared; a loose module at the package's top level."""
    modules = discover(root, package_dirs)
    problems = []
    for name, module in sorted(modules.items()):
        package = package_of(name)
        if name.count(".") == 1 and not module.is_package and name not in loose:
            problems.append(f"{_rel(module.path, root)}: a loose module at the top level; "
                            "put it in the package of its stage")
        elif layer_of(package, layers) is None:
            problems.append(f"{_rel(module.path, root)}: package {package} is not in the "
                            "declared layers (add it to LAYERS, in its place)")
    for e in sorted(import_edges(modules), key=lambda e: (str(e.path), e.line, e.target)):
        a, b = package_of(e.source), package_of(e.target)
        ra, rb = layer_of(a, layers), layer_of(b, layers)
        if a == b or ra is None or rb is None or ra > rb:
            continue
        direction = "upward" if ra < rb else "across its layer"
        problems.append(f"{_rel(e.path, root)}:{e.line}: {e.source} → {e.target}{_how(e)}: "
                        f"{a} imports {b}, {direction}")
    return problems


def check_config_readers(root: Path, package_dirs: Mapping[str, str] = PACKAGE_DIRS
                         ) -> list[str]:
    """Violations: the gate's configuration loaded outside the front ends and the gate."""
    problems = []
    for name, module in sorted(discover(root, package_dirs).items()):
        if name.startswith(tuple(f"{r}." for r in CONFIG_READERS)) or name in CONFIG_READERS:
            continue
        for node, _, _ in read_module(module.path)[1]:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "normtest.gate"):
                for alias in node.names:
                    if alias.name in CONFIG_NAMES:
                        problems.append(f"{_rel(module.path, root)}:{node.lineno}: {name} "
                                        f"imports {alias.name}; only the front ends read the "
                                        "gate's configuration (pass a GateConfig)")
    return problems


# --------------------------------------------------------------------------- module length


def module_lengths(root: Path, package_dirs: Mapping[str, str] = PACKAGE_DIRS
                   ) -> list[tuple[int, str]]:
    """(lines, file) of every module, longest first."""
    out = [(len(m.path.read_text(encoding="utf-8").splitlines()), _rel(m.path, root))
           for m in discover(root, package_dirs).values()]
    return sorted(out, key=lambda pair: (-pair[0], pair[1]))


def check_lengths(root: Path, limit: int = MAX_LINES,
                  package_dirs: Mapping[str, str] = PACKAGE_DIRS) -> list[str]:
    """Modules over ``limit`` lines: a signal to look at the module's ideas, never a failure (a
    module is as long as its idea; splitting one to get under a number is how a cap shapes
    code)."""
    return [f"{path}: {n} lines (limit {limit})"
            for n, path in module_lengths(root, package_dirs) if n > limit]


# --------------------------------------------------------------------------- setting flags


def setting_names(settings_file: Path) -> list[str]:
    """The names of ``SETTINGS`` in the settings module, read with ast."""
    tree = ast.parse(settings_file.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "Setting"):
            continue
        given = [k.value for k in node.keywords if k.arg == "name"]
        value = given[0] if given else (node.args[0] if node.args else None)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            names.append(value.value)
    return names


def setting_flags(names: Iterable[str]) -> dict[str, str]:
    """Every flag a setting can be given by (``--words``, ``--no-cache``,
    ``--normtest-words``, …) → the setting's name."""
    flags = {}
    for name in names:
        flag = name.replace("_", "-")
        for form in (flag, f"no-{flag}"):
            flags[f"--{form}"] = name
            flags[f"--normtest-{form}"] = name
    return flags


def check_setting_flags(root: Path, package_dirs: Mapping[str, str] = PACKAGE_DIRS
                        ) -> list[str]:
    """Violations: a flag of a setting declared by hand outside the settings module."""
    settings_file = root / SETTINGS_FILE
    if not settings_file.is_file():
        return [f"{SETTINGS_FILE}: not found, so the setting names are unknown"]
    names = setting_names(settings_file)
    if not names:
        return [f"{SETTINGS_FILE}: no Setting(...) found in SETTINGS"]
    flags = setting_flags(names)
    problems = []
    for module in discover(root, package_dirs).values():
        if module.path.resolve() == settings_file.resolve():
            continue
        tree = read_module(module.path)[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called not in FLAG_CALLS:
                continue
            for arg in node.args:
                if isinstance(arg, ast.Constant) and arg.value in flags:
                    problems.append(
                        f"{_rel(module.path, root)}:{node.lineno}: {called}({arg.value!r}) "
                        f"declares the flag of setting {flags[arg.value]!r} by hand; take it "
                        "from normtest.base.settings.add_cli_options"
                    )
    return problems


# --------------------------------------------------------------------------- outside references


def repository_files(root: Path, scope: Sequence[str] = REFERENCE_SCOPE) -> list[Path]:
    """The files of ``scope`` git tracks or would track (untracked, not ignored); without git,
    every file below ``scope`` outside hidden folders and caches."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z", "--",
             *scope],
            cwd=root, capture_output=True, check=True, timeout=60,
        ).stdout.decode("utf-8").split("\0")
        files = [root / name for name in listed if name]
    except (OSError, subprocess.SubprocessError):
        files = []
        for entry in scope:
            path = root / entry
            if path.is_file():
                files.append(path)
            elif path.is_dir():
                files += [p for p in path.rglob("*") if p.is_file() and not any(
                    part.startswith(".") or part == "__pycache__"
                    for part in p.relative_to(root).parts)]
    return sorted({p for p in files if p.is_file()})


def check_outside_references(root: Path, files: Iterable[Path] | None = None) -> list[str]:
    """Violations: a mention of a file outside the repository (:data:`OUTSIDE_FILES`)."""
    exempt = {(root / name).resolve() for name in REFERENCE_EXEMPT}
    problems = []
    for path in sorted(repository_files(root) if files is None else files):
        if path.resolve() in exempt:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (images, data) cite nothing
        for number, line in enumerate(text.splitlines(), start=1):
            for match in _OUTSIDE.finditer(line):
                problems.append(f"{_rel(path, root)}:{number}: mentions {match.group(0)}, a "
                                "file outside the repository")
    return problems


# --------------------------------------------------------------------------- the command


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _section(title: str, problems: Sequence[str], ok: str) -> bool:
    print(f"{title}: {'FAIL' if problems else 'ok'}")
    for line in problems if problems else [ok]:
        print(f"  {line}")
    return not problems


def _warning(title: str, notes: Sequence[str], ok: str) -> bool:
    print(f"{title}: {'look' if notes else 'ok'}")
    for line in notes if notes else [ok]:
        print(f"  {line}")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run every check on the tree at ``--root``; 0 when all pass, 1 otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: here)")
    root = parser.parse_args(argv).root.resolve()
    modules = discover(root)
    edges = import_edges(modules)
    packages = {package_of(name) for name in modules}
    lengths = module_lengths(root)
    longest = ", ".join(f"{path} {n}" for n, path in lengths[:5])
    order = " → ".join("/".join(p.removeprefix("normtest.") for p in layer)
                       for layer in LAYERS)
    kinds = {k: len({(e.source, e.target) for e in edges if e.kind == k})
             for k in ("import", "type", "importlib", "lazy-export")}
    results = [
        _section("layers", check_layers(root),
                 f"{order}; no upward import among {len(packages)} packages and "
                 f"{len(modules)} modules ({kinds['import']} import, {kinds['type']} "
                 f"type-only, {kinds['importlib']} loaded-by-name and {kinds['lazy-export']} "
                 "lazy re-export arrows)"),
        _section("import cycles", check_imports(root),
                 f"none among {len(modules)} modules"),
        _section("gate configuration", check_config_readers(root),
                 "read by the front ends only"),
        _warning(f"module length (a look past {MAX_LINES} lines)", check_lengths(root),
                 f"longest: {longest}"),
        _section("setting flags", check_setting_flags(root),
                 f"{len(setting_names(root / SETTINGS_FILE))} settings of {SETTINGS_FILE}; "
                 "no flag of theirs declared by hand"),
        _section("outside references", check_outside_references(root),
                 f"no mention of {', '.join(OUTSIDE_FILES)}"),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
