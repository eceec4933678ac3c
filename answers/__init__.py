"""answers: the Result of a query (its JSON fields, its typed statistics) and how it reads."""
