"""The .sens grammar: every rule accepted (with the AST it gives) and rejected.

Parsing needs no model: these tests use ``parse`` on text only.
"""

from __future__ import annotations

import math

import pytest

from treesens.language import (
    ANY,
    Backend,
    Baseline,
    Bool,
    BoundsFromData,
    Classes,
    Compare,
    DataAware,
    DataDecl,
    Defaults,
    DetailsDecl,
    FeatureDecl,
    FeatureSet,
    Fix,
    GapSetting,
    InRange,
    ModelDecl,
    Name,
    Num,
    OptionSetting,
    Passes,
    QueryBlock,
    Ref,
    Seed,
    SensError,
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
    format_sens,
    parse,
)

HEAD = 'model "m.json"\n'


def body(stmts: str):
    """The statements of one query block."""
    ast = parse(HEAD + "query q {\n" + stmts + "\n}\n", "t.sens")
    blk = ast.items[-1]
    assert isinstance(blk, QueryBlock)
    return blk.body


def one(stmt: str, vary: str = "vary a"):
    b = body(vary + "\n" + stmt)
    return b[-1]


def N(*names):
    return tuple(Name(n) for n in names)


# ---------------------------------------------------------------------------------------
# accepted
# ---------------------------------------------------------------------------------------


def test_model_with_format_and_base_score():
    ast = parse('model "dir/m.json" format xgboost-dump base_score 0.3\nquery q { vary a }')
    assert ast.items[0] == ModelDecl(ast.items[0].path, "xgboost-dump", 0.3)
    assert ast.items[0].path.value == "dir/m.json"


def test_data_features_and_declarations():
    ast = parse(
        HEAD + 'data "train.csv" label income\nfeatures from "details.csv"\n'
        "feature age: integer in [17, 90]\nfeature sex: binary\n"
        'feature workclass: categorical {"Private", State-gov, "Self emp"}\n'
        'feature "fixed acidity" in [0, 1.5]\nfeature hours: real\nquery q { vary age }'
    )
    it = ast.items
    assert (
        isinstance(it[1], DataDecl) and it[1].path.value == "train.csv" and it[1].label == "income"
    )
    assert isinstance(it[2], DetailsDecl) and it[2].path.value == "details.csv"
    assert it[3] == FeatureDecl(Name("age"), "integer", 17.0, 90.0, None)
    assert it[4] == FeatureDecl(Name("sex"), "binary")
    assert it[5] == FeatureDecl(
        Name("workclass"), "categorical", None, None, ("Private", "State-gov", "Self emp")
    )
    assert it[6] == FeatureDecl(Name("fixed acidity"), None, 0.0, 1.5)
    assert it[7] == FeatureDecl(Name("hours"), "real")


def test_bounds_from_data_is_a_statement_of_the_file():
    ast = parse(HEAD + 'data "train.csv"\nbounds from data\nquery q { vary a }')
    assert ast.items[2] == BoundsFromData()


def test_data_without_label():
    ast = parse(HEAD + 'data "train.csv"\nquery q { vary a }')
    assert ast.items[1].label is None


def test_defaults_query_sweep_blocks():
    ast = parse(HEAD + "defaults { gap 0.1 }\nquery q { vary a }\nsweep s { vary each feature }")
    assert isinstance(ast.items[1], Defaults) and ast.items[1].body == (GapSetting(0.1, "prob"),)
    assert isinstance(ast.items[2], QueryBlock) and ast.items[2].name == Name("q")
    assert isinstance(ast.items[3], SweepBlock) and ast.items[3].body == (VaryEachFeature(),)


def test_quoted_block_names():
    ast = parse(HEAD + 'query "my query" { vary a }')
    assert ast.items[1].name == Name("my query")


@pytest.mark.parametrize(
    "text, node",
    [
        ("vary a", Vary(N("a"))),
        ('vary a, b-c, "d e"', Vary(N("a", "b-c", "d e"))),
        ("vary all", VaryAll()),
        ('vary "all"', Vary(N("all"))),
        ("vary gap", Vary(N("gap"))),  # a keyword where only a name can stand is a name
        ("vary x1", Vary(N("x1"))),
        ("vary education-num", Vary(N("education-num"))),
    ],
)
def test_vary_in_query(text, node):
    assert body(text)[0] == node


