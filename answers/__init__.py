"""answers: the Result of a query (its JSON fields, its typed statistics, its few-word
phrases); how it reads in full is drawn in views/result_view.py."""
