"""The library's layers, lowest first, in the order the flow runs: files and objects in ->
readers -> the IR (compiler, with its passes) -> solvers and search -> questions ->
interfaces and views. The one list the package tests read (test_layers.py checks that
imports only point down it)."""

LAYERS = (
    "compiler",  # the IR, the query, the encoding and its passes: pure
    "readers",  # model files, fitted estimators, details and data read into the IR
    "answers",  # the Result, and what every stage of a solve shares
    "backends",  # the solvers, each in a worker process, and their registry
    "search",  # the heuristic, the box and gap search, cavity learning
    "driver",  # one solve, stage by stage
    "questions",  # words made a question; one runner per question and per campaign
    "language",  # the .sens language
    "views",  # how results read and look
    "interfaces",  # the CLI, the Python API, running .sens files
)