@pytest.mark.parametrize(
    "text, node",
    [
        ("vary each feature", VaryEachFeature()),
        ("vary each of a, b", VaryEachOf(N("a", "b"))),
        ("vary each of a, {b, c}", VaryEachOf((Name("a"), FeatureSet(N("b", "c"))))),
        ("vary subsets of 2", VarySubsets(2)),
        ("vary subsets of 2 from a, b, c", VarySubsets(2, N("a", "b", "c"))),
        ("vary subsets of 3 sample 10", VarySubsets(3, None, 10)),
        ("vary subsets of 1 from a, b sample 1", VarySubsets(1, N("a", "b"), 1)),
    ],
)
def test_vary_in_sweep(text, node):
    ast = parse(HEAD + "sweep s {\n" + text + "\n}")
    assert ast.items[1].body == (node,)


@pytest.mark.parametrize(
    "text, node",
    [
        ("gap 0.2", GapSetting(0.2, "prob")),
        ("gap .25", GapSetting(0.25, "prob")),
        ("gap 1.5", GapSetting(1.5, "prob")),
        ("gap 2e-1", GapSetting(0.2, "prob")),
        ("gap margin 0.8", GapSetting(0.8, "margin")),
        ("classes 2 -> 3", Classes(2, 3)),
        ("classes 2 -> any", Classes(2, ANY)),
        ("classes any -> 1", Classes(ANY, 1)),
        ("classes any -> any", Classes(ANY, ANY)),
        ("backend cpsat", Backend(("cpsat",))),
        ("backend cpsat, highs", Backend(("cpsat", "highs"))),
        ("backend race:cpsat+highs", Backend(("race:cpsat+highs",))),
        ("backend cpsat, race:cpsat+highs", Backend(("cpsat", "race:cpsat+highs"))),
        ("timeout 30", Timeout(30.0)),
        ("timeout 30s", Timeout(30.0)),
        ("timeout 2m", Timeout(120.0)),
        ("timeout 1.5h", Timeout(5400.0)),
        ("timeout 500ms", Timeout(0.5)),
        ("timeout 1e3", Timeout(1000.0)),  # a number as the CLI's --timeout takes it
        ("timeout 1.5e1s", Timeout(15.0)),
        ("threads 2", Threads(2)),
        ("seed 7", Seed(7)),
        ("passes ordering, unaff", Passes(("ordering", "unaff"))),
        ("passes -obj", Passes(("-obj",))),
        ("passes none", Passes(("none",))),
        ("passes all", Passes(("all",))),
        ("baseline kant", Baseline("kant")),
        ("data_aware prob", DataAware("prob")),
        ("data_aware prob+clause", DataAware("probclause")),
        ("data_aware none", DataAware("none")),
        ("option heuristic = false", OptionSetting("heuristic", Bool(False))),
        ('option label = "y"', OptionSetting("label", Text("y"))),
        ("option solver = fast", OptionSetting("solver", Word("fast"))),
        ("option budget = 3.5", OptionSetting("budget", Num(3.5))),
    ],
)
def test_settings(text, node):
    assert one(text) == node


def test_data_aware_params():
    got = one('data_aware probclause clause_width = 2, max_clauses = 50, clauses = "c.json"')
    assert got.mode == "probclause"
    assert [(p.name, p.value) for p in got.params] == [
        ("clause_width", Num(2.0)),
        ("max_clauses", Num(50.0)),
        ("clauses", Text("c.json")),
    ]


def R(name, copy=None):
    return Ref(Name(name), copy)


