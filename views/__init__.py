"""views: how things read and look: a Result (result_view.py), progress, plots, the report
page and JUnit XML. Only interfaces/ sits above."""
