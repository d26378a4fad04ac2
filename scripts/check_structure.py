"""What import-linter's contracts (pyproject.toml, ``lint-imports``) cannot check; exit 1 on a
violation. ``make lint`` runs it: ``python scripts/check_structure.py [--root PATH]``.

1. Every package of ``normtest/``, ``checks/``, ``theorems/`` is in the layers contract; no loose
   module at the top of ``normtest/`` besides ``__init__``, ``__main__`` and ``errors``.
2. What the contracts' graph misses points down the layers too: modules loaded by name
   (``import_module``, ``find_spec``, ``__import__`` of a literal or f-string ``normtest.…``) and
   imports naming ``normtest.checks``/``normtest.theorems`` (the graph has them as ``checks``,
   ``theorems``).
3. No import cycle in grimp's graph (with the imports of 2; an import of a module's own package
   left out), type-only imports counted: a cycle closed by a type-only import fails too (it is
   two modules that each need the other's ideas), and the message says which arrows are.
4. A note, never a failure, for a module past :data:`MAX_LINES` lines.
5. No flag of a setting of ``normtest/base/settings.py`` declared by hand.
6. No reference to a file outside the repository (:data:`OUTSIDE_FILES`).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import itertools
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
#: Installed package name → its folder (pyproject's package-dir map), its name in the graph.
PACKAGE_DIRS = {"normtest": "normtest", "normtest.checks": "checks",
                "normtest.theorems": "theorems"}
MAX_LINES = 900
#: The only modules that may sit loose at the top of normtest/.
LOOSE_ALLOWED = ("__init__", "__main__", "errors")
SETTINGS_FILE = "normtest/base/settings.py"
FLAG_CALLS = ("add_argument", "addoption", "add_option")
LOADERS = ("import_module", "find_spec", "__import__")
#: Files that are not part of the repository and must never be cited.
OUTSIDE_FILES = ("THEORY.md", "ARCHITECTURE.md", "MODELS.md")
REFERENCE_SCOPE = ("normtest/", "checks/", "tests/", "docs/", "README.md", "theorems/",
                   "benchmarks/", "scripts/")
REFERENCE_EXEMPT = ("scripts/check_structure.py", "tests/test_structure.py")
_OUTSIDE = re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(re.escape(n) for n in OUTSIDE_FILES)
                      + r")(?![A-Za-z0-9_])")
_READ: dict[tuple[Path, int, int], tuple[ast.Module, list[tuple[str, int, str]]]] = {}


def installed(name: str, back: bool = False) -> str:
    """A graph name (``checks.word``) as installed (``normtest.checks.word``); ``back``: the
    other way."""
    pairs = [(b, a) if back else (a, b) for b, a in PACKAGE_DIRS.items()]
    for old, new in sorted(pairs, key=lambda pair: -len(pair[0])):
        if name == old or name.startswith(old + "."):
            return new + name[len(old):]
    return name


def package_of(name: str) -> str:
    """The stage a module belongs to: its first two dotted components."""
    return ".".join(name.split(".")[:2])


def discover(root: Path) -> dict[str, Path]:
    """Every module of the package by installed name (folders that do not exist are skipped)."""
    modules = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if all(p.isidentifier() for p in parts):
                parts = parts[:-1] if parts[-1] == "__init__" else parts
                modules[".".join((package, *parts))] = path
    return modules


def contract_layers(root: Path) -> list[tuple[str, ...]]:
    """The layers contract of ``root/pyproject.toml``, lowest first, by installed name."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c["layers"] for c in config["tool"]["importlinter"]["contracts"]
                  if c["type"] == "layers")
    return [tuple(installed(m.strip()) for m in re.split(r"[|:]", layer))
            for layer in reversed(layers)]