@pytest.mark.parametrize(
    "text, items",
    [
        ("where x1.age <= x2.age", (Compare((R("age", 1), R("age", 2)), ("<=",)),)),
        ("where x1.age<x2.age", (Compare((R("age", 1), R("age", 2)), ("<",)),)),
        ("where x2.age >= x1.age", (Compare((R("age", 2), R("age", 1)), (">=",)),)),
        ("where x1.age > x2.age", (Compare((R("age", 1), R("age", 2)), (">",)),)),
        ("where x1.age == x2.age", (Compare((R("age", 1), R("age", 2)), ("==",)),)),
        ("where x1.age == 30", (Compare((R("age", 1), Num(30.0)), ("==",)),)),
        ("where age <= 0.5", (Compare((R("age"), Num(0.5)), ("<=",)),)),
        ("where 0.2 <= x1.age <= 0.4", (Compare((Num(0.2), R("age", 1), Num(0.4)), ("<=", "<=")),)),
        ("where age in [0.2, 0.5]", (InRange(R("age"), Num(0.2), Num(0.5)),)),
        ("where x2.age in [-inf, 3]", (InRange(R("age", 2), Num(-math.inf), Num(3.0)),)),
        ('where x1."fixed acidity" > 7', (Compare((R("fixed acidity", 1), Num(7.0)), (">",)),)),
        ('where workclass == "Private"', (Compare((R("workclass"), Text("Private")), ("==",)),)),
        ("where sex == true", (Compare((R("sex"), Bool(True)), ("==",)),)),
        (
            "where x1.a <= x2.a and b in [0, 1] and x1.c > -2.5",
            (
                Compare((R("a", 1), R("a", 2)), ("<=",)),
                InRange(R("b"), Num(0.0), Num(1.0)),
                Compare((R("c", 1), Num(-2.5)), (">",)),
            ),
        ),
    ],
)
def test_where(text, items):
    assert one(text) == Where(items)


@pytest.mark.parametrize(
    "text, node",
    [
        ("fix age = 30", Fix(R("age"), Num(30.0))),
        ("fix x1.age = 30", Fix(R("age", 1), Num(30.0))),
        ('fix workclass = "Private"', Fix(R("workclass"), Text("Private"))),
        ("fix workclass = Private", Fix(R("workclass"), Word("Private"))),
        ("fix sex = false", Fix(R("sex"), Bool(False))),
        ('fix "native country" = 3', Fix(R("native country"), Num(3.0))),
    ],
)
def test_fix(text, node):
    assert one(text) == node


def test_free_layout_and_comments():
    a = parse(HEAD + "query q { vary a gap 0.2 timeout 10 }  # trailing\n# alone\n")
    b = parse(HEAD + "# top\nquery q {\n  vary a  # why\n  gap 0.2\n  timeout 10s\n}\n")
    assert a == b
    assert [c.text for c in b.comments] == ["# top", "# why"]


def test_hash_inside_string_is_not_a_comment():
    ast = parse('model "a#b.json"\nquery q { vary a }')
    assert ast.items[0].path.value == "a#b.json" and not ast.comments


def test_string_escapes():
    ast = parse('model "a\\"b.json"\nquery q { vary "x\\\\y" }')
    assert ast.items[0].path.value == 'a"b.json'
    assert ast.items[1].body[0] == Vary(N("x\\y"))


def test_format_round_trip_of_every_rule():
    text = (
        HEAD
        + 'data "t.csv" label "label"\nbounds from data\nfeatures from "d.csv"\n'
        + "feature age: integer in [17, 90]\n"
        'feature w: categorical {"a b", c}\nfeature "all": real\n'
        "defaults { gap 0.1 timeout 1m backend cpsat, highs passes -obj option heuristic = false }\n"
        'query "q 1" { vary age, "all" gap margin 0.5 classes 1 -> any threads 2 seed 3 baseline kant\n'
        '  where x1.age <= x2.age and 0.2 <= x1.age < 0.5 and w == "a b" and age in [-inf, inf]\n'
        "  fix x2.age = 30 fix w = c data_aware prob+clause clause_width = 2 }\n"
        "sweep s { vary subsets of 2 from age, w sample 1 }\nsweep t { vary each of age, {w, age} }\n"
        "sweep u { vary each feature } # end\n"
    )
    a = parse(text)
    f = format_sens(a)
    b = parse(f)
    assert a == b
    assert format_sens(b) == f  # idempotent
    assert "# end" in f


def test_format_writes_a_race_in_a_backend_list_bare():
    a = parse(HEAD + "query q { vary a backend cpsat, race:cpsat+highs }")
    assert "  backend cpsat, race:cpsat+highs\n" in format_sens(a)


