"""The questions users ask: the user's words made a checked question (query_build.py,
keywords.py: the API's keyword table; audit_spec.py: what an audit asks), one module per
question (sweep, max gap, audit, compare, report, contract), and their two runners: ``ask.py`` answers one question (a check, or the
max_gap kind's search) from its clock, its data and its plan to a recorded Result, and
``campaign.py`` runs many (executor, results log, resume, progress). The CLI, the Python
API and ``.sens`` files parse, call these and render."""
