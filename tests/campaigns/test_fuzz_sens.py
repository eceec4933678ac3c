"""Fuzzing the .sens parser: any text parses or raises a located SensError, never a traceback.

Inputs are the ``examples/*.sens`` and ``bench/examples/*.sens`` files, mutated (characters and tokens deleted,
inserted, replaced; lines swapped; truncated; random unicode), and random statements and
token sequences made from the grammar's own words. Every input is parsed, formatted (what
``treesens fmt`` prints must read back as the same file) and resolved against the models
shipped in ``examples/`` (copied beside the fuzzed file). Paths into ``../shared`` resolve
to nowhere, so nothing here needs ``../shared``: a missing model is the located "model file
not found". No query is run.

Budget: a quick, deterministic run by default (CI); ``TS_FUZZ_EXAMPLES=N`` sets the number
of examples of every fuzzer for a longer campaign (docs/reliability.md).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treesens import language as sens
from treesens.compiler.errors import InputError
from treesens.language import SensError
from treesens.tests.fuzzing import event, fuzz_settings

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SENS_FILES = sorted([*EXAMPLES.glob("*.sens"), *(REPO / "bench" / "examples").glob("*.sens")])
SHIPPED = (
    "breast_cancer_xgb.json",
    "breast_cancer_details.csv",
    "wine_xgb.json",
    "wine_details.csv",
    "diabetes_lgbm.txt",
    "diabetes_details.csv",
    "diabetes.csv",
    "iris_lgbm.txt",
    "iris_details.csv",
)
FILENAME = "fuzz.sens"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    if not SENS_FILES:
        pytest.skip("no examples/*.sens files")
    return [p.read_text(encoding="utf-8") for p in SENS_FILES]


@pytest.fixture(scope="module")
def runnable(texts) -> list[str]:
    """The examples whose model ships with treesens (they resolve all the way)."""
    return [t for t in texts if any(f'"{name}"' in t for name in SHIPPED)]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A folder holding the shipped example models, where fuzzed files are resolved."""
    # three levels down, so that "../../../shared/..." (bench/examples' paths) stays inside it
    d = tmp_path_factory.mktemp("sens_fuzz") / "a" / "b" / "c"
    d.mkdir(parents=True)
    for name in SHIPPED:
        if (EXAMPLES / name).exists():
            shutil.copy(EXAMPLES / name, d / name)
    return d


# ---------------------------------------------------------------------------------------
# the check every fuzzer makes


_LOCATED = re.compile(r"^(?P<file>.+):(?P<line>\d+):(?P<col>\d+): \S")


def assert_located(e: SensError, filename: str, text: str) -> None:
    first = str(e).splitlines()[0]
    m = _LOCATED.match(first)
    assert m and m.group("file") == filename, f"not FILE:LINE:COL: message: {first!r}"
    line, col = int(m.group("line")), int(m.group("col"))
    assert (line, col) == (e.line, e.column)
    assert 1 <= line <= max(len(text.splitlines()), 1) + 1, first
    assert col >= 1, first


def parse_or_located_error(text: str, filename: str = FILENAME):
    """The SensAST, or None after checking the error is a located SensError."""
    try:
        ast = sens.parse(text, filename)
    except SensError as e:
        assert_located(e, filename, text)
        event("syntax or structure error")
        return None
    # what `treesens fmt` prints must be UTF-8 text that reads back as the same file
    out = sens.format_sens(ast)
    out.encode("utf-8")
    assert sens.parse(out, filename) == ast, out
    return ast


def check_text(text: str, folder: Path) -> None:
    """Parse (and format) the text, then resolve it as a file beside the shipped models."""
    if parse_or_located_error(text) is None:
        return
    path = folder / FILENAME
    path.write_text(text, encoding="utf-8")
    try:
        sf = sens.load_queries(path)
    except SensError as e:
        assert_located(e, str(path), text)
        event("error when resolved: " + e.message.split(":")[0][:30])
        return
    event(f"resolved ({min(len(sf.queries), 2)}+ queries)")


# ---------------------------------------------------------------------------------------
# mutations of the shipped examples

TOKEN_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|x[12]\.|[A-Za-z_][\w-]*|[-+]?[\d.]+\w*|->|[<>=]=|\S')

