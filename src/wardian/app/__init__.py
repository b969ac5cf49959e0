"""The application layer: service functions the CLI, MCP server and web app call.

One module per job; this file stays a docstring only.
"""
