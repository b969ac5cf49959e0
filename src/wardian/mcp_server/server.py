"""The stdio MCP server: memory tools and resources over the shared application layer.

Tools (inputs are JSON-Schema'd with the CLI's options and limits; results are structured,
`wardian.mcp_server.schemas`):

``memory_save`` · ``memory_recall`` · ``memory_list`` · ``memory_show`` ·
``memory_history`` · ``memory_update`` · ``memory_remove`` · ``memory_draft_plan``

Resources: ``wardian://startup-context`` (the agent's startup context for the server's
workspace, exactly as a launch renders it) and ``wardian://memory/{id}`` (one record).

Authority is the managed launch's, checked on every call with the same function the CLI
uses (`wardian.app.agent_memory.open_reader`): a host started inside ``wardian agent
launch``/``exec`` hands its environment (capability included) to the server it spawns, so
the server acts for that agent only. Without any capability the read-only tools
(``memory_recall``, ``memory_list``, ``memory_show``, ``memory_history``) and the resources
answer read-only for the agent the hooks would answer for (the launch ancestry's, else among
the server's ``--agent`` names the one whose workspace holds its directory), and say so;
every change (``memory_save``, ``memory_update``, ``memory_remove``, and
``memory_draft_plan``, a proposal made for the agent) is refused with what was refused and
how to run inside ``wardian agent launch``/``exec`` (exit-3 class error); a forged or
expired capability refuses everything. A refused call is an MCP *tool error*
(``isError: true``) whose text is our one-line message with its hint, with no structured
content (every structured result conforms to the tool's output schema) and with
``_meta["wardian/error"]`` carrying ``{"type", "message", "hint", "exit_code"}``.

Tools are ``async`` on purpose: their work is a few milliseconds of SQLite, and running
them on the event loop keeps the one store connection on one thread and calls serialised.

Spec: "Save and inspect memory", "What appears in chat".
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from pydantic import ValidationError as PydanticError

from wardian import __version__
from wardian.app.agent_memory import (
    MAX_EVIDENCE_CHARS,
    MAX_LOCATOR_CHARS,
    MAX_SOURCES,
    MAX_TEXT_CHARS,
    READ_ONLY_NOTE,
    ROW_REMOVED,
    ROW_UPDATED,
    AgentMemory,
    default_workspace,
    open_reader,
    recall_lines,
    record_line,
    save_row,
)
from wardian.errors import WardianError
from wardian.mcp_server import schemas

__all__ = ["ERROR_META_KEY", "SERVER_NAME", "TOOL_NAMES", "build_server", "clean_launch_environ",
           "serve"]

SERVER_NAME = "wardian"
TOOL_NAMES = ("memory_save", "memory_recall", "memory_list", "memory_show", "memory_history",
              "memory_update", "memory_remove", "memory_draft_plan")
MAX_PLAN_IDS = 100
"""A plan holds at most 100 operations (spec "Plan structure and constraints")."""

_UNEXPANDED = re.compile(r"^\$(\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)$")

def clean_launch_environ(environ: dict[str, str] | os._Environ[str]) -> list[str]:
    """Drop ``WARDIAN_*`` values that are a host's unexpanded reference (``$NAME``,
    ``${NAME}``): a host config that forwards the launch variables by reference leaves the
    literal text when the host itself was not started by a launch. Returns the names
    dropped. Such a value is "no capability", not a forged one."""
    dropped = [k for k, v in environ.items() if k.startswith("WARDIAN_") and _UNEXPANDED.match(v)]
    for key in dropped:
        del environ[key]
    return dropped


ERROR_META_KEY = "wardian/error"
"""The ``_meta`` member of a tool error that carries its machine-readable details."""


def _error(exc: WardianError) -> CallToolResult:
    """A refused call as an MCP tool error: the text is our message with its hint, and
    ``_meta["wardian/error"]`` carries ``{"type", "message", "hint", "exit_code"}``.

    It has no structured content: a client validates structured content against the
    tool's published output schema whenever it is present (the TypeScript SDK that
    opencode and Gemini CLI use does so for errors too), and an error is not a result of
    that schema."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"Error: {exc.render()}")],
        _meta={ERROR_META_KEY: {
            "type": type(exc).__name__, "message": exc.message, "hint": exc.hint,
            "exit_code": exc.exit_code,
        }},
        is_error=True,
    )