# words and pieces of the grammar (keywords, punctuation, values of every token kind)
WORDS = sorted(sens.KEYWORDS) + [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "=",
    "->",
    "<=",
    "<",
    ">=",
    ">",
    "==",
    "!=",
    "x1.",
    "x2.",
    "x3.",
    "mean_texture",
    "mean_radius",
    "worst_smoothness",
    "proline",
    "sex",
    "a-b",
    "f0",
    "_",
    "0",
    "1",
    "2",
    "3",
    "0.2",
    "-0.5",
    "1e999",
    "-inf",
    ".5",
    "99999999999999999999",
    "30s",
    "2m",
    "1h",
    "5ms",
    "0s",
    "prob",
    "clause",
    "probclause",
    "prob+clause",
    "clause_width",
    "ordering",
    "unaff",
    "-aff",
    "none",
    "kant",
    "cpsat",
    "race",
    '"breast_cancer_xgb.json"',
    '"breast_cancer_details.csv"',
    '"wine_xgb.json"',
    '"missing.json"',
    '"../../shared/benchmarks/adult/adult_t200_d5.json"',
    '"mean texture"',
    '""',
    '"\\q"',
    '"\\u0000"',
    '"\\ud800"',
    '"\\n"',
    '"é"',
    "#",
    "# a comment\n",
    "\n",
    "\t",
    "\r\n",
    "é",
    "\u00a0",
    "\ufeff",
    "\x00",
    ";",
    "'",
    '"',
    "\\",
]
_words = st.sampled_from(WORDS)
_seps = st.sampled_from([" ", " ", " ", "\n", "", "\t", "\n  "])
_unicode = st.text(min_size=1, max_size=4)


@st.composite
def mutated_example(draw, texts):
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(
            st.sampled_from(
                [
                    "delete",
                    "insert",
                    "replace",
                    "truncate",
                    "swap_lines",
                    "dup_line",
                    "delete_line",
                    "token_delete",
                    "token_replace",
                    "token_insert",
                    "unicode",
                ]
            )
        )
        n = len(text)
        i = draw(st.integers(0, n))
        if kind == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 8)) :]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from('{}[],:=<>-."#\\x12 \n\t0e+_')) + text[i:]
        elif kind == "replace":
            text = text[:i] + draw(st.characters()) + text[i + 1 :]
        elif kind == "truncate":
            text = text[:i]
        elif kind == "unicode":
            text = text[:i] + draw(_unicode) + text[i:]
        elif kind in ("swap_lines", "dup_line", "delete_line"):
            lines = text.split("\n")
            a = draw(st.integers(0, len(lines) - 1))
            b = draw(st.integers(0, len(lines) - 1))
            if kind == "swap_lines":
                lines[a], lines[b] = lines[b], lines[a]
            elif kind == "dup_line":
                lines.insert(b, lines[a])
            else:
                del lines[a]
            text = "\n".join(lines)
        else:
            toks = list(TOKEN_RE.finditer(text))
            if not toks:
                continue
            m = draw(st.sampled_from(toks))
            new = {
                "token_delete": "",
                "token_replace": draw(_words),
                "token_insert": m.group(0) + " " + draw(_words),
            }[kind]
            text = text[: m.start()] + new + text[m.end() :]
    return text


# ---------------------------------------------------------------------------------------
# random statements and token sequences from the grammar's words


def _join(*parts):
    return st.tuples(*parts).map(" ".join)


def _unique(items: list[str], key) -> list[str]:
    """The items with the first of each key (most statements may appear once per block)."""
    seen: set = set()
    return [x for x in items if not (key(x) in seen or seen.add(key(x)))]


def _mostly(good: list[str], bad: list[str]):
    """Mostly a good value, sometimes a bad one."""
    return st.one_of(st.sampled_from(good), st.sampled_from(good), st.sampled_from(bad))


_j = st.just
_odd_name = st.sampled_from(
    ['"mean texture"', '"vary"', "each", "all", "x1", "inf", "true", "nope"]
    + ['"\\ud800"', '"caf\\u00e9"', '"tab\\there"', '"a\\"b"', '"\\q"']
)
_num = _mostly(
    ["0", "1", "0.2", "0.3", "1.5", "2", "10", "15", "20", ".5", "0.49999", "-1"],
    ["inf", "-inf", "1e308", "1e999", "-0", "1e-320"],
)
_int = st.one_of(
    st.sampled_from(["1", "2", "3", "1", "2", "0"]),
    st.sampled_from(["30", "100000", "99999999999999999999"]),
)
_cmp = st.sampled_from(["<=", "<", ">=", ">", "=="])
_text_value = st.sampled_from(['"a"', '"mean_radius"', "true", "false", "word", '"../x.csv"'])
_value = st.one_of(_num, _num, _text_value)


