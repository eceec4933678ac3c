"""A replayer's calls into its library run one at a time (formats/base.py
LazyLibraryModel): the box search and a backend's loop replay pairs from two threads."""

from __future__ import annotations

import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import treesens
from treesens.readers.formats.base import LazyLibraryModel
from treesens.tests.frontends.test_api import EXAMPLES


class _Probe(LazyLibraryModel):
    """Counts how many of its calls are inside at once."""

    _cached = "model"

    def __init__(self):
        super().__init__(object())
        self.inside = 0
        self.most = 0
        self.count = threading.Lock()

    def predict(self, X):
        with self.count:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.01)
        with self.count:
            self.inside -= 1
        return np.zeros(len(X))

    def predict_proba(self, X):
        return np.stack([self.predict(X)] * 2, axis=1)  # re-enters: must not deadlock


def test_replay_calls_from_many_threads_run_one_at_a_time():
    probe = _Probe()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: probe.predict_proba(np.zeros((1, 2))), range(16)))
    assert probe.most == 1


def test_a_replayer_that_crossed_a_pickle_still_replays():
    ens = treesens.load_model(str(EXAMPLES / "breast_cancer_xgb.json"))
    X = np.zeros((3, ens.n_features))
    again = pickle.loads(pickle.dumps(ens.replayer))
    assert np.array_equal(again.predict_proba(X), ens.replayer.predict_proba(X))