def _ok(structured: dict[str, Any], text: str) -> CallToolResult:
    """A result: `structured` is the JSON-ready document of the tool's output schema (the
    SDK validates it against that schema before it is sent), `text` what a model reads."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=structured)


def _read_only(view: AgentMemory) -> dict[str, Any]:
    """The ``read_only`` (and, when read-only, ``note``) members of a read tool's result."""
    return {"read_only": True, "note": READ_ONLY_NOTE} if view.read_only else {
        "read_only": False}


def _noted(text: str, view: AgentMemory) -> str:
    """`text`, with the read-only note when `view` is read-only."""
    return f"{text}\n({READ_ONLY_NOTE})" if view.read_only else text


def _change(record: Any, row: str) -> CallToolResult:
    removed = " · removed" if record.status == "removed" else ""
    doc = {"row": row, "id": record.id, "revision_id": record.current_revision_id,
           "record": record.to_json()}
    return _ok(doc, f"{record_line(record)}{removed}\n{row}")


# Input schemas: the CLI's options and the spec's limits, advertised to the host. They are
# enforced by the shared service (one place, our messages and hints), so a host that sends
# an over-limit text gets the same error the CLI prints, not a schema library's.
Text = Annotated[str, Field(description=f"What to remember (at most {MAX_TEXT_CHARS:,} "
                            "characters).", json_schema_extra={"maxLength": MAX_TEXT_CHARS})]
Evidence = Annotated[str, Field(
    description=f"Excerpt that justifies it (required, at most {MAX_EVIDENCE_CHARS:,}).",
    json_schema_extra={"maxLength": MAX_EVIDENCE_CHARS, "minLength": 1})]
KindIn = Annotated[str, Field(description="stable (default) or current.",
                              json_schema_extra={"enum": ["stable", "current"]})]
ScopeIn = Annotated[str, Field(
    description="workspace (the git root of the server's directory) or agent.",
    json_schema_extra={"enum": ["workspace", "agent"]})]
SourcesIn = Annotated[list[str], Field(
    description="TYPE=LOCATOR links kept for deeper inspection (the first is primary on "
    f"save); at most {MAX_SOURCES}, each locator at most {MAX_LOCATOR_CHARS:,} characters.",
    json_schema_extra={"maxItems": MAX_SOURCES,
                       "items": {"type": "string", "pattern": "^[^=]+=.+"}})]
RecordId = Annotated[str, Field(description="A record id: the full UUID or a unique prefix "
                                "(8 characters are shown).", json_schema_extra={"minLength": 1})]
Reason = Annotated[str | None, Field(description="Why (kept in history).")]


class _Memory:
    """The server's one store connection and the caller's authentication.

    A capability dies with its launch, and the server must notice: a view with a
    capability is authenticated in full (`open_reader`: the capability row, the agent id,
    the holder among the server's real ancestors) and then reused only while nothing can
    have changed that check's answer — no other connection has committed to ``memory.db``
    (SQLite's ``data_version``: a revocation is a commit) and the ancestors up to the holder
    are still the same processes (`_Ancestors`). Anything else (other platforms, the
    read-only view without a capability) authenticates every call.
    """

    def __init__(self, agents: Sequence[str]) -> None:
        self.agents = tuple(agents)
        self._store: Any = None
        self._workspace: str | None = None
        self._view: AgentMemory | None = None
        self._stamp: tuple[Any, ...] | None = None

    def _data_version(self) -> int | None:
        if self._store is None:
            return None
        return int(self._store.conn.execute("PRAGMA data_version").fetchone()[0])

    def view(self) -> AgentMemory:
        env = (os.environ.get("WARDIAN_CAPABILITY", ""), os.environ.get("WARDIAN_AGENT_ID", ""))
        version = self._data_version()  # read before authenticating: a later commit shows
        if self._view is not None and self._stamp is not None and self._stamp[:2] == (
                env, version) and self._stamp[2].unchanged():
            return self._view
        self._forget()
        view = open_reader(self.agents, store=self._store)
        self._store = view.store
        # The server's directory does not change: its workspace is looked up once.
        self._workspace = view.workspace = self._workspace or default_workspace()
        if view.principal is not None and version is not None:
            self._remember(view, env, version)
        return view

    def _remember(self, view: AgentMemory, env: tuple[str, str], version: int) -> None:
        """Keep `view` for the next calls, stamped with what its authentication relied on."""
        from wardian._process import ancestry_to

        holder = view.capability_holder(env[0])
        chain = ancestry_to(holder) if holder is not None else None
        if holder is not None and chain is not None:
            self._view, self._stamp = view, (env, version, _Ancestors(holder, chain))

    def _forget(self) -> None:
        if self._stamp is not None:
            self._stamp[2].close()
        self._view = self._stamp = None

    def close(self) -> None:
        self._forget()


