"""The package version (layer 0: imported by the CLI and the package)."""

__version__ = "0.1.0"
