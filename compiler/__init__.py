"""treesens.compiler: pure and solver-free. The Ensemble IR, the query (a Question, what
is asked, with its Plan, how it is solved), the query kinds, the encoding and its passes,
the constraint IR a backend solves, and the replay and audit arithmetic on the IR. The
searches on it (heuristic, box and gap search) are search/'s."""
