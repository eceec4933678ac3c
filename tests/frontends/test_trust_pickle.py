"""Pickled models (.pkl, .joblib) run code while they load: treesens loads one only when
asked to trust it (``trust_pickle=True``, ``--trust-pickle``); skops files and fitted
in-memory estimators need no such trust."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from treesens.compiler.errors import InputError
from treesens.readers.load import load_model
from treesens.tests.conftest import treesens_here

ensemble = pytest.importorskip("sklearn.ensemble")

# a pickle that would run code while it loads: it must never be unpickled untrusted
_MARKER = "treesens_pickle_ran"


class _RunsCode:
    def __reduce__(self):
        return (exec, (f"import builtins; builtins.{_MARKER} = True",))


def _forest():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] > 0).astype(int)
    return ensemble.RandomForestClassifier(3, max_depth=3, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def pickle_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pkl") / "forest.pkl"
    path.write_bytes(pickle.dumps(_forest()))
    return path


@pytest.mark.parametrize("suffix", [".pkl", ".pickle", ".joblib"])
def test_pickle_file_is_refused_without_trust(tmp_path, suffix):
    path = tmp_path / f"m{suffix}"
    path.write_bytes(pickle.dumps(_forest()))
    with pytest.raises(InputError) as e:
        load_model(path)
    assert e.value.where == str(path)


def test_refusal_says_why_and_how_to_opt_in(pickle_file):
    with pytest.raises(InputError) as e:
        load_model(pickle_file)
    msg = str(e.value)
    assert str(pickle_file) in msg and "\n" not in msg
    assert "runs code" in msg
    for how in ("--trust-pickle", "trust_pickle=True", "trust_pickle in a .sens"):
        assert how in msg


def test_untrusted_pickle_is_never_unpickled(tmp_path):
    import builtins

    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(_RunsCode()))
    with pytest.raises(InputError, match="runs code"):
        load_model(path)
    assert not hasattr(builtins, _MARKER)


def test_explicit_sklearn_format_still_needs_trust(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(pickle.dumps(_forest()))
    with pytest.raises(InputError, match="trust_pickle"):
        load_model(path, format="sklearn")


def test_trusted_pickle_loads(pickle_file):
    ens = load_model(pickle_file, trust_pickle=True)
    assert ens.source.startswith("sklearn:")


def test_in_memory_estimator_needs_no_trust():
    assert load_model(_forest()).n_features == 4


def test_skops_file_loads_without_trust(tmp_path):
    sio = pytest.importorskip("skops.io")
    path = tmp_path / "forest.skops"
    sio.dump(_forest(), str(path))
    assert load_model(path).n_features == 4


def test_cli_refuses_a_pickle_with_exit_2_and_one_line(pickle_file):
    p = treesens_here("check", pickle_file, "--vary", "x0", "--gap", "0.2")
    assert p.returncode == 2
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in p.stderr
    assert len(lines) == 1, p.stderr
    assert str(pickle_file) in lines[0] and "--trust-pickle" in lines[0]


def test_cli_trust_pickle_loads_the_model(pickle_file):
    p = treesens_here(
        "check", pickle_file, "--vary", "x0", "--gap", "0.2", "--trust-pickle", "--json"
    )
    assert p.returncode == 0, p.stderr
    assert '"status"' in p.stdout


def _pipeline_file(tmp_path, func):
    """A skops file of a pipeline whose FunctionTransformer calls ``func``."""
    sio = pytest.importorskip("skops.io")
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = np.random.default_rng(0).uniform(size=(40, 2))
    pipe = make_pipeline(FunctionTransformer(np.log1p), RandomForestClassifier(2, random_state=0))
    pipe.fit(X, (X[:, 0] > 0.5).astype(int))
    pipe.steps[0][1].func = func
    path = tmp_path / "pipe.skops"
    sio.dump(pipe, path)
    return path


@pytest.mark.parametrize("func", [print, np.clip], ids=["builtins.print", "numpy.clip"])
def test_a_skops_file_naming_a_function_is_refused_before_loading(tmp_path, func):
    path = _pipeline_file(tmp_path, func)
    name = f"{func.__module__ or 'builtins'}.{func.__name__}"
    with pytest.raises(InputError, match=rf"does not trust .*{name}"):
        load_model(path)


def test_skops_names_trusted_are_classes_numpy_ufuncs_and_check_array():
    from treesens.readers.formats.skops_names import untrusted_names

    names = ["sklearn.tree._tree.Tree", "numpy.float64", "builtins.str", "numpy.log1p"]
    assert untrusted_names(names + ["sklearn.utils.validation.check_array"]) == []


def test_skops_names_of_functions_and_other_packages_are_not_trusted():
    from treesens.readers.formats.skops_names import untrusted_names

    names = ["builtins.exec", "builtins.open", "numpy.save", "sklearn.nope.X", "os.system"]
    assert untrusted_names(names) == names


@pytest.mark.parametrize("name", ["model.bin", "model.model", "model.json", "model.skops", "model"])
def test_a_pickle_under_another_suffix_is_refused_as_a_pickle(tmp_path, name):
    import builtins

    path = tmp_path / name
    path.write_bytes(pickle.dumps(_RunsCode()))
    with pytest.raises(InputError, match="runs code while it loads"):
        load_model(path)
    assert not hasattr(builtins, _MARKER)


def test_a_trusted_pickle_under_another_suffix_loads(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(pickle.dumps(_forest()))
    assert len(load_model(path, trust_pickle=True).trees) == 3


@pytest.mark.parametrize(
    ("example", "library"),
    [("breast_cancer_xgb.json", "an XGBoost model"), ("iris_lgbm.txt", "a LightGBM model")],
)
def test_another_library_s_model_named_as_a_pickle_is_told_as_that_library_s(
    tmp_path, example, library
):
    from pathlib import Path

    source = Path(__file__).resolve().parents[2] / "examples" / example
    path = tmp_path / "model.pkl"
    path.write_bytes(source.read_bytes())
    with pytest.raises(InputError, match=f"not a scikit-learn model .*: it is {library}"):
        load_model(str(path))


def test_a_skops_pipeline_ending_in_xgboost_is_refused_saying_to_save_it_with_joblib(tmp_path):
    sio = pytest.importorskip("skops.io")
    xgboost = pytest.importorskip("xgboost")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(0).uniform(size=(40, 2))
    pipe = make_pipeline(StandardScaler(), xgboost.XGBClassifier(n_estimators=2, max_depth=2))
    path = tmp_path / "pipe.skops"
    sio.dump(pipe.fit(X, (X[:, 0] > 0.5).astype(int)), path)
    p = treesens_here("check", path, "--vary", "x0", "--gap", "0.2", "--trust-pickle")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, p.stderr
    assert "xgboost.sklearn.XGBClassifier" in lines[0]
    assert "joblib.dump" in lines[0] and "--trust-pickle" in lines[0]
