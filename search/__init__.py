"""Searches for a pair, or a proof there is none, other than a solver's: the heuristic
(heuristic.py, and its stage before the backend, heuristic_stage.py), the box search over
the pair space (pair_boxes.py: the pair tables, pair_scope.py the queries they describe;
box_search.py: the branch and bound; boxes.py and link_boxes.py: its stages,
box_answers.py what they share), the largest-gap
search (gap_boxes.py, compiled in gap_kernel.py and gap_kernel_jit.py; gap_search.py runs
it on a model) and z3's search for data cavities (cavity_learning.py, run in a worker).

They sit above the IR, the answers and the solver backends and below the driver, which
runs them as stages of one solve; ``--backend boxes`` is the box search registered as a
search method in backends/registry.py."""