def test_format_layout():
    a = parse(HEAD + "query q { vary a gap 0.20 where x1.a<=x2.a timeout 90 }")
    assert format_sens(a) == (
        'model "m.json"\n\nquery q {\n  vary a\n  gap 0.2\n  where x1.a <= x2.a\n  timeout 90s\n}\n'
    )


# ---------------------------------------------------------------------------------------
# rejected
# ---------------------------------------------------------------------------------------


def err(text: str) -> SensError:
    with pytest.raises(SensError) as e:
        parse(text, "t.sens")
    return e.value


@pytest.mark.parametrize(
    "text, message",
    [
        # structure
        ("query q { vary a }", 'no model: add a line  model "path/to/model.json"'),
        (HEAD, "no query: add a block  query NAME { vary FEATURE }"),
        (
            HEAD + HEAD + "query q { vary a }",
            "a second 'model' statement (the first is at line 1); a file has at most one",
        ),
        (HEAD + 'data "a"\ndata "b"\nquery q { vary a }', "a second 'data' statement"),
        (HEAD + "defaults { }\ndefaults { }\nquery q { vary a }", "a second 'defaults' statement"),
        (HEAD + "query q { vary a }\nquery q { vary b }", "a second block named 'q'"),
        (HEAD + "query q { gap 0.1 }", "query 'q' has no 'vary' (vary FEATURE[, FEATURE...])"),
        (HEAD + "sweep s { gap 0.1 }", "sweep 's' has no 'vary' (vary each feature)"),
        (HEAD + "query q { vary a vary b }", "a second 'vary' in this query"),
        (
            HEAD + "defaults { vary a }\nquery q { vary a }",
            "'vary' belongs in a query or a sweep, not in defaults",
        ),
        (
            HEAD + "query q { vary each feature }",
            "'vary each ...' makes several queries: write it in a sweep block",
        ),
        (HEAD + "query q { vary subsets of 2 }", "'vary subsets ...' makes several queries"),
        (HEAD + "sweep s { vary a }", "a sweep varies 'each feature'"),
        (HEAD + "query q { vary a, a }", "feature 'a' listed twice"),
        (HEAD + "sweep s { vary subsets of 0 }", "subsets of 0 features: k must be at least 1"),
        (
            HEAD + "sweep s { vary subsets of 3 from a, b }",
            "subsets of 3 from a list of 2 features: there are none",
        ),
        (HEAD + "sweep s { vary subsets of 1 sample 0 }", "sample must be at least 1"),
        # settings
        (HEAD + "query q { vary a gap 0.1 gap 0.2 }", "'gap' is set twice in this query"),
        (HEAD + "query q { vary a passes -obj baseline kant }", "'passes' is set twice"),
        (HEAD + "query q { vary a gap inf }", "gap inf is not a finite number"),
        (HEAD + "query q { vary a gap -0.1 }", "gap -0.1 must be >= 0"),
        (HEAD + "query q { vary a classes 1 -> 1 }", "classes must differ (got 1 twice)"),
        (
            HEAD + "query q { vary a backend cpsta }",
            "unknown backend 'cpsta' (did you mean 'cpsat'?)",
        ),
        (HEAD + "query q { vary a backend cbc, cbc }", "backend 'cbc' listed twice"),
        (
            HEAD + "query q { vary a backend race:cpsat, highs }",
            "'race:cpsat' races one backend, and the commas separate the backends listed: "
            "join a race's backends by '+' (race:cpsat+highs)",
        ),
        (
            HEAD + "query q { vary a backend race:cpsta+highs }",
            "unknown backend 'cpsta' in the race (did you mean 'cpsat'?)",
        ),
        (HEAD + "query q { vary a backend race: }", "'race:' names no backend to race"),
        (HEAD + "query q { vary a timeout 0 }", "timeout takes a number of seconds above 0"),
        # 2e9 was "unexpected number 2e9; expected a duration": now too large, with its limit
        (HEAD + "query q { vary a timeout 2e9 }", "and at most 1e+09 (about 31 years"),
        (HEAD + "query q { vary a threads 0 }", "threads takes a whole number from 1 to 1024"),
        (HEAD + "query q { vary a passes ordering, fast }", "unknown pass 'fast'"),
        (HEAD + "query q { vary a baseline veritas }", "unknown baseline 'veritas' (known: kant)"),
        (
            HEAD + "query q { vary a data_aware probclaus }",
            "unknown data-aware mode 'probclaus' (did you mean",
        ),
        (
            HEAD + "query q { vary a data_aware clause clause_width = 2, clause_width = 3 }",
            "parameter 'clause_width' given twice",
        ),
        (
            HEAD + "query q { vary a data_aware clause width = 2 }",
            "unknown data-aware parameter 'width' (did you mean",
        ),
        (
            HEAD + "query q { vary a option x = 1 option x = 2 }",
            "option 'x' is set twice in this query",
        ),
        # declarations
        (
            HEAD + "feature a: binary\nfeature a: real\nquery q { vary a }",
            "feature 'a' declared twice",
        ),
        (
            HEAD + "feature a in [2, 1]\nquery q { vary a }",
            "feature 'a': lower bound 2 is above upper bound 1",
        ),
        (
            HEAD + "feature a: real {x, y}\nquery q { vary a }",
            "feature 'a': only a categorical feature has category names",
        ),
        (
            HEAD + "feature a: categorical {x, x}\nquery q { vary a }",
            "feature 'a': category 'x' listed twice",
        ),
        (HEAD + "feature a: binary in [2, 3]\nquery q { vary a }", "a binary feature takes 0 or 1"),
        (HEAD + 'model "m.json" base_score 1.5\nquery q { vary a }', "a second 'model'"),
        (
            HEAD + "bounds from data\nbounds from data\nquery q { vary a }",
            "a second 'bounds from data' statement",
        ),
        (
            'model "m.json" base_score 1.5\nquery q { vary a }',
            "base_score 1.5 must be a probability in (0, 1)",
        ),
        # constraints
        (
            HEAD + "query q { vary all, a }",
            "'vary all' varies every feature and takes no list; a feature named all is quoted",
        ),
        (HEAD + "query q { vary a where 1 < 2 }", "this compares two values (1 < 2)"),
        (
            HEAD + "query q { vary a where inf <= 3 }",
            "one side must be a feature (x1.NAME, x2.NAME or NAME); a feature named inf is "
            'quoted: "inf"',
        ),
        (
            HEAD + "query q { vary a where true == 1 }",
            'a feature named true is quoted: "true"',
        ),
        (HEAD + "query q { vary a where b <= nan }", "nan: a comparison with NaN holds for no"),
        (HEAD + "query q { vary a where x1.a <= x1.a }", "this relation compares x1 with itself"),
        (
            HEAD + "query q { vary a where a <= x2.a }",
            "a relation compares x1 with x2: write x1.a <= x2.a",
        ),
        (HEAD + "query q { vary a where a in [3, 1] }", "empty range [3, 1]"),
    ],
)
def test_rejected_structure(text, message):
    e = err(text)
    assert message in e.message, e.message


