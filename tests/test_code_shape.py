"""Small modules and short functions: a newcomer can read any one of them whole.

No function over 50 lines and no module over 300, except pure data catalogues, named here.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "lobbytalks"
MAX_FUNCTION_LINES = 50
MAX_MODULE_LINES = 300
# Pure data: the page strings in both languages, one entry a line.
CATALOGUES = {"i18n.py"}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > limit]


def test_the_walk_finds_the_package():
    assert len(_modules()) > 50 and PACKAGE / "actions.py" in _modules()


def test_a_long_function_is_found():
    body = "\n".join(f"    x{n} = {n}" for n in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [("f", MAX_FUNCTION_LINES + 1)]
    assert long_functions("def g():\n    return 1\n") == []


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_is_over_fifty_lines(path):
    assert long_functions(path.read_text("utf-8")) == []


@pytest.mark.parametrize("path", [p for p in _modules()
                                  if p.relative_to(PACKAGE).as_posix() not in CATALOGUES],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_three_hundred_lines(path):
    assert len(path.read_text("utf-8").splitlines()) <= MAX_MODULE_LINES


def test_the_catalogues_are_data():
    """An allowed long module holds no functions of any size beyond a few small lookups."""
    for name in CATALOGUES:
        tree = ast.parse((PACKAGE / name).read_text("utf-8"))
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert len(functions) <= 6 and not long_functions((PACKAGE / name).read_text("utf-8"), 12)



SERVICES = sorted(p.stem for p in (Path(__file__).resolve().parent.parent / "lobbytalks" / "services")
                  .glob("*.py") if p.stem != "__init__")


@pytest.mark.sqlite_only
def test_every_service_imports_on_its_own():
    """No import cycle among the services: topics -> communities -> moderation -> topics made
    ``import lobbytalks.services.overlap`` fail in a fresh interpreter (a test module that
    imported it first failed to load when run alone)."""
    import subprocess
    import sys
    failed = [name for name in SERVICES
              if subprocess.run([sys.executable, "-c", f"import lobbytalks.services.{name}"],
                                capture_output=True, timeout=60).returncode != 0]
    assert failed == []
