"""Write small made-up sessions in the three real transcript formats, for the curator tests.

A session is a list of turns:

- ``("user", text)``: the human typing;
- ``("assistant", text)``: agent prose;
- ``("tool", name, input_dict)``: a tool call (its result is ``("result", text)``);
- ``("result", text)`` / ``("error", text)``: the tool's output (error: failed);
- ``("reject", reason)``: the user refused the last tool call, giving `reason` ("" = none);
- ``("interrupt",)``: the user interrupted the agent;
- ``("answer", {question: answer})``: the user answered the agent's AskUserQuestion.

`write_session(fmt, turns, path, cwd)` writes Claude Code JSONL (``claude``), a Codex rollout
(``codex``) or a Gemini CLI session document (``gemini``) in the shapes described in
../shared/corpus/transcripts/FORMATS.md (nothing is copied from the corpus). Turns a format
has no form for are written the nearest way that format records them: a Codex refusal is
the CLI's "rejected by user" tool output followed by the user's reason as a prompt; an
interrupt is dropped for Codex and Gemini; an answer is a plain user message there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wardian.curator import curate
from wardian.transcripts import load_transcript

Turn = tuple[Any, ...]
FORMATS = ("claude", "codex", "gemini")
REJECTION = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). To tell you how to proceed, "
    "the user said:\n"
)
_TS = "2026-01-0{d}T10:{m:02d}:00.000Z"


def _ts(i: int) -> str:
    return _TS.format(d=1 + i // 60 % 9, m=i % 60)


def _claude(turns: list[Turn], cwd: str) -> str:
    lines: list[dict[str, Any]] = []
    last_call = ""
    env = {"sessionId": "11111111-2222-4333-8444-555555555555", "cwd": cwd, "version": "2.1.0",
           "userType": "external", "isSidechain": False, "gitBranch": "main"}
    for i, turn in enumerate(turns):
        base = {**env, "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None,
                "timestamp": _ts(i)}
        tag = turn[0]
        if tag == "user":
            lines.append({**base, "type": "user", "message": {"role": "user", "content": turn[1]}})
        elif tag == "assistant":
            lines.append({**base, "type": "assistant", "message": {
                "role": "assistant", "id": f"m{i}", "model": "claude-test",
                "content": [{"type": "text", "text": turn[1]}]}})
        elif tag == "tool":
            last_call = f"call{i}"
            lines.append({**base, "type": "assistant", "message": {
                "role": "assistant", "id": f"m{i}", "model": "claude-test",
                "content": [{"type": "tool_use", "id": last_call, "name": turn[1],
                             "input": turn[2]}]}})
        elif tag in ("result", "error", "reject", "answer"):
            if tag == "reject":
                text = REJECTION + turn[1] if turn[1] else REJECTION.split(" To tell")[0]
            elif tag == "answer":
                pairs = ", ".join(f'"{q}"="{a}"' for q, a in turn[1].items())
                text = (f"User has answered your questions: {pairs}. You can now continue "
                        "with the user's answers in mind.")
            else:
                text = turn[1]
            block = {"type": "tool_result", "tool_use_id": last_call, "content": text}
            if tag in ("error", "reject"):
                block["is_error"] = True
            lines.append({**base, "type": "user", "message": {"role": "user",
                                                               "content": [block]}})
        elif tag == "interrupt":
            lines.append({**base, "type": "user", "message": {"role": "user", "content": [
                {"type": "text", "text": "[Request interrupted by user for tool use]"}]}})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def _codex(turns: list[Turn], cwd: str) -> str:
    lines: list[dict[str, Any]] = [{"timestamp": _ts(0), "type": "session_meta", "payload": {
        "id": "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", "timestamp": _ts(0), "cwd": cwd,
        "originator": "codex_cli_rs", "cli_version": "0.120.0", "source": "cli"}}]
    last_call = ""

    def item(i: int, payload: dict[str, Any]) -> None:
        lines.append({"timestamp": _ts(i), "type": "response_item", "payload": payload})

    for i, turn in enumerate(turns, start=1):
        tag = turn[0]
        if tag == "user" or tag == "answer":
            text = turn[1] if tag == "user" else "; ".join(turn[1].values())
            lines.append({"timestamp": _ts(i), "type": "event_msg",
                          "payload": {"type": "user_message", "message": text}})
        elif tag == "assistant":
            lines.append({"timestamp": _ts(i), "type": "event_msg",
                          "payload": {"type": "agent_message", "message": turn[1]}})
        elif tag == "tool":
            last_call = f"call_{i}"
            item(i, {"type": "function_call", "name": turn[1],
                     "arguments": json.dumps(turn[2]), "call_id": last_call})
        elif tag in ("result", "error"):
            item(i, {"type": "function_call_output", "call_id": last_call,
                     "output": f"Process exited with code {1 if tag == 'error' else 0}\n"
                               f"Output:\n{turn[1]}"})
        elif tag == "reject":
            item(i, {"type": "function_call_output", "call_id": last_call,
                     "output": "exec command rejected by user"})
            if turn[1]:
                lines.append({"timestamp": _ts(i), "type": "event_msg",
                              "payload": {"type": "user_message", "message": turn[1]}})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def _gemini(turns: list[Turn], cwd: str) -> str:
    messages: list[dict[str, Any]] = []
    for i, turn in enumerate(turns):
        tag = turn[0]
        if tag in ("user", "answer"):
            text = turn[1] if tag == "user" else "; ".join(turn[1].values())
            messages.append({"id": f"g{i}", "timestamp": _ts(i), "type": "user", "content": text})
        elif tag == "reject":
            if messages and messages[-1].get("toolCalls"):
                messages[-1]["toolCalls"][-1]["status"] = "cancelled"
            if turn[1]:
                messages.append({"id": f"g{i}", "timestamp": _ts(i), "type": "user",
                                 "content": turn[1]})
        elif tag == "assistant":
            messages.append({"id": f"g{i}", "timestamp": _ts(i), "type": "gemini",
                             "content": turn[1], "model": "gemini-test"})
        elif tag == "tool":
            messages.append({"id": f"g{i}", "timestamp": _ts(i), "type": "gemini", "content": "",
                             "model": "gemini-test", "toolCalls": [{
                                 "id": f"t{i}", "name": turn[1], "args": turn[2],
                                 "status": "success", "timestamp": _ts(i), "result": []}]})
        elif tag in ("result", "error") and messages and messages[-1].get("toolCalls"):
            call = messages[-1]["toolCalls"][-1]
            call["status"] = "error" if tag == "error" else "success"
            call["result"] = [{"functionResponse": {"id": call["id"], "name": call["name"],
                                                    "response": {"output": turn[1]}}}]
    doc = {"sessionId": "gem-session-1", "projectHash": "0" * 64, "startTime": _ts(0),
           "lastUpdated": _ts(len(turns)), "messages": messages}
    return json.dumps(doc, indent=2)


def write_session(fmt: str, turns: list[Turn], path: Path, cwd: str = "/work/app") -> Path:
    """Write `turns` as a `fmt` transcript at `path` (suffix chosen by format); return it."""
    writer = {"claude": _claude, "codex": _codex, "gemini": _gemini}[fmt]
    out = path.with_suffix(".json" if fmt == "gemini" else ".jsonl")
    out.write_text(writer(turns, cwd), encoding="utf-8")
    return out


def curate_session(
    fmt: str,
    turns: list[Turn],
    tmp_path: Path,
    records: list[dict[str, Any]] | None = None,
    cwd: str = "/work/app",
) -> list[dict[str, Any]]:
    """Write, load and curate one made-up session; the curator's operations."""
    path = write_session(fmt, turns, tmp_path / f"session-{fmt}", cwd)
    conv = load_transcript(path)
    payload = {
        "messages": [m.to_json() for m in conv.messages if m.role != "tool"
                     or m.kind in ("tool_rejection", "answer")],
        "records": records or [],
        "max_changes": 10,
        "include_tool_output": False,
        "workspace": conv.cwd or cwd,
    }
    ops: list[dict[str, Any]] = curate(payload)["operations"]
    texts = [m.text for m in conv.messages]
    for op in ops:
        assert any(op["evidence"] in t for t in texts), op  # evidence is always verbatim
    return ops


def large_session() -> dict[str, Any]:
    """A curator payload of over 2 MB of normalised messages: 900 near-identical user
    requests, each answered by ~1.4 KB of agent prose, then one 1 MB tool output (the
    size test in test_curate.py and the large-session figure of bench/curator_bench.py)."""
    filler = "Here is what I changed in the module and why it matters for the tests. " * 20
    msgs: list[dict[str, Any]] = []
    for i in range(900):
        msgs.append({"seq": len(msgs), "role": "user", "kind": "text",
                     "text": f"please continue with step {i}, and do not skip the checks"})
        msgs.append({"seq": len(msgs), "role": "assistant", "kind": "text", "text": filler})
    msgs.append({"seq": len(msgs), "role": "tool", "kind": "tool_result", "text": "x" * 1_000_000})
    return {"messages": msgs, "records": []}
