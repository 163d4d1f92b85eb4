"""The package version (read by hatchling at build time)."""

__version__ = "0.1.0.dev0"
