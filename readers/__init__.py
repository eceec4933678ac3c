"""Readers: the files and objects a question starts from, read into the IR. Model files and
fitted estimators (``formats/``: one module per format, and the format registry; load.py
loads through it), the user's feature space folded in (``preprocessing/``: pipelines and
one-hot groups), details files (details.py), data files and frames (data.py,
table_files.py), and the Python files a user asks to load for what they register
(plugins.py). They import only the IR (compiler/)."""
