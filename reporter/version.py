"""The package version, written here once: the build reads it (pyproject.toml,
[tool.hatch.version]) and `benchreport --version` prints it. A module of its own so that any
layer can read it without importing the package's API."""

__version__ = "0.1.0"
