"""numba's disk cache of a kernel is renewed when a file it compiles from changes
(search/kernel_cache.py), not only when the kernel's own file does: numba alone kept
running the old machine code of an imported function on a warm cache."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from treesens.search import gap_kernel_compile, kernel_cache
from treesens.tests.conftest import this_treesens_env

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

KERNEL = """
import numba

from . import dep
from treesens.search.kernel_cache import compiled_from

compiled_from(__file__, dep)


@numba.njit(cache=True)
def run():
    return dep.value() + dep.OFFSET
"""

DEP = """
import numba

OFFSET = {offset}


@numba.njit(cache=True, inline="always")
def value():
    return {value}
"""


def _run_kernel(root, cache) -> str:
    env = {**this_treesens_env(), "NUMBA_CACHE_DIR": str(cache)}
    env["PYTHONPATH"] = str(root) + ":" + env["PYTHONPATH"]
    code = "from kernpkg import kern; print(kern.run())"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _package(tmp_path, value: int, offset: int):
    pkg = tmp_path / "src" / "kernpkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kern.py").write_text(textwrap.dedent(KERNEL))
    (pkg / "dep.py").write_text(textwrap.dedent(DEP.format(value=value, offset=offset)))
    return tmp_path / "src"


def _index_times(cache) -> list[int]:
    return [p.stat().st_mtime_ns for p in sorted(cache.rglob("*.nbi"))]


def test_a_changed_function_a_kernel_compiles_in_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    root = _package(tmp_path, value=1, offset=0)
    assert _run_kernel(root, cache) == "1"
    _package(tmp_path, value=2, offset=0)
    assert _run_kernel(root, cache) == "2"


def test_an_unchanged_kernel_is_read_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    root = _package(tmp_path, value=3, offset=0)
    _run_kernel(root, cache)
    written = _index_times(cache)
    assert _run_kernel(root, cache) == "3"
    assert _index_times(cache) == written


def test_a_kernel_s_stamp_changes_with_a_constant_it_compiles_in(tmp_path):
    _package(tmp_path, value=1, offset=10)
    sys.path.insert(0, str(tmp_path / "src"))
    try:
        from kernpkg import dep  # noqa: PLC0415 - the package written just above

        kern = str(tmp_path / "src" / "kernpkg" / "kern.py")
        kernel_cache.compiled_from(kern, dep)
        before = kernel_cache.stamp(kern)
        assert kernel_cache.stamp(kern) == before
        _package(tmp_path, value=1, offset=20)
        assert kernel_cache.stamp(kern) != before
    finally:
        sys.path.remove(str(tmp_path / "src"))
        sys.modules.pop("kernpkg.dep", None)
        sys.modules.pop("kernpkg", None)
