"""A scikit-learn forest fitted with ``n_jobs > 1`` adds its trees' probabilities in
the order its threads finish, an ulp apart from call to call: the replay of a pair
(and the checker's) asks a copy of it set to one thread, so a pair on the gap's
boundary gets the same answer every run; the user's object is left as it was."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import treesens


@pytest.fixture
def threads_asked(monkeypatch) -> list:
    """The ``n_jobs`` of every forest whose predict_proba is called."""
    asked: list = []
    own = RandomForestClassifier.predict_proba

    def predict_proba(self, X):
        asked.append(self.n_jobs)
        return own(self, X)

    monkeypatch.setattr(RandomForestClassifier, "predict_proba", predict_proba)
    return asked


def _data():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(200, 3))
    return X, (X[:, 0] + 0.2 * X[:, 1] > 0.6).astype(int)


def _forest():
    return RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0, n_jobs=2)


def test_a_forest_fitted_with_two_jobs_is_replayed_on_one_thread(threads_asked):
    ens = treesens.load_model(_forest().fit(*_data()))
    threads_asked.clear()  # loading tries the replay once
    ens.replayer.predict_proba(np.zeros((2, 3)))
    ens.replayer.predict_raw(np.zeros((2, 3)))
    assert threads_asked == [1, 1]


def test_the_replay_leaves_the_users_forest_on_its_own_jobs():
    forest = _forest().fit(*_data())
    treesens.load_model(forest).replayer.predict_proba(np.zeros((2, 3)))
    assert forest.n_jobs == 2


def test_a_pipelines_forest_is_replayed_on_one_thread(threads_asked):
    pipe = Pipeline([("scale", StandardScaler()), ("forest", _forest())]).fit(*_data())
    ens = treesens.load_model(pipe)
    threads_asked.clear()
    ens.replayer.predict_proba(np.zeros((2, 3)))
    assert threads_asked == [1]
    assert pipe[-1].n_jobs == 2


def test_a_sensitive_forests_witness_is_replayed_on_one_thread(threads_asked):
    result = treesens.check(_forest().fit(*_data()), vary=["x0"], gap=0.2)
    assert result.status == "sensitive"
    assert threads_asked and set(threads_asked) == {1}
