"""Saved regression cases of the differential campaign, and the code that makes, saves and
replays them (``harness.py``). See README.md in this folder."""
