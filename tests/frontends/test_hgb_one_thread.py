"""A HistGradientBoosting model's replay predicts on one OpenMP thread: its predict opens a
parallel region per tree, and on a machine whose cores were busy (load 15 on 2 cores) a
500-tree model's predict of one row took 16-19 s (6 CPU s), twice at load (the check that
the estimator predicts), so loading it took 97 s; on one thread 0.03 s. The threads share
rows, not trees: the probabilities are the estimator's own."""

from __future__ import annotations

import numpy as np
import pytest

import treesens

ensemble = pytest.importorskip("sklearn.ensemble")
threadpoolctl = pytest.importorskip("threadpoolctl")


@pytest.fixture(scope="module")
def hgb():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    return ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y), X


def _openmp_threads() -> list[int]:
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "openmp"]


def test_an_hgb_model_s_replay_predicts_on_one_openmp_thread(hgb, monkeypatch):
    est, X = hgb
    ens = treesens.load_model(est)
    seen = []
    own = ens.replayer.est.predict_proba

    def spy(rows):
        seen.extend(_openmp_threads())
        return own(rows)

    monkeypatch.setattr(ens.replayer.est, "predict_proba", spy)
    with threadpoolctl.threadpool_limits(2, user_api="openmp"):
        ens.replayer.predict_proba(X[:1])
    assert seen and set(seen) == {1}


def test_an_hgb_model_s_replay_on_one_thread_gives_the_estimator_s_probabilities(hgb):
    est, X = hgb
    ens = treesens.load_model(est)
    assert np.array_equal(ens.replayer.predict_proba(X), est.predict_proba(X))
