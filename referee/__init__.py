"""Abluxxen bot referee."""

__version__ = "0.1.0"
