"""The treesens command end to end: exit codes, signals, deadlines."""
