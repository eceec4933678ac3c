"""Another model or data for a parsed ``.sens`` file: what ``treesens test --model M
--data D`` runs the file's contract on (each newly trained model against one file)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .ast import DataDecl, Given, ModelDecl, SensAST, Str


def with_inputs(
    ast: SensAST, model: str | Path | None, data: str | Path | None, trust_pickle: bool = False
) -> SensAST:
    """``ast`` with its model line naming ``model`` (its format options kept), trusting a
    pickle where ``trust_pickle``, and its data line naming ``data`` (its label kept; a
    data line added when it has none). Relative paths are taken from the current
    directory, as on a command line."""
    items = list(ast.items)
    i = next((i for i, it in enumerate(items) if isinstance(it, ModelDecl)), None)
    if model is not None and i is not None:
        items[i] = replace(items[i], path=_path(model, items[i].path, "--model"))
    if trust_pickle and i is not None:
        items[i] = replace(items[i], trust_pickle=True)
    if data is not None:
        i = next((i for i, it in enumerate(items) if isinstance(it, DataDecl)), None)
        if i is None:  # after the model line
            i = next(i for i, it in enumerate(items) if isinstance(it, ModelDecl)) + 1
            items.insert(i, DataDecl(_path(data, None, "--data")))
        else:
            items[i] = replace(items[i], path=_path(data, items[i].path, "--data"))
    return replace(ast, items=tuple(items))


def _path(p: str | Path, was: Str | None, flag: str) -> Given:
    """An absolute path, given by ``flag`` where the file's own path was: errors about it
    name the flag."""
    pos = was.pos if was is not None else None
    return Given(str(Path(p).expanduser().resolve()), pos=pos, flag=flag)
