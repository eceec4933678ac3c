"""treesens.compiler: pure and solver-free. The Ensemble IR, the query (a Question, what
is asked, with its Plan, how it is solved), the query kinds, the encoding and its passes,
and the searches computed from the IR alone."""
