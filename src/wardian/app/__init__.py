"""The application layer: one module per job, the calls that the CLI, the MCP server and
the web app share (HELPERS conventions; DESIGN.md "Layout": surfaces stay thin over it)."""
