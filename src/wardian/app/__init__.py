"""The application layer: service functions the CLI, MCP server and web app call (one module per job)."""
