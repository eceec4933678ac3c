"""The package as installed and extended: layers, wheel, docs/extending.md."""
