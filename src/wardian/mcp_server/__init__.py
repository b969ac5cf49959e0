"""``wardian mcp``: agent memory as Model Context Protocol tools and resources.

A surface beside the CLI: `wardian.mcp_server.server` maps MCP calls onto the shared
application layer (`wardian.app.agent_memory`) and holds no memory logic of its own. The
official ``mcp`` SDK is imported only here, so no other command pays for it.
"""
