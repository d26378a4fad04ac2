"""Structural checks of the normtest tree: exit 1 on a violation (``make lint`` runs it).

1. No import cycle: among normtest's packages (``normtest.adapters``, ``normtest.stats``, …, and
   each top-level module such as ``normtest.cache``), and among individual modules. Every import
   that can run counts: at module level (also inside a ``try``/``if``/``with`` or a class body)
   and inside functions (a lazy import closes a circle as surely, only later); only those under
   ``if TYPE_CHECKING:`` do not. A function-level arrow may be exempted by name in
   :data:`LAZY_ALLOWED`, with the reason. An import of a module's own package
   (``normtest.adapters`` from ``normtest.adapters.static``) is intra-package and ignored.
   ``checks/`` and ``theorems/`` are included under the names they are installed as,
   ``normtest.checks`` and ``normtest.theorems``.
2. No module longer than :data:`MAX_LINES` lines (the five longest are listed).
3. One definition of each setting: no module declares a command-line or pytest flag of a
   setting of ``normtest/settings.py`` (``SETTINGS``) by hand; those flags come from
   ``normtest.settings.add_cli_options``.
4. No reference to a file outside the repository (:data:`OUTSIDE_FILES`) in the tracked (or
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

ROOT = Path(__file__).resolve().parent.parent
#: Installed package name → folder of the repository (pyproject's package-dir map).
PACKAGE_DIRS: dict[str, str] = {
    "normtest": "normtest",
    "normtest.checks": "checks",
    "normtest.theorems": "theorems",
}
MAX_LINES = 600
#: Function-level imports allowed to close an import circle, (importer, imported) → why. Keep it
#: empty: a circle means one of the two modules holds what belongs to a third.
LAZY_ALLOWED: dict[tuple[str, str], str] = {}
#: Where the settings table lives, and the calls that declare a command-line flag.
SETTINGS_FILE = "normtest/settings.py"
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
    function (it runs when the function is first called)."""

    source: str
    target: str
    path: Path
    line: int
    lazy: bool = False


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


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def runtime_imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement that can run, with whether it sits inside a function (see the
    module doc): all but those under ``if TYPE_CHECKING:``."""
    def walk(nodes: Iterable[ast.AST], lazy: bool
             ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node, lazy
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                yield from walk(node.orelse, lazy)
            else:
                inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef
                                           | ast.Lambda)
                yield from walk(ast.iter_child_nodes(node), inner)

    return walk(tree.body, False)


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


def import_edges(modules: Mapping[str, Module]) -> list[Edge]:
    """Every import between the modules that can run, module-level and lazy (a module's own
    ancestors excluded)."""
    edges = []
    for module in modules.values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
        for node, lazy in runtime_imports(tree):
            for target in _targets(node, module, modules):
                if target == module.name or module.name.startswith(target + "."):
                    continue  # itself, or its own package's __init__ (intra-package)
                edges.append(Edge(module.name, target, module.path, node.lineno, lazy))
    return edges


def package_of(name: str) -> str:
    """The package a module belongs to: its first two dotted components."""
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


def counted(edges: Iterable[Edge],
            allowed: Mapping[tuple[str, str], str] = LAZY_ALLOWED) -> list[Edge]:
    """The arrows a cycle is looked for in: all but the lazy ones :data:`LAZY_ALLOWED` names."""
    return [e for e in edges if not (e.lazy and (e.source, e.target) in allowed)]


def check_imports(root: Path, package_dirs: Mapping[str, str] = PACKAGE_DIRS,
                  allowed: Mapping[tuple[str, str], str] = LAZY_ALLOWED) -> list[str]:
    """Violations: import cycles among packages, then among modules (lazy imports counted)."""
    edges = counted(import_edges(discover(root, package_dirs)), allowed)
    problems = []
    for key in ("package", "module"):
        for loop, proof in cycles(edges, key):
            arrows = "; ".join(f"{e.source} → {e.target} ({_rel(e.path, root)}:{e.line}"
                               f"{', in a function' if e.lazy else ''})" for e in proof)
            problems.append(f"{key} cycle {' → '.join(loop)}: {arrows}")
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
    """Violations: modules over ``limit`` lines."""
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
        tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
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
                        "from normtest.settings.add_cli_options"
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
    results = [
        _section("import cycles", check_imports(root),
                 f"none among {len(packages)} packages and {len(modules)} modules "
                 f"({len({(e.source, e.target) for e in edges if not e.lazy})} module-level "
                 f"and {len({(e.source, e.target) for e in edges if e.lazy})} function-level "
                 f"import arrows; {len(LAZY_ALLOWED)} allowed lazy)"),
        _section(f"module length (limit {MAX_LINES})", check_lengths(root),
                 f"longest: {longest}"),
        _section("setting flags", check_setting_flags(root),
                 f"{len(setting_names(root / SETTINGS_FILE))} settings of {SETTINGS_FILE}; "
                 "no flag of theirs declared by hand"),
        _section("outside references", check_outside_references(root),
                 f"no mention of {', '.join(OUTSIDE_FILES)}"),
    ]
    if not results[1]:
        print(f"  longest: {longest}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