def _grammar(names: list[str]):
    """Strategies for (query vary, sweep vary, settings, declarations) over these names."""
    name = st.one_of(*[st.sampled_from(names)] * 5, _odd_name)
    ref = st.one_of(
        name, _join(st.sampled_from(["x1.", "x2."]), name).map(lambda s: s.replace(" ", ""))
    )
    name_list = st.lists(name, min_size=1, max_size=3).map(", ".join)
    operand = st.one_of(ref, ref, _num, st.sampled_from(['"a"', "true"]))
    query_vary = st.one_of(_join(_j("vary"), name_list), _j("vary all"))
    sweep_vary = st.one_of(
        _j("vary each feature"),
        _join(_j("vary each of"), name_list),
        _join(_j("vary each of"), name, _j(", {"), name_list, _j("}")),
        _join(_j("vary subsets of"), _int),
        _join(_j("vary subsets of"), _int, _j("from"), name_list, _j("sample"), _int),
    )
    setting = st.one_of(
        _join(_j("gap"), _num),
        _join(_j("gap margin"), _num),
        _join(_j("classes"), st.sampled_from(["0", "1", "2", "5", "any"]), _j("->"), _int),
        _join(_j("backend"), _mostly(["cpsat", "cbc, highs", "race"], ["cpsat, cpsat", "x"])),
        _join(_j("timeout"), _mostly(["30", "30s", "2m", "1h", "5ms", "2.5s"], ["0", "0s", "1e3"])),
        _join(_j("threads"), _int),
        _join(_j("jobs"), _int),
        _join(_j("budget"), _mostly(["30", "10m", "600s", "0.5s"], ["0", "0ms", "9" * 400])),
        _join(_j("seed"), _int),
        _join(_j("passes"), _mostly(["none", "ordering, unaff", "-aff"], ["bogus", "aff, aff"])),
        _join(_j("baseline"), _mostly(["kant", "KANT"], ["other"])),
        _join(_j("data_aware"), _mostly(["prob", "clause", "prob+clause", "off", "none"], ["zz"])),
        _join(
            _j("data_aware prob"),
            _mostly(["clause_width", "prob_alpha", "max_clauses", "clauses"], ["x"]),
            _j("="),
            _value,
        ),
        _join(_j("option"), name, _j("="), _value),
        _join(_j("where"), operand, _cmp, operand),
        _join(_j("where"), operand, _cmp, operand, _cmp, operand, _j("and"), ref, _cmp, _num),
        _join(_j("where"), ref, _j("in ["), _num, _j(","), _num, _j("]")),
        st.builds("where x1.{0} {1} x2.{0}".format, name, _cmp),
        _join(_j("fix"), ref, _j("="), _value),
    )
    settings_list = st.lists(setting, max_size=4).map(
        lambda xs: _unique(
            xs, lambda s: s if s.startswith(("where", "fix", "option")) else s.split()[0]
        )
    )
    kinds = st.sampled_from(["real", "integer", "binary", "categorical"])
    decl = st.one_of(
        _join(_j("feature"), name, _j(":"), kinds),
        _join(_j("feature"), name, _j(":"), kinds, _j("in ["), _num, _j(","), _num, _j("]")),
        _join(_j("feature"), name, _j(": categorical {"), name_list, _j("}")),
        _join(
            _j("data"),
            st.sampled_from(['"breast_cancer_details.csv"', '"wine_details.csv"', '"nope.csv"']),
            _j("label"),
            name,
        ),
    )
    decls = st.lists(decl, max_size=2).map(
        lambda xs: _unique(xs, lambda s: "data" if s.startswith("data") else s.split()[1])
    )
    return query_vary, sweep_vary, settings_list, decls


def _names_of(details: str) -> list[str]:
    path = EXAMPLES / details
    if not path.exists():
        return ["f0"]
    return [line.split(",")[1] for line in path.read_text().splitlines()[1:] if line.strip()]


BC, WINE = _names_of("breast_cancer_details.csv"), _names_of("wine_details.csv")
MODELS = [
    ('model "breast_cancer_xgb.json"\nfeatures from "breast_cancer_details.csv"', BC),
    ('model "wine_xgb.json"\nfeatures from "wine_details.csv"', WINE),
    ('model "breast_cancer_xgb.json" format xgboost base_score 0.3', [f"f{i}" for i in range(30)]),
    ('model "wine_xgb.json" format lightgbm', WINE),
    ('model "breast_cancer_details.csv"', BC),
    ('model "nope.json"', BC),
]
GRAMMARS = [_grammar(names) for _, names in MODELS]