class _Ancestors:
    """The server's ancestors from its parent up to the capability holder, as
    `wardian._process.ancestry_to` read them while the holder was a verified ancestor,
    and whether they are still those same live processes.

    On Linux each is watched through a pidfd (``pidfd_open``: it names that one process,
    whatever later reuses its pid), and `unchanged` is one non-blocking ``poll`` of them
    all: no ancestor has exited, so none was re-parented and the chain is the same.
    Where pidfds are unavailable the chain is read from ``/proc`` again each time (two
    or more file reads a call).
    """

    def __init__(self, holder: int, chain: tuple[tuple[int, int], ...]) -> None:
        from wardian._process import ancestry_to

        self._holder, self._chain = holder, chain
        self._fds: list[int] = []
        self._poll: Any = None
        try:
            for pid, _ in chain:
                self._fds.append(os.pidfd_open(pid))
        except (AttributeError, OSError):
            self.close()
            return
        # A pid reused between the chain's reading and pidfd_open would be watched in the
        # ancestor's place; the chain read again now proves each pidfd is the ancestor (a
        # dead ancestor's child is re-parented, so the chain could not read the same).
        if ancestry_to(holder) != chain:
            self.close()
            self._chain = ()  # never unchanged: the next call authenticates in full
            return
        import select

        self._poll = select.poll()
        for fd in self._fds:
            self._poll.register(fd, select.POLLIN)

    def unchanged(self) -> bool:
        """Whether every ancestor up to the holder is still the same, live process."""
        if self._poll is not None:
            return not self._poll.poll(0)  # a pidfd polls readable once its process exits
        from wardian._process import ancestry_to

        return bool(self._chain) and ancestry_to(self._holder) == self._chain

    def close(self) -> None:
        """Close the pidfds (the chain is then read from ``/proc`` again)."""
        self._poll = None
        for fd in self._fds:
            os.close(fd)
        self._fds = []


_MAX_SHOWN_PROBLEMS = 3
"""How many argument problems one refusal lists (the rest are counted)."""


def _arguments_invalid(tool: str, exc: PydanticError) -> WardianError:
    """The `ValidationError` (exit-2 class) for arguments that do not match `tool`'s input
    schema: each problem as ``field.path: what is wrong``, like the CLI's option errors,
    without pydantic's type codes, echoed input values and links."""
    from wardian.errors import ValidationError

    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        what = "is required" if error["type"] == "missing" else (
            "is not an argument of this tool" if error["type"] == "extra_forbidden"
            else str(error["msg"]).replace("Input should", "should"))
        problems.append(f"{path.lstrip('.') or 'arguments'} {what}")
    more = len(problems) - _MAX_SHOWN_PROBLEMS
    text = "; ".join(problems[:_MAX_SHOWN_PROBLEMS]) + (f"; and {more} more" if more > 0 else "")
    return ValidationError(f"{tool}: {text}",
                           hint="each argument's type and limits are in the tool's input "
                                "schema, tools/list")


def _unknown_arguments(tool: str, names: Sequence[str]) -> WardianError:
    """The `ValidationError` (exit-2 class) for arguments `tool` does not take, in the
    words of `_arguments_invalid`."""
    from wardian.errors import ValidationError

    shown = "; ".join(f"{n[:80]} is not an argument of this tool"
                      for n in names[:_MAX_SHOWN_PROBLEMS])
    more = len(names) - _MAX_SHOWN_PROBLEMS
    return ValidationError(f"{tool}: {shown}" + (f"; and {more} more" if more > 0 else ""),
                           hint="each argument's type and limits are in the tool's input "
                                "schema, tools/list")


