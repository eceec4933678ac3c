"""answers: the Result of a query (its JSON fields, its typed statistics, its few-word
phrases) and what every stage that makes one shares: the solve's context (context.py),
the replay check of a candidate pair (verdict.py) and writing an accepted pair
(accept.py). How a Result reads in full is drawn in views/result_view.py."""
