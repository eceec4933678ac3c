"""interfaces: the CLI (cli/), the Python API (api.py, expect_api.py) and running `.sens`
files (sens_run.py, sens_contract.py): they parse, call a question and render."""