def check_declared(root: Path, layers: Sequence[Sequence[str]]) -> list[str]:
    """A package that no layer names, or a loose module at the top of normtest/."""
    named = {name for layer in layers for name in layer}
    wanted = [(f"{folder}/", package) for package, folder in PACKAGE_DIRS.items()
              if package != "normtest" and (root / folder).is_dir()]
    problems = []
    for entry in sorted((root / "normtest").iterdir()):
        if (entry / "__init__.py").is_file():
            wanted.append((f"normtest/{entry.name}/", f"normtest.{entry.name}"))
        elif entry.suffix == ".py" and entry.stem not in LOOSE_ALLOWED:
            problems.append(f"normtest/{entry.name}: a loose module at the top level; put it "
                            "in the package of its stage")
    return problems + [f"{folder}: package {package} is not in the layers contract of "
                       "pyproject.toml (add it, in its place)"
                       for folder, package in wanted if package not in named]


def _literal(node: ast.expr) -> str | None:
    """The module name a literal or an f-string (its text up to the first placeholder) names."""
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node
    value = first.value if isinstance(first, ast.Constant) else None
    return value.rstrip(".") if isinstance(value, str) else None


def unseen_imports(tree: ast.Module) -> Iterator[tuple[str, int, str]]:
    """(module name, line, how) of the imports the contracts' graph misses: loads by name of a
    ``normtest`` module, and imports naming ``normtest.checks`` or ``normtest.theorems``;
    ``how`` is "loaded by name", "import" or "type-only" (under ``if TYPE_CHECKING:``)."""
    hidden = [package for package in PACKAGE_DIRS if package != "normtest"]

    def visit(node: ast.AST, typing: bool) -> Iterator[tuple[str, int, str]]:
        how = "type-only" if typing else "import"
        if isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0):
            stem = f"{node.module}." if isinstance(node, ast.ImportFrom) else ""
            yield from ((stem + a.name, node.lineno, how) for a in node.names
                        if package_of(stem + a.name) in hidden)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            name = _literal(node.args[0]) if called in LOADERS else None
            if name and (name + ".").startswith("normtest."):
                yield name, node.lineno, "loaded by name"
        if isinstance(node, ast.If) and \
                getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for statement in node.body:
                yield from visit(statement, True)
            for statement in node.orelse:
                yield from visit(statement, typing)
            return
        for child in ast.iter_child_nodes(node):
            yield from visit(child, typing)

    return visit(tree, False)


def read(path: Path) -> tuple[ast.Module, list[tuple[str, int, str]]]:
    """The syntax tree of ``path`` and its :func:`unseen_imports`, once per version of the file."""
    stat = path.stat()
    key = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        _READ[key] = (tree, list(unseen_imports(tree)))
    return _READ[key]


def unseen(root: Path) -> list[tuple[str, str, Path, int, str]]:
    """(importer, imported, file, line, how) of every import :func:`unseen_imports` finds."""
    return [(name, target, path, line, how) for name, path in discover(root).items()
            for target, line, how in read(path)[1]]


def check_unseen(root: Path, layers: Sequence[Sequence[str]]) -> list[str]:
    """An import :func:`unseen_imports` finds that points up the layers or across one."""
    rank = {name: r for r, layer in enumerate(layers) for name in layer}
    problems = []
    for source, target, path, line, how in unseen(root):
        a, b = package_of(source), package_of(target)
        if a != b and a in rank and b in rank and rank[a] <= rank[b]:
            problems.append(f"{_rel(path, root)}:{line}: {source} → {target} ({how}): {a} "
                            f"imports {b}, {'upward' if rank[a] < rank[b] else 'across its layer'}")
    return problems


