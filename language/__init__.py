"""The ``.sens`` query language: parse, check, format and run query files.

    text --parse (lark, language/sens.lark)--> SensAST --check--> (no model needed)
         --resolve (model, data, declarations)--> SensFile of Query objects --run--> Results

Every query of a file ends as the same ``compiler.query.Query`` that ``treesens check``
flags and the Python API build (through ``questions.query_build.make_query``). Errors are
``SensError``: ``FILE:LINE:COL: message``, then the offending line, then a caret.
The language is documented in docs/language.md.

Modules: errors (SensError), ast (the node dataclasses), sens.lark (the grammar) and
grammar (its lark parser and the keywords read from it), parse (text -> AST), check
(structure and settings), show (how names and values are written), fmt (the formatter),
inputs (another model or data for a parsed file: ``treesens test --model M``), build (a
block's Query objects), resolve (AST -> SensFile), expectations (the ``expect`` statements),
audit_block (audit blocks: their plans, run by questions/audit_run.py). Running a file
is interfaces/sens_run.py's.
"""

from ..compiler.options import DATA_AWARE_PARAMS, MODE_NAMES
from ..compiler.query import ANY
from .ast import (
    AuditBlock,
    Backend,
    Baseline,
    Bool,
    BoundsFromData,
    Budget,
    Classes,
    Comment,
    Compare,
    DataAware,
    DataDecl,
    Defaults,
    DetailsDecl,
    Expect,
    FeatureDecl,
    FeatureSet,
    Fix,
    GapSetting,
    GroupDecl,
    GroupsInfer,
    GroupsNone,
    InRange,
    Jobs,
    KindSetting,
    ModelDecl,
    Name,
    Node,
    Num,
    OptionSetting,
    Param,
    Passes,
    PluginDecl,
    Pos,
    QueryBlock,
    Ref,
    Seed,
    SensAST,
    Str,
    SweepBlock,
    Text,
    Threads,
    Timeout,
    Vary,
    VaryAll,
    VaryEachFeature,
    VaryEachOf,
    VarySubsets,
    Where,
    Word,
    Work,
)
from .errors import CONTEXT_WIDTH, SensError
from .fmt import format_sens
from .grammar import KEYWORDS
from .parse import parse, parse_file
from .resolve import SensFile, load_queries, resolve

DATA_AWARE_MODES = MODE_NAMES

__all__ = [
    "AuditBlock",
    "ANY",
    "CONTEXT_WIDTH",
    "DATA_AWARE_MODES",
    "DATA_AWARE_PARAMS",
    "KEYWORDS",
    "Backend",
    "Baseline",
    "Bool",
    "BoundsFromData",
    "Budget",
    "Classes",
    "Comment",
    "Compare",
    "DataAware",
    "DataDecl",
    "Defaults",
    "DetailsDecl",
    "Expect",
    "FeatureDecl",
    "GroupDecl",
    "GroupsInfer",
    "GroupsNone",
    "FeatureSet",
    "Fix",
    "GapSetting",
    "InRange",
    "Jobs",
    "KindSetting",
    "ModelDecl",
    "Name",
    "Node",
    "Num",
    "OptionSetting",
    "Param",
    "Passes",
    "PluginDecl",
    "Pos",
    "QueryBlock",
    "Ref",
    "Seed",
    "SensAST",
    "SensError",
    "SensFile",
    "Str",
    "SweepBlock",
    "Text",
    "Threads",
    "Timeout",
    "Vary",
    "VaryAll",
    "VaryEachFeature",
    "VaryEachOf",
    "VarySubsets",
    "Where",
    "Word",
    "Work",
    "format_sens",
    "load_queries",
    "parse",
    "parse_file",
    "resolve",
]