@st.composite
def generated_file(draw):
    """A model, declarations, defaults, then query and sweep blocks of statements."""
    i = draw(st.sampled_from([0, 0, 0, 1, 1, 1, 2, 3, 4, 5]))
    query_vary, sweep_vary, settings_list, decls = GRAMMARS[i]
    parts = [MODELS[i][0]] + draw(decls)
    if draw(st.booleans()):
        parts.append("defaults {\n  " + "\n  ".join(draw(settings_list)) + "\n}")
    for k in range(draw(st.integers(1, 3))):
        sweep = draw(st.booleans())
        body = [draw(sweep_vary if sweep else query_vary)] + draw(settings_list)
        if MODELS[i][1] is WINE and draw(st.booleans()):  # multiclass: say the classes and gap
            body = [b for b in body if not b.startswith(("gap", "classes"))]
            body += ["classes 0 -> any", "gap 1.5"]
        head = f"sweep s{k}" if sweep else f"query q{k}"
        parts.append(head + " {\n  " + "\n  ".join(body) + "\n}")
    return "\n".join(parts) + "\n"


token_soup = st.lists(st.tuples(_words, _seps), max_size=40).map(
    lambda xs: "".join(w + s for w, s in xs)
)


# ---------------------------------------------------------------------------------------
# the fuzzers


@fuzz_settings(400)
@given(data=st.data())
def test_mutated_examples_parse_or_raise_a_located_error(texts, data):
    parse_or_located_error(data.draw(mutated_example(texts)))


@fuzz_settings(250)
@given(data=st.data())
def test_mutated_examples_resolve_or_raise_a_located_error(runnable, folder, data):
    check_text(data.draw(mutated_example(runnable)), folder)


@fuzz_settings(200)
@given(text=generated_file())
def test_generated_statements_resolve_or_raise_a_located_error(folder, text):
    check_text(text, folder)


@fuzz_settings(500)
@given(text=token_soup)
def test_random_token_sequences_parse_or_raise_a_located_error(text):
    parse_or_located_error(text)


@fuzz_settings(300)
@given(text=st.text(max_size=200))
def test_random_unicode_parses_or_raises_a_located_error(text):
    parse_or_located_error(text)


# ---------------------------------------------------------------------------------------
# plain checks


def test_every_shipped_example_parses():
    for p in SENS_FILES:
        assert sens.parse(p.read_text(encoding="utf-8"), p.name).items


def test_a_missing_model_is_a_located_error(folder):
    path = folder / "missing.sens"
    path.write_text('model "nope.json"\nquery q {\n  vary a\n}\n', encoding="utf-8")
    with pytest.raises(SensError, match=r"missing\.sens:1:7: model file not found"):
        sens.load_queries(path)


def test_every_shipped_example_resolves_or_is_a_located_error_without_shared(texts, folder):
    """Copied away from the repository, ../shared is not there: a clean located error."""
    for text in texts:
        check_text(text, folder)


def test_a_sample_of_more_queries_than_a_sweep_may_make_is_a_located_error(folder):
    # was: drawing 10^8 distinct subsets ran for ever (and filled the memory)
    text = 'model "breast_cancer_xgb.json"\nsweep s {\n  vary subsets of 15 sample 100000000\n}\n'
    with pytest.raises(SensError, match=r"fuzz.sens:3:3: sample 100000000 makes too many"):
        sens.parse(text, FILENAME)


def test_inf_as_a_parameter_value_is_read(folder):
    # was: OverflowError (int(inf)) while resolving the query
    path = folder / "inf.sens"
    path.write_text(
        'model "breast_cancer_xgb.json"\nfeatures from "breast_cancer_details.csv"\n'
        "query q0 {\n  vary mean_radius\n  option heuristic = inf\n}\n"
        "query q1 {\n  vary mean_radius\n  data_aware clause clause_width = inf\n}\n",
        encoding="utf-8",
    )
    with pytest.raises(
        SensError, match=r"inf.sens:9:36: clause_width takes a whole number of at least 1, not inf"
    ):
        sens.load_queries(path)
    text = path.read_text().replace("  data_aware clause clause_width = inf\n", "")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SensError, match=r"inf.sens:5:22: option 'heuristic' takes true or false"):
        sens.load_queries(path)


def test_fmt_of_a_string_with_an_unpaired_surrogate_is_a_located_error(folder, capsys):
    # was: `treesens fmt` failed printing it (internal error, UnicodeEncodeError)
    from treesens.interfaces.cli.main import main

    path = folder / "sur.sens"
    path.write_text('model "m.json"\ndata "d.csv" label "\\ud800"\nquery q {\n  vary a\n}\n')
    assert main(["fmt", str(path)]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert (
        first == f'{path}:2:20: cannot read this: the string "\\ud800" holds an unpaired surrogate'
    )


def test_a_bad_escape_is_located_at_its_string():
    # was: reported at 1:1
    with pytest.raises(SensError, match=r'^fuzz.sens:2:6: cannot read this: the string "a\\q"'):
        sens.parse('model "m.json"\ndata "a\\q"\nquery q {\n  vary a\n}\n', FILENAME)


def test_input_error_is_the_base_of_located_errors():
    assert issubclass(SensError, InputError)
