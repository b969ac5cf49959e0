"""The application layer: service functions that the CLI, the MCP server and the web call."""
