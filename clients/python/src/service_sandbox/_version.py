"""The kit's version: the same for the server and every kit (docs/clients.md#python)."""

__version__ = "0.2.0"