def build_graph(root: Path, type_only: bool = True) -> grimp.ImportGraph:
    """grimp's graph of the tree at ``root`` (the contracts' root packages), with the imports of
    :func:`unseen_imports` (type-only ones when ``type_only``) and without the imports of a
    module's own package."""
    roots = [folder for folder in PACKAGE_DIRS.values() if (root / folder).is_dir()]
    saved = {name: sys.modules.pop(name) for name in roots if name in sys.modules}
    sys.path.insert(0, str(root))  # grimp finds a root package by import: root's, not another
    importlib.invalidate_caches()
    try:
        graph = grimp.build_graph(*roots, exclude_type_checking_imports=not type_only,
                                  cache_dir=None)
    finally:
        sys.path.remove(str(root))
        sys.modules.update(saved)
    for source, target, _, line, how in unseen(root):
        found = installed(target, back=True)
        while found not in graph.modules and "." in found:
            found = found.rsplit(".", 1)[0]
        if found in graph.modules and (type_only or how != "type-only"):
            graph.add_import(importer=installed(source, back=True), imported=found,
                             line_number=line, line_contents=how)
    for module in graph.modules:
        for target in graph.find_modules_directly_imported_by(module):
            if module.startswith(target + "."):
                graph.remove_import(importer=module, imported=target)
    return graph


def import_cycles(graph: grimp.ImportGraph) -> dict[frozenset[str], list[str]]:
    """Each group of modules that import each other in a circle → a shortest cycle through it."""
    groups = {frozenset({m} | (graph.find_upstream_modules(m) & graph.find_downstream_modules(m)))
              for m in graph.modules}
    cycles = {}
    for group in sorted((g for g in groups if len(g) > 1), key=sorted):
        start = min(group)
        chains = [graph.find_shortest_chain(importer=start, imported=last)
                  for last in sorted(group & graph.find_modules_that_directly_import(start))]
        cycles[group] = [*min((c for c in chains if c), key=len), start]
    return cycles


def check_cycles(root: Path) -> tuple[list[str], grimp.ImportGraph]:
    """Every import cycle, type-only imports counted (each a failure), and the graph."""
    full, running = build_graph(root), build_graph(root, type_only=False)

    def describe(cycle: list[str]) -> str:
        arrows = []
        for a, b in itertools.pairwise(cycle):
            lines = ",".join(str(d["line_number"])
                             for d in full.get_import_details(importer=a, imported=b))
            kind = "" if running.direct_import_exists(importer=a, imported=b) else ", type-only"
            arrows.append(f"{installed(a)}:{lines}{kind}")
        return f"{' → '.join(installed(m) for m in cycle)} (arrows at {'; '.join(arrows)})"

    return [describe(c) for c in import_cycles(full).values()], full


def module_lengths(root: Path) -> list[tuple[int, str]]:
    """(lines, file) of every module, longest first."""
    out = [(len(p.read_text(encoding="utf-8").splitlines()), _rel(p, root))
           for p in discover(root).values()]
    return sorted(out, key=lambda pair: (-pair[0], pair[1]))


def check_lengths(root: Path, limit: int = MAX_LINES) -> list[str]:
    """Modules over ``limit`` lines: a signal to look at the module's ideas, never a failure (a
    module is as long as its idea; splitting one to get under a number shapes code by a cap)."""
    return [f"{path}: {n} lines (limit {limit})" for n, path in module_lengths(root) if n > limit]


def setting_names(settings_file: Path) -> list[str]:
    """The names of the ``Setting(...)`` entries of the settings module, read with ast."""
    names = []
    for node in ast.walk(read(settings_file)[0]):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Setting":
            given = [k.value for k in node.keywords if k.arg == "name"]
            value = given[0] if given else (node.args[0] if node.args else None)
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                names.append(value.value)
    return names