@pytest.mark.parametrize(
    "text, message",
    [
        (
            HEAD + "query q { vary a",
            "unclosed block: the '{' of query q is never closed (missing '}')",
        ),
        (
            HEAD + "defaults {\n gap 0.1\n",
            "unclosed block: the '{' of defaults block is never closed (missing '}')",
        ),
        (
            HEAD + "query q { vary a gap 0.1\nquery r { vary b }",
            "unexpected 'query' inside the query q opened at line 2",
        ),
        (HEAD + "query q { vary a }\n}", "'}' without a matching '{'"),
        # was "unexpected '%'; expected 'backend', ..."
        (HEAD + "query q { vary a gap 20% }", "unexpected '%': 20% is written 0.2"),
        (
            HEAD + "query q { vary a gap = 0.1 }",
            "unexpected '='; expected 'above', 'delta', 'margin', 'max', a number",
        ),
        (HEAD + "query q { vary a ; }", "unexpected character ';'"),
        (HEAD + "query q { vary a timeout 5x }", "unexpected '5x'; expected a duration"),
        (HEAD + "query q { vary a threads -1 }", "expected a whole number (0, 1, 2, ...)"),
        (
            'model "m.json\nquery q { vary a }',
            "unterminated string (a quoted string ends on the same line)",
        ),
        (HEAD + "query q { vary a classes 1 2 }", "unexpected number 2; expected '->'"),
        (HEAD + "query q { vary 3 }", "unexpected number 3: a .sens file names its features"),
        (
            HEAD + "query q { vary a where x3.a < 1 }",
            "unknown input 'x3': the two inputs are x1 and x2",
        ),
        (HEAD + "query q { vary a timeout 10 minutes }", "unexpected"),
        (HEAD + "query q { vary a where a = 1 }", "unexpected '='"),
        (
            HEAD + "query q { vary a where x1.a =! x2.a }",
            "expected 'in', a comparison (<=, <, >=, >, ==, !=)",
        ),
        (HEAD + "feature a: bool\nquery q { vary a }", "unexpected 'bool'; expected a kind"),
        (HEAD + "query { vary a }", "unexpected '{'; expected"),
        (HEAD + "query q { vary a fix a == 1 }", "unexpected '=='; expected '='"),
        (
            HEAD + "query q { vary a backend race:cpsat + highs }",
            "a race is written without spaces, its backends joined by '+' (race:cpsat+highs)",
        ),
        (
            HEAD + "query q { vary a backend race: cpsat+highs }",
            "a race is written without spaces, its backends joined by '+' (race:cpsat+highs)",
        ),
        (
            HEAD + "query q { vary a backend race:cpsat timout 5s }",
            "unexpected 'timout' (did you mean 'timeout'?)",
        ),
        # after a complete statement: the next statement's keywords or the block's end,
        # nothing that cannot follow there (not '%', ',' or ']' of other rules)
        (
            HEAD + "query q { vary a gap 0.2 foo }",
            "unexpected 'foo'; expected 'backend', 'baseline', 'budget', 'by', 'classes', "
            "'data', 'data_aware', ..., '}'",
        ),
        (
            HEAD + "query q { vary a, b c }",
            "unexpected 'c' after 'b': a name with a space in it is quoted (\"b c\"), and the "
            "names of a list are separated by ','",
        ),
        (
            HEAD + "query q { vary a } foo",
            "unexpected 'foo'; expected 'audit', 'bounds', 'data', 'defaults', 'feature', "
            "'features', 'group', ..., end of file",
        ),
        (HEAD + "model", "unexpected end of file; expected"),
        (HEAD + "query q { vary }", "unexpected '}'"),
    ],
)
def test_rejected_syntax(text, message):
    e = err(text)
    assert message in e.message, e.message