class _Server(MCPServer[Any]):
    """`MCPServer` whose argument validation errors are Wardian's one-line refusals (the
    SDK would send pydantic's multi-line report with type codes and links)."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> Any:
        """As `MCPServer.call_tool`; arguments that fail the input schema, an argument
        the tool does not take included (the SDK would ignore it), come back as a tool
        error whose text names each field path (`_arguments_invalid`)."""
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            unknown = sorted(set(arguments) - set(tool.parameters.get("properties", {})))
            if unknown:
                return _error(_unknown_arguments(name, unknown))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, PydanticError):
                return _error(_arguments_invalid(name, exc.__cause__))
            raise


def _call(fn: Callable[[], CallToolResult]) -> CallToolResult:
    try:
        return fn()
    except WardianError as exc:
        return _error(exc)


def build_server(*, agents: Sequence[str] = ()) -> tuple[MCPServer[Any], Callable[[], None]]:
    """The configured `MCPServer` and a function that lets go of what it holds (the
    pidfds watching an authenticated caller's ancestors).

    Args:
        agents: agent names or ids (``wardian mcp --agent A --agent B``) among which the
            read-only view picks, as the hooks do, when the process holds no capability and
            no launch ancestry names one; never a way to act for an agent.
    """
    memory = _Memory(agents)
    server: MCPServer[Any] = _Server(
        SERVER_NAME, version=__version__, log_level="WARNING",
        instructions=(
            "Wardian agent memory. Save durable, evidence-backed facts with memory_save; "
            "recall before asking the user again; update or remove what turned out wrong. "
            "Changes need the memory capability of a `wardian agent launch` session."
        ),
    )
    read = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    write = ToolAnnotations(read_only_hint=False, destructive_hint=False,
                            open_world_hint=False)

    @server.tool(annotations=write, description=(
        "Save a memory record for this agent. Returns the chat row "
        '"Memory saved · This agent", the record id and its revision id.'))
    async def memory_save(
        text: Text, evidence: Evidence, kind: KindIn = "stable", scope: ScopeIn = "workspace",
        sources: SourcesIn | None = None,
    ) -> Annotated[CallToolResult, schemas.ChangeResult]:
        def run() -> CallToolResult:
            outcome = memory.view().save(text, evidence=evidence, kind=kind, scope=scope,
                                         sources=sources or ())
            return _change(outcome.record, save_row(outcome))

        return _call(run)

    @server.tool(annotations=read, description=(
        "Recall memory: with a query, the records that fit it, best first (by its words "
        "and, with the optional embedding model, by meaning); without one, the startup "
        "set. When nothing matches a query, records is empty and nearest holds "
        "the few records that came nearest below the relevance floor (they may not answer "
        "it). Works read-only outside a managed launch (the result says so)."))
    async def memory_recall(
        query: Annotated[str | None, Field(description="Words to search for; omit for the "
                                           "startup set.")] = None,
        limit: Annotated[int, Field(description="Maximum records for a query.",
                                    json_schema_extra={"minimum": 1})] = 10,
    ) -> Annotated[CallToolResult, schemas.RecallResult]:
        def run() -> CallToolResult:
            found = memory.view().recall(query, limit=limit)
            doc = found.to_json()
            doc["lines"] = [record_line(r) for r in found.records]
            if found.context is not None:
                text = found.context.text
            else:
                text = "\n".join(recall_lines(found))
                if found.read_only:
                    text += f"\n({doc['note']})"
            return _ok(doc, text)

        return _call(run)

    @server.tool(annotations=read, description="List this agent's records (every "
                 "workspace), newest first.")
    async def memory_list(
        kind: KindIn | None = None,
        scope: Annotated[str | None, Field(description="agent or workspace.",
                                           json_schema_extra={"enum": ["agent", "workspace"]})
                         ] = None,
        include_removed: Annotated[bool, Field(description="Include removed records.")] = False,
    ) -> Annotated[CallToolResult, schemas.ListResult]:
        def run() -> CallToolResult:
            view = memory.view()
            records = view.list(kind=kind, scope=scope, include_removed=include_removed)
            result = {"count": len(records), "records": [r.to_json() for r in records],
                      **_read_only(view)}
            lines = [record_line(r) + (" [removed]" if r.status == "removed" else "")
                     for r in records]
            return _ok(result, _noted("\n".join(lines) or "(no memory records)", view))

        return _call(run)

    @server.tool(annotations=read, description="Show one of this agent's records (full id "
                 "or unique prefix), also when removed.")
    async def memory_show(id: RecordId) -> Annotated[CallToolResult, schemas.RecordOut]:
        def run() -> CallToolResult:
            import json

            doc = memory.view().show(id).to_json()
            return _ok(doc, json.dumps(doc, ensure_ascii=False))

        return _call(run)

    @server.tool(annotations=read, description="Every revision of one of this agent's "
                 "records, oldest first.")
    async def memory_history(id: RecordId) -> Annotated[CallToolResult, schemas.HistoryResult]:
        def run() -> CallToolResult:
            view = memory.view()
            revisions = view.history(id)
            record = view.show(revisions[0].record_id)
            result = {"record_id": record.id, "current_revision_id": record.current_revision_id,
                      "revisions": [r.to_json() for r in revisions], **_read_only(view)}
            lines = [f"#{r.seq} {r.revision_id} {r.created_at} {r.actor}"
                     + (f" · reason: {r.reason}" if r.reason else "") for r in revisions]
            return _ok(result, _noted("\n".join(lines), view))

        return _call(run)

    @server.tool(annotations=write, description=(
        "Update one of this agent's active records; the previous state stays in history. "
        'Returns "Memory updated · This agent" and the new revision id.'))
    async def memory_update(
        id: RecordId,
        text: Annotated[str | None, Field(description="New text.",
                                          json_schema_extra={"maxLength": MAX_TEXT_CHARS})
                        ] = None,
        kind: KindIn | None = None,
        scope: ScopeIn | None = None,
        evidence: Annotated[str | None, Field(
            description="New evidence excerpt.",
            json_schema_extra={"maxLength": MAX_EVIDENCE_CHARS})] = None,
        sources: SourcesIn | None = None,
        reason: Reason = None,
    ) -> Annotated[CallToolResult, schemas.ChangeResult]:
        return _call(lambda: _change(memory.view().update(
            id, text=text, kind=kind, scope=scope, evidence=evidence, sources=sources or (),
            reason=reason), ROW_UPDATED))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                             idempotent_hint=False, open_world_hint=False),
                 description='Remove one of this agent\'s records ("Memory removed · This '
                 'agent"); it and its history stay inspectable.')
    async def memory_remove(
        id: RecordId, reason: Reason = None
    ) -> Annotated[CallToolResult, schemas.ChangeResult]:
        return _call(lambda: _change(memory.view().remove(id, reason=reason), ROW_REMOVED))

    @server.tool(annotations=read, description=(
        "Draft a maintenance plan (schema v1) for some of this agent's records. Writes "
        "nothing: only the operator previews and applies plans "
        "(`wardian garden maintain preview|apply PLAN --agent A`)."))
    async def memory_draft_plan(
        ids: Annotated[list[str], Field(
            description=f"This agent's record ids (1 to {MAX_PLAN_IDS}).",
            json_schema_extra={"minItems": 1, "maxItems": MAX_PLAN_IDS})],
    ) -> Annotated[CallToolResult, schemas.DraftPlanResult]:
        def run() -> CallToolResult:
            import json

            plan = memory.view().draft_plan(ids)
            note = ("a proposal only: the operator previews it with `wardian garden maintain "
                    "preview PLAN --agent A` and applies it with confirmation")
            result = {"operation_count": len(plan["operations"]), "note": note, "plan": plan}
            return _ok(result, json.dumps(plan, indent=2, ensure_ascii=False))

        return _call(run)

    @server.resource("wardian://startup-context", name="startup-context",
                     title="Wardian startup context", mime_type="text/markdown",
                     description="This agent's startup context for the server's workspace: "
                     "the direct-retention instructions and the recalled records.")
    async def startup_context() -> str:
        try:
            return memory.view().startup_context().text
        except WardianError as exc:
            raise ResourceError(f"Error: {exc.render()}") from None

    @server.resource("wardian://memory/{record_id}", name="memory-record",
                     title="Wardian memory record", mime_type="application/json",
                     description="One of this agent's memory records (id or unique prefix).")
    async def memory_record(record_id: str) -> str:
        import json

        try:
            record = memory.view().show(record_id)
        except WardianError as exc:
            raise ResourceError(f"Error: {exc.render()}") from None
        return json.dumps(record.to_json(), indent=2, ensure_ascii=False)

    for tool in server._tool_manager.list_tools():
        # Published as refused: an argument the tool does not take is an error
        # (`_Server.call_tool`), not silently ignored.
        tool.parameters["additionalProperties"] = False
    return server, memory.close


def serve(*, agents: Sequence[str] = ()) -> None:
    """Run the server on stdin/stdout until the host closes it (``wardian mcp``)."""
    clean_launch_environ(os.environ)
    import anyio

    server, close = build_server(agents=agents)
    try:
        anyio.run(_run_stdio, server)
    finally:
        close()


async def _run_stdio(server: MCPServer[Any]) -> None:
    """`MCPServer.run_stdio_async` over `wardian.mcp_server.stdio.stdio_streams` (the SDK's
    transport, each line screened and every malformed request answered)."""
    from wardian.mcp_server.stdio import run_stdio

    # MCPServer has no public "run over these streams"; its low-level server does.
    await run_stdio(server._lowlevel_server)