def check_setting_flags(root: Path) -> list[str]:
    """A flag of a setting (``--words``, ``--no-cache``, ``--normtest-words``, …) declared by
    hand outside the settings module (they come from ``add_cli_options``)."""
    settings_file = root / SETTINGS_FILE
    names = setting_names(settings_file) if settings_file.is_file() else []
    if not names:
        return [f"{SETTINGS_FILE}: no Setting(...) found, so the setting names are unknown"]
    flags = {f"--{prefix}{no}{name.replace('_', '-')}": name for name in names
             for prefix in ("", "normtest-") for no in ("", "no-")}
    problems = []
    for path in discover(root).values():
        calls = [n for n in ast.walk(read(path)[0]) if isinstance(n, ast.Call)
                 and getattr(n.func, "attr", getattr(n.func, "id", "")) in FLAG_CALLS]
        problems += [f"{_rel(path, root)}:{call.lineno}: {ast.unparse(call.func).split('.')[-1]}"
                     f"({arg.value!r}) declares the flag of setting {flags[arg.value]!r} by "
                     "hand; take it from normtest.base.settings.add_cli_options"
                     for call in calls for arg in call.args
                     if isinstance(arg, ast.Constant) and arg.value in flags
                     and path.resolve() != settings_file.resolve()]
    return problems


def repository_files(root: Path) -> list[Path]:
    """The files of :data:`REFERENCE_SCOPE` git tracks or would track; without git, every file
    below it outside hidden folders and caches."""
    try:
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                                 "-z", "--", *REFERENCE_SCOPE], cwd=root, capture_output=True,
                                check=True, timeout=60).stdout.decode("utf-8").split("\0")
        files = [root / name for name in listed if name]
    except (OSError, subprocess.SubprocessError):
        files = [p for entry in REFERENCE_SCOPE for p in [root / entry, *(root / entry).rglob("*")]
                 if not any(part.startswith(".") or part == "__pycache__"
                            for part in p.relative_to(root).parts)]
    return sorted({p for p in files if p.is_file()})


def check_outside_references(root: Path) -> list[str]:
    """A mention of a file outside the repository (:data:`OUTSIDE_FILES`)."""
    exempt = {(root / name).resolve() for name in REFERENCE_EXEMPT}
    problems = []
    for path in repository_files(root):
        try:
            text = "" if path.resolve() in exempt else path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (images, data) cite nothing
        for number, line in enumerate(text.splitlines(), start=1):
            problems += [f"{_rel(path, root)}:{number}: mentions {m.group(0)}, a file outside "
                         "the repository" for m in _OUTSIDE.finditer(line)]
    return problems


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _section(title: str, problems: Sequence[str], ok: str, note: bool = False) -> bool:
    """Print one check's outcome; a note (``note``) is never a failure."""
    print(f"{title}: {('look' if note else 'FAIL') if problems else 'ok'}")
    for line in problems or [ok]:
        print(f"  {line}")
    return note or not problems


def main(argv: Sequence[str] | None = None) -> int:
    """Run every check on the tree at ``--root``; 0 when all pass, 1 otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: here)")
    root = parser.parse_args(argv).root.resolve()
    layers = contract_layers(root)
    cycles, graph = check_cycles(root)
    size = f"{len(graph.modules)} modules and {graph.count_imports()} imports"
    hidden = {(source, line) for source, _, _, line, _ in unseen(root)}
    longest = ", ".join(f"{path} {n}" for n, path in module_lengths(root)[:5])
    results = [
        _section("layers (with lint-imports)", check_declared(root, layers)
                 + check_unseen(root, layers),
                 f"every package is in the {len(layers)} layers of pyproject.toml; "
                 f"{len(hidden)} loads by name or imports of normtest.checks/theorems point down"),
        _section("import cycles", cycles, f"0 cycles among {size}, type-only imports counted"),
        _section(f"module length (a look past {MAX_LINES} lines)", check_lengths(root),
                 f"longest: {longest}", note=True),
        _section("setting flags", check_setting_flags(root),
                 f"{len(setting_names(root / SETTINGS_FILE))} settings of {SETTINGS_FILE}; no "
                 "flag of theirs declared by hand"),
        _section("outside references", check_outside_references(root),
                 f"no mention of {', '.join(OUTSIDE_FILES)}"),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
