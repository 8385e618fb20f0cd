"""The package's import graph: no cycles, and every import goes down the layers of llmwiki/__init__.py."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO

PACKAGE = REPO / "llmwiki"
LAYERS = (
    {"errors", "records", "text", "text.segment", "policy", "tools", "tracing", "prompts", "failpoints", "config", "models", "pages", "backends", "datasets", "embeddings",
     "text.terms", "ingest", "ingest.chunking", "ingest.extract", "ingest.html", "ingest.pdf", "publish", "gitrepo", "read", "read.ranker.cmuqa", "read.readings", "read.readings.core",
     "text.lexicon", "text.parsing", "text.questions", "text.facts", "verify.calibrate", "verify.changes", "verify.train", "verify.pairs", "verify.onnx_nli", "verify.nli", "pgserver"},
    {"store.dialect"},
    {"store.schema"},
    {"store.contract"},
    {"store.duckdb_store", "store.postgres_store", "store.score_cache"},
    {"store"},
    {"workspace", "verify.cache"},
    {"read.ranker"},
    {"services"},
    {"ingest.sources", "read.search", "generate"},
    {"publish.snapshots", "publish.relocate"},
    {"publish.journal"},
    {"publish.wiki"},
    {"read.select", "verify.page", "verify", "verify.parallel"},
    {"read.candidates", "read.conversation"},
    {"read.readings.evidence", "read.readings.comparisons", "read.readings.statements", "read.readings.refusals", "read.readings.model",
     "read.readings.registry", "read.readings.case"},
    {"read.extractive"},
    {"read.answer"},
    {"read.chat", "maintain", "review", "publish.answers"},
    {"watch", "mcp_server", "notebook_args"},
    {"lint"},
    {"cli", "__main__", "", "reference"},
)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the llmwiki modules it imports anywhere (module level or inside functions), names without 'llmwiki.'."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).with_suffix("").parts
        modules[".".join(parts).removesuffix("__init__").rstrip(".")] = path
    graph = {}
    for name, path in modules.items():
        found = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # An import under `if TYPE_CHECKING:` names a type for annotations and never runs: no arrow.
        typing_only = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
                       for statement in node.body for inner in ast.walk(statement)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "llmwiki":
                inner = node.module.removeprefix("llmwiki").lstrip(".")
                targets = [f"{inner}.{alias.name}".lstrip(".") for alias in node.names if f"{inner}.{alias.name}".lstrip(".") in modules] or [inner]
            elif isinstance(node, ast.Import):
                targets = [alias.name.removeprefix("llmwiki").lstrip(".") for alias in node.names if alias.name.split(".")[0] == "llmwiki"]
            found.update(target for target in targets if target in modules and target != name)
        graph[name] = found
    return graph


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str, layers=LAYERS) -> int:
    return next(number for number, layer in enumerate(layers) if module in layer)


def upward(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Every import that goes up the layers, as 'module -> target'."""
    return sorted(f"{module} -> {target}" for module, targets in graph.items() for target in targets if layer_of(target, layers) > layer_of(module, layers))


def test_the_cycle_finder_finds_a_cycle_and_passes_a_chain():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_reader_sees_imports_inside_functions(tmp_path):
    package = tmp_path / "llmwiki"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from llmwiki.high import g\n")
    (package / "high.py").write_text("from llmwiki import low\n")
    graph = import_graph(package)
    assert graph["low"] == {"high"} and graph["high"] == {"low"}
    assert cycles(graph) == [["high", "low"]]
    # An import for annotations only (under TYPE_CHECKING) never runs: no arrow; the same import at run time is one.
    (package / "low.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from llmwiki.high import g\n")
    assert import_graph(package)["low"] == set()
    (package / "low.py").write_text("from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    from llmwiki.high import g\n")
    assert import_graph(package)["low"] == {"high"}


def test_llmwiki_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_every_module_has_a_layer_and_imports_only_downward():
    graph = import_graph()
    unplaced = sorted(module for module in graph if not any(module in layer for layer in LAYERS))
    assert unplaced == [], f"place these modules in LAYERS (and in llmwiki/__init__.py's docstring): {unplaced}"
    assert upward(graph) == []


def test_the_layer_check_finds_an_upward_import_and_passes_a_downward_one():
    layers = ({"low"}, {"high"})
    assert upward({"low": {"high"}, "high": set()}, layers) == ["low -> high"]
    assert upward({"low": set(), "high": {"low"}}, layers) == []


# SQL lives in the store package (and the throwaway server's CREATE DATABASE); DuckDB only in its adapter.
STORE = PACKAGE / "store"


def test_duckdb_and_sql_live_only_in_the_store_package():
    for path in (STORE / "contract.py", STORE / "duckdb_store.py", STORE / "postgres_store.py"):  # the control: the check sees SQL where it is
        assert ".execute(" in path.read_text(encoding="utf-8")
    assert "import duckdb" in (STORE / "duckdb_store.py").read_text(encoding="utf-8")
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        in_store = path.parent == STORE
        if ("import duckdb" in text and path.name != "duckdb_store.py") or (".execute(" in text and not in_store and path.name != "pgserver.py"):
            offenders.append(path.relative_to(REPO).as_posix())
    assert offenders == []


def test_no_caller_asks_a_store_what_kind_it_is():
    """Callers ask a store for a capability (supports_snapshots, rebuilds_from_files, searches_in_server), never its type."""
    pattern = re.compile(r"store\.local\b|isinstance\([^)]*(DuckDBStore|PostgresStore)|type\([^)]*store[^)]*\)\.__name__")
    assert pattern.search("if not store.local:") and pattern.search("isinstance(store, PostgresStore)")  # control
    offenders = [path.relative_to(REPO).as_posix() for path in PACKAGE.rglob("*.py")
                 if path.parent != STORE and pattern.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


def outside_the_english_package(graph: dict[str, set[str]]) -> list[str]:
    """Imports of the English package (``llmwiki.text``) from anything but itself, ``errors`` and ``policy`` (a leaf)."""
    english = {module for module in graph if module == "text" or module.startswith("text.")}
    return sorted(f"{module} -> {target}" for module in english for target in graph[module]
                  if not (target == "text" or target.startswith("text.") or target in {"errors", "policy"}))


def test_the_english_package_imports_nothing_from_the_read_or_write_side():
    graph = import_graph()
    assert {"text.questions", "text.parsing", "text.facts", "text.lexicon", "text.segment", "text.terms"} <= set(graph)
    assert outside_the_english_package(graph) == []
    assert graph["policy"] == set()  # the one module beside text and errors it may read: a leaf
    # control: an arrow from the English package to the read side is found
    assert outside_the_english_package({"text.questions": {"read.select", "text"}, "read.select": set()}) == ["text.questions -> read.select"]
