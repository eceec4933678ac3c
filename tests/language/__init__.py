"""The .sens query language: grammar, errors, examples, package."""
