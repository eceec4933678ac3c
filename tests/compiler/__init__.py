"""The compiler: ensemble IR, query, encoding, each pass, the heuristic."""
