"""Plugins: a Python file (or an importable module) whose import registers query kinds,
model formats or backends (docs/extending.md). ``--plugin FILE`` on the command line, a
``.sens`` file's ``plugin "FILE"`` line and ``treesens.load_plugin`` load one; each is
imported once per process, and a campaign's workers import the same ones
(questions/ask.py)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from ..compiler.errors import InputError

_LOADED: dict[str, ModuleType] = {}  # the resolved file path or module name -> the module


def load_plugin(plugin: str | Path) -> ModuleType:
    """Import a plugin: a ``.py`` file (by its path) or a module name, once. A plugin that
    is missing or fails while it is imported is an InputError naming it."""
    text = str(plugin)
    is_file = text.endswith(".py") or Path(text).is_file()
    key = str(Path(text).resolve()) if is_file else text
    if key in _LOADED:
        return _LOADED[key]
    if Path(text).is_dir():
        raise InputError("is a directory, not a plugin (a .py file or a module name)", text)
    if is_file and not Path(key).is_file():
        raise InputError("no such plugin file", text)
    if is_file and not text.endswith(".py"):
        raise InputError("not a plugin: give a Python file ending in .py, or a module name", text)
    try:
        module = _import_file(Path(key)) if is_file else importlib.import_module(text)
    except ModuleNotFoundError as e:
        if not is_file and e.name == text:
            raise InputError("no such plugin module", text) from None
        raise InputError(f"the plugin failed to load: {type(e).__name__}: {e}", text) from None
    except Exception as e:  # noqa: BLE001 - a plugin's own failure, reported as one line
        raise InputError(f"the plugin failed to load: {type(e).__name__}: {e}", text) from None
    except SystemExit as e:  # the command ended silently with the plugin's exit code
        raise InputError(
            f"the plugin called sys.exit({e.code!r}) while it loaded: a plugin's import "
            "registers what it adds and returns",
            text,
        ) from None
    _LOADED[key] = module
    return module


def _import_file(path: Path) -> ModuleType:
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"treesens_plugin_{path.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def loaded_plugins() -> tuple[str, ...]:
    """The plugins this process has loaded (their files' paths, or module names)."""
    return tuple(_LOADED)