@pytest.mark.parametrize(
    "text, guess",
    [
        (HEAD + "query q {\n  vary a\n  timout 5s\n}\n", "'timout' (did you mean 'timeout'?)"),
        (HEAD + "query q {\n  varry a\n}\n", "'varry' (did you mean 'vary'?)"),
        ('modle "m.json"\nquery q { vary a }', "'modle' (did you mean 'model'?)"),
    ],
)
def test_a_misspelt_keyword_gets_the_closest_keyword_expected_there(text, guess):
    assert f"unexpected {guess}; expected " in err(text).message


def test_a_word_close_to_no_keyword_gets_no_guess():
    assert "did you mean" not in err(HEAD + "query q {\n  vary a\n  foo bar\n}\n").message


def test_a_bare_name_with_a_letter_outside_ascii_says_to_quote_it_at_its_start():
    e = err(HEAD + "query q {\n  vary r\u00e9gion\n}\n")
    assert "the name 'r\u00e9gion' holds a letter outside ASCII" in e.message
    assert 'write it quoted, "r\u00e9gion"' in e.message
    assert str(e).splitlines()[0].startswith("t.sens:3:8: ")


def test_error_text_is_file_line_col_then_line_then_caret():
    e = err(HEAD + "query q {\n  vary a\n  gap = 0.1\n}\n")
    assert str(e).splitlines() == [
        "t.sens:4:7: unexpected '='; expected 'above', 'delta', 'margin', 'max', a number",
        "  gap = 0.1",
        "      ^",
    ]
    assert (e.line, e.column) == (4, 7)


def test_caret_under_tab_indented_text():
    e = err(HEAD + "query q {\n\tvary a\n\tgap = 0.1\n}\n")
    assert str(e).splitlines()[1:] == ["\tgap = 0.1", "\t    ^"]
