"""A fake provider CLI: codex, claude, gemini or opencode, chosen by the name it runs as.

Installed on PATH by `tests/providers/conftest.py` as small launcher scripts (``codex``,
``claude``, ``gemini``, ``opencode``) whose shebang is the test interpreter. Every call
appends ``{"tool", "argv", "stdin", "cwd", "env"}`` to ``$FAKE_PROVIDER_RECORD`` and then
prints the tool's real output shapes for the scenario in ``$FAKE_PROVIDER_SCENARIO``:

``ok`` · ``reroute`` · ``mismatch`` · ``lowered_effort`` · ``unknown_model`` · ``quota`` ·
``no_auth`` · ``silent_switch`` (claude) · ``empty``, ``silent_fallback`` (gemini) ·
``no_effort_report`` (claude: hooks not run) ·
``hang`` (spawns a grandchild, writes its pid to ``$FAKE_PROVIDER_GRANDCHILD_PID`` and
``{"pid", "grandchild"}`` to the FIFO ``$FAKE_PROVIDER_HANG_READY`` when set, sleeps) ·
``no_rollout`` (codex) · ``hang_before_thread`` (codex: its rollout open, no
``thread.started`` printed, then as ``hang``) · ``discovery_fail`` · ``discovery_hang`` ·
``discovery_flood``.

The answer text is ``$FAKE_PROVIDER_ANSWER`` (default ``{"operations": []}``). Shapes follow
reference/providers.md and the public docs/issues cited there.

Tool calls, as an agent's would be: ``$FAKE_PROVIDER_TOOLS`` is a JSON list of argv lists run
(in this process's environment and directory) before the tool answers; each result
``{"argv", "rc", "out", "err", "pid", "env"}`` (``env``: the ``WARDIAN_*`` variables this
process got) is appended to ``$FAKE_PROVIDER_TOOLS_LOG``. ``$FAKE_PROVIDER_READY`` names a
FIFO that gets ``{"pid", "env"}`` once the tools ran, so a test can wait on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

TOOL = globals().get("FAKE_TOOL") or Path(sys.argv[0]).name
ARGS = sys.argv[1:]
SCENARIO = os.environ.get("FAKE_PROVIDER_SCENARIO", "ok")
ANSWER = os.environ.get("FAKE_PROVIDER_ANSWER", '{"operations": []}')
STATE = Path(os.environ.get("FAKE_PROVIDER_STATE", "/tmp"))
TS = "2026-11-29T20:00:00.000Z"


def record(stdin: str, **extra: object) -> None:
    path = os.environ.get("FAKE_PROVIDER_RECORD")
    if not path:
        return
    entry = {"tool": TOOL, "argv": ARGS, "stdin": stdin, "cwd": os.getcwd(),
             "env": {k: v for k, v in os.environ.items()
                     if k in ("CLAUDE_CODE_EFFORT_LEVEL", "ANTHROPIC_MODEL", "GEMINI_MODEL")},
             **extra}
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")


def out(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def opt(*names: str) -> str | None:
    for i, arg in enumerate(ARGS):
        if arg in names and i + 1 < len(ARGS):
            return ARGS[i + 1]
    return None


def hang() -> None:
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    pid_file = os.environ.get("FAKE_PROVIDER_GRANDCHILD_PID")
    if pid_file:
        Path(pid_file).write_text(str(grandchild.pid))
    ready = os.environ.get("FAKE_PROVIDER_HANG_READY")
    if ready:
        with open(ready, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "grandchild": grandchild.pid}) + "\n")
    time.sleep(600)


def read_stdin() -> str:
    try:
        return sys.stdin.read()
    except OSError:
        return ""


# --- codex ---------------------------------------------------------------------------------


def codex_app_server() -> int:
    record("", mode="app-server")
    if SCENARIO == "discovery_fail":
        sys.stderr.write("error: not logged in\n")
        return 1
    if SCENARIO == "discovery_hang":
        hang()
    if SCENARIO == "discovery_flood":  # log noise on stdout, never an answer
        with contextlib.suppress(BrokenPipeError, OSError):
            while True:
                sys.stdout.write("WARN starting up " + "." * 200 + "\n")
    for line in sys.stdin:
        message = json.loads(line)
        method, mid = message.get("method"), message.get("id")
        if method == "initialize":
            out({"id": mid, "result": {"userAgent": "codex_cli_rs/0.130.0"}})
        elif method == "model/list":
            out({"id": mid, "result": {"data": [
                {"id": "gpt-5.2-codex", "model": "gpt-5.2-codex", "displayName": "gpt-5.2-codex",
                 "description": "Latest frontier agentic coding model.",
                 "supportedReasoningEfforts": [
                     {"reasoningEffort": e, "description": e}
                     for e in ("low", "medium", "high", "xhigh")],
                 "defaultReasoningEffort": "medium", "inputModalities": ["text", "image"],
                 "isDefault": True, "hidden": False},
                {"id": "gpt-5.1-codex-mini", "model": "gpt-5.1-codex-mini",
                 "displayName": "gpt-5.1-codex-mini", "description": "Cheaper, faster.",
                 "supportedReasoningEfforts": [
                     {"reasoningEffort": e, "description": e} for e in ("medium", "high")],
                 "defaultReasoningEffort": "medium", "isDefault": False, "hidden": False},
                {"id": "codex-auto-review", "model": "codex-auto-review", "hidden": True,
                 "supportedReasoningEfforts": [], "isDefault": False},
            ], "nextCursor": None}})
    return 0


def codex_exec() -> int:
    prompt_arg = ARGS[-1]
    stdin = read_stdin()
    schema_file = opt("--output-schema")
    schema = Path(schema_file).read_text() if schema_file else None
    record(stdin, output_schema=schema)
    model = opt("-m", "--model") or "gpt-5.2-codex"
    effort = None
    for i, arg in enumerate(ARGS):
        if arg == "-c" and ARGS[i + 1].startswith("model_reasoning_effort="):
            effort = ARGS[i + 1].split("=", 1)[1].strip('"')
    if SCENARIO == "hang":
        hang()
    thread_id = str(uuid.uuid4())
    if SCENARIO == "hang_before_thread":
        # Codex's recorder creates the rollout and keeps it open from session start; the
        # turn is under way (the prompt recorded) before `thread.started` reached stdout.
        day = Path(os.environ.get("CODEX_HOME", Path.home() / ".codex")) / "sessions" / "2026"
        day = day / "11" / "29"
        day.mkdir(parents=True, exist_ok=True)
        held = open(day / f"rollout-2026-11-29T20-00-00-{thread_id}.jsonl", "w",  # noqa: SIM115
                    encoding="utf-8")
        for line in (
            {"timestamp": TS, "type": "session_meta",
             "payload": {"id": thread_id, "cwd": os.getcwd(), "originator": "codex_exec",
                         "cli_version": "0.130.0"}},
            {"timestamp": TS, "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": stdin if prompt_arg == "-" else prompt_arg}]}},
        ):
            held.write(json.dumps(line) + "\n")
        held.flush()
        hang()
    out({"type": "thread.started", "thread_id": thread_id})
    out({"type": "turn.started"})
    if SCENARIO == "unknown_model":
        msg = ("{\"detail\":\"The '" + model + "' model is not supported when using Codex "
               "with a ChatGPT account.\"}")
        out({"type": "error", "message": msg})
        out({"type": "turn.failed", "error": {"message": msg}})
        return 1
    if SCENARIO == "quota":
        msg = ("You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), "
               "or try again at 9:00 PM.")
        out({"type": "error", "message": msg})
        out({"type": "turn.failed", "error": {"message": msg}})
        return 1
    if SCENARIO == "no_auth":
        msg = "unexpected status 401 Unauthorized: Missing bearer or basic authentication"
        out({"type": "turn.failed", "error": {"message": msg}})
        return 1
    observed_model, observed_effort = model, effort or "medium"
    if SCENARIO == "reroute":
        observed_model = "gpt-5.2"
        out({"type": "item.completed", "item": {
            "id": "item_0", "type": "error",
            "message": f"model rerouted: {model} -> gpt-5.2 (cyber_safety)"}})
    if SCENARIO == "mismatch":
        observed_model = "gpt-5.1-codex-mini"
    if SCENARIO == "lowered_effort":
        observed_effort = "medium"
    out({"type": "item.completed", "item": {"id": "item_1", "type": "reasoning",
                                            "text": "**Reading the archive**"}})
    out({"type": "item.completed", "item": {"id": "item_2", "type": "agent_message",
                                            "text": ANSWER}})
    out({"type": "turn.completed", "usage": {"input_tokens": 2476, "cached_input_tokens": 2048,
                                             "output_tokens": 122}})
    if SCENARIO != "no_rollout":
        home = Path(os.environ.get("CODEX_HOME", Path.home() / ".codex"))
        day = home / "sessions" / "2026" / "11" / "29"
        day.mkdir(parents=True, exist_ok=True)
        lines: list[dict[str, Any]] = [
            {"timestamp": TS, "type": "session_meta",
             "payload": {"id": thread_id, "cwd": os.getcwd(), "originator": "codex_exec",
                         "cli_version": "0.130.0"}},
            {"timestamp": TS, "type": "turn_context",
             "payload": {"cwd": os.getcwd(), "approval_policy": "never",
                         "sandbox_policy": {"type": "read-only"}, "model": observed_model,
                         "effort": observed_effort, "summary": "auto"}},
        ]
        if SCENARIO == "no_effort_report":  # TurnContextItem.effort is skipped when None
            del lines[1]["payload"]["effort"]
        # the conversation itself, as a real rollout holds it (FORMATS.md: response_item)
        prompt = stdin if prompt_arg == "-" else prompt_arg
        lines += [
            {"timestamp": TS, "type": "response_item",
             "payload": {"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": prompt}]}},
            {"timestamp": TS, "type": "response_item",
             "payload": {"type": "message", "role": "assistant",
                         "content": [{"type": "output_text", "text": ANSWER}]}},
        ]
        (day / f"rollout-2026-11-29T20-00-00-{thread_id}.jsonl").write_text(
            "".join(json.dumps(x) + "\n" for x in lines))
    del prompt_arg
    return 0


# --- claude --------------------------------------------------------------------------------

CLAUDE_RESOLVE = {"opus": "claude-opus-5", "sonnet": "claude-sonnet-5",
                  "haiku": "claude-haiku-4-5", "fable": "claude-fable-5"}


def claude() -> int:
    stdin = read_stdin()
    record(stdin)
    if SCENARIO == "hang":
        hang()
    model = opt("--model") or "claude-sonnet-5"
    resolved = CLAUDE_RESOLVE.get(model, model)
    effort = opt("--effort")
    schema = opt("--json-schema")
    session = str(uuid.uuid4())
    init = {"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": session,
            "tools": ["Bash", "Read"], "mcp_servers": [], "model": resolved,
            "permissionMode": "default", "slash_commands": [], "apiKeySource": "none",
            "output_style": "default", "uuid": str(uuid.uuid4())}
    # Claude lowers an unsupported effort silently; hooks see the level actually used.
    used_effort = "high" if SCENARIO == "lowered_effort" or not effort else effort
    hooks = json.loads(opt("--settings") or "{}").get("hooks", {})

    def run_hooks(event: str, **fields: object) -> None:
        if SCENARIO == "no_effort_report" or "--bare" in ARGS:
            return
        payload = {"session_id": session, "transcript_path": "/tmp/t.jsonl",
                   "cwd": os.getcwd(), "permission_mode": "default",
                   "hook_event_name": event, "effort": {"level": used_effort}, **fields}
        for group in hooks.get(event, []):
            for hook in group.get("hooks", []):
                subprocess.run(hook["command"], shell=True, input=json.dumps(payload),
                               text=True, check=True)

    run_hooks("SessionStart", source="startup", model=resolved)
    result: dict[str, Any] = {"type": "result", "subtype": "success", "is_error": False,
              "duration_ms": 2100,
              "duration_api_ms": 1900, "num_turns": 1, "result": ANSWER, "session_id": session,
              "total_cost_usd": 0.0123, "usage": {"input_tokens": 12, "output_tokens": 40},
              "modelUsage": {resolved: {"inputTokens": 12, "outputTokens": 40},
                             "claude-haiku-4-5-20251001": {"inputTokens": 300,
                                                           "outputTokens": 9}},
              "permission_denials": [], "uuid": str(uuid.uuid4())}
    if SCENARIO in ("unknown_model", "quota", "no_auth"):
        out(init)
        text = {
            "unknown_model": f"There's an issue with the selected model ({model}). It may not "
                             "exist or you may not have access to it. Run --model to pick a "
                             "different model.",
            "quota": "Claude AI usage limit reached|1767225600",
            "no_auth": "Not logged in · Please run /login",
        }[SCENARIO]
        out({"type": "assistant", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "<synthetic>",
            "content": [{"type": "text", "text": text}]}, "parent_tool_use_id": None,
            "session_id": session})
        out(result | {"is_error": True, "result": text, "modelUsage": {}})
        return 1
    answer_model = resolved
    out(init)
    if SCENARIO == "reroute":
        answer_model = "claude-opus-4-8"
        out({"type": "system", "subtype": "model_refusal_fallback", "direction": "retry",
             "originalModel": resolved, "fallback_model": "claude-opus-4-8", "level": "warning",
             "trigger": "refusal",
             "content": "Fable 5's safety measures flagged this message. Switched to Opus 4.8."})
        result["modelUsage"][answer_model] = {"inputTokens": 5, "outputTokens": 5}
    if SCENARIO == "mismatch":
        answer_model = "claude-sonnet-4-6"
    if SCENARIO == "silent_switch":  # same family, another model, and no system event
        answer_model = "claude-opus-4-8"
        result["modelUsage"][answer_model] = {"inputTokens": 5, "outputTokens": 5}
    out({"type": "assistant", "message": {
        "id": "msg_2", "type": "message", "role": "assistant", "model": answer_model,
        "content": [{"type": "text", "text": ANSWER}], "stop_reason": None,
        "usage": {"input_tokens": 12, "output_tokens": 40}},
        "parent_tool_use_id": None, "session_id": session})
    if schema:
        with contextlib.suppress(json.JSONDecodeError):
            result["structured_output"] = json.loads(ANSWER)
    run_hooks("Stop", stop_hook_active=False, last_assistant_message=ANSWER)
    out(result)
    return 0


# --- gemini --------------------------------------------------------------------------------


def gemini() -> int:
    stdin = read_stdin()
    record(stdin)
    if SCENARIO == "hang":
        hang()
    model = opt("-m", "--model") or "gemini-2.5-pro"
    session = str(uuid.uuid4())
    out({"type": "init", "timestamp": TS, "session_id": session, "model": model})
    prompt = opt("-p", "--prompt") or stdin
    out({"type": "message", "timestamp": TS, "role": "user", "content": prompt[:200]})
    if SCENARIO == "no_auth":
        sys.stderr.write("Please set an Auth method in your settings.json or specify one of the "
                         "following environment variables before running: GEMINI_API_KEY\n")
        return 41
    if SCENARIO in ("unknown_model", "quota"):
        error = {"unknown_model": {"type": "ModelNotFoundError",
                                   "message": "Requested entity was not found.", "code": 404},
                 "quota": {"type": "TerminalQuotaError",
                           "message": "You have exhausted your daily quota on this model.",
                           "code": 429}}[SCENARIO]
        out({"type": "error", "timestamp": TS, "severity": "error", "message": error["message"]})
        out({"type": "result", "timestamp": TS, "status": "error", "error": error,
             "stats": {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0,
                       "duration_ms": 10, "tool_calls": 0}})
        return 1
    if SCENARIO == "empty":  # 0.61.0: exit 0, a bare error result, a start-up note on stderr
        sys.stderr.write("Ripgrep is not available. Falling back to GrepTool.\n")
        out({"type": "error", "timestamp": TS, "severity": "error",
             "message": "The model returned an empty response with no text or thoughts."})
        out({"type": "result", "timestamp": TS, "status": "error", "stats": {
            "total_tokens": 15, "input_tokens": 10, "output_tokens": 5, "duration_ms": 10,
            "tool_calls": 0, "models": {model: {"total_tokens": 15}}}})
        return 0
    if SCENARIO == "silent_fallback":  # 0.61.0 stream-json stats: no roles, keyed by model
        out({"type": "message", "timestamp": TS, "role": "assistant", "content": ANSWER,
             "delta": True})
        out({"type": "result", "timestamp": TS, "status": "success", "stats": {
            "total_tokens": 15, "input_tokens": 10, "output_tokens": 5, "duration_ms": 10,
            "tool_calls": 0, "models": {"gemini-3.5-flash-lite": {"total_tokens": 0},
                                        "gemini-3.8-flash": {"total_tokens": 15}}}})
        return 0
    main_model = model
    if SCENARIO == "reroute":
        main_model = "gemini-2.5-flash"
        out({"type": "error", "timestamp": TS, "severity": "warning",
             "message": f"Switched to fallback model {main_model}"})
    if SCENARIO == "mismatch":
        main_model = "gemini-2.5-flash"
    half = len(ANSWER) // 2
    out({"type": "message", "timestamp": TS, "role": "assistant", "content": ANSWER[:half],
         "delta": True})
    out({"type": "message", "timestamp": TS, "role": "assistant", "content": ANSWER[half:],
         "delta": True})
    out({"type": "result", "timestamp": TS, "status": "success", "stats": {
        "total_tokens": 52, "input_tokens": 40, "output_tokens": 12, "duration_ms": 900,
        "tool_calls": 0,
        "models": {
            main_model: {"tokens": {"input": 40, "candidates": 12},
                         "roles": {"main": {"totalRequests": 1}}},
            "gemini-2.5-flash-lite": {"tokens": {"input": 90, "candidates": 3},
                                      "roles": {"utility_router": {"totalRequests": 1}}},
        }}})
    return 0


# --- opencode ------------------------------------------------------------------------------


def opencode() -> int:
    if ARGS[:1] == ["models"]:
        record("", mode="models")
        if SCENARIO == "discovery_fail":
            sys.stderr.write("Error: failed to load providers\n")
            return 1
        if SCENARIO == "discovery_hang":
            hang()
        print("anthropic/claude-sonnet-5-5")
        print(json.dumps({"id": "claude-sonnet-5-5", "providerID": "anthropic",
                          "variants": {"high": {}, "max": {}}}, indent=2))
        print("openai/gpt-5.2")
        print(json.dumps({"id": "gpt-5.2", "providerID": "openai",
                          "variants": {"minimal": {}, "low": {}, "medium": {}, "high": {}}},
                         indent=2))
        return 0
    if ARGS[:1] == ["export"]:
        record("", mode="export")
        state = STATE / f"opencode-{ARGS[1]}.json"
        if not state.exists():
            sys.stderr.write(f"Session not found: {ARGS[1]}\n")
            return 1
        saved = json.loads(state.read_text())
        print(json.dumps({"info": {"id": ARGS[1], "title": "fake"}, "messages": [
            {"info": {"id": "msg_u", "role": "user", "sessionID": ARGS[1]}, "parts": []},
            {"info": {"id": "msg_a", "role": "assistant", "sessionID": ARGS[1],
                      "providerID": saved["provider"], "modelID": saved["model"],
                      **({"variant": saved["variant"]} if saved["variant"] else {})},
             "parts": [{"type": "text", "text": ANSWER}]},
        ]}, indent=2))
        return 0
    stdin = read_stdin()
    record(stdin)
    if SCENARIO == "hang":
        hang()
    model = opt("-m", "--model") or "anthropic/claude-sonnet-5-5"
    variant = opt("--variant")
    session = "ses_" + uuid.uuid4().hex[:24]
    base = {"timestamp": 1764446400000, "sessionID": session}
    if SCENARIO in ("unknown_model", "quota", "no_auth"):
        provider_id, model_id = model.split("/", 1)
        error = {
            "unknown_model": {"name": "ProviderModelNotFoundError",
                              "data": {"providerID": provider_id, "modelID": model_id,
                                       "message": f"Model not found: {model}"}},
            "quota": {"name": "APIError",
                      "data": {"message": "You exceeded your current quota, please check your "
                                          "plan and billing details.", "statusCode": 429}},
            "no_auth": {"name": "ProviderAuthError",
                        "data": {"providerID": provider_id, "message": "API key is missing"}},
        }[SCENARIO]
        out(base | {"type": "error", "error": error})
        return 1
    provider_id, model_id = model.split("/", 1)
    observed_variant = variant
    if SCENARIO == "mismatch":
        model_id = "claude-haiku-5-5"
    if SCENARIO == "lowered_effort":
        observed_variant = "medium"
    (STATE / f"opencode-{session}.json").write_text(json.dumps(
        {"provider": provider_id, "model": model_id, "variant": observed_variant}))
    out(base | {"type": "step_start", "part": {"id": "prt_1", "sessionID": session,
                                               "messageID": "msg_a", "type": "step-start"}})
    out(base | {"type": "text", "part": {"id": "prt_2", "sessionID": session,
                                         "messageID": "msg_a", "type": "text", "text": ANSWER,
                                         "time": {"start": 1, "end": 2}}})
    out(base | {"type": "step_finish", "part": {
        "id": "prt_3", "sessionID": session, "messageID": "msg_a", "type": "step-finish",
        "reason": "stop", "cost": 0.001,
        "tokens": {"input": 40, "output": 12, "reasoning": 0, "cache": {"read": 0, "write": 0}}}})
    return 0


def run_tools() -> None:
    env = {k: v for k, v in os.environ.items() if k.startswith("WARDIAN_")}
    log = os.environ.get("FAKE_PROVIDER_TOOLS_LOG")
    for argv in json.loads(os.environ.get("FAKE_PROVIDER_TOOLS") or "[]"):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"argv": argv, "rc": done.returncode, "out": done.stdout,
                                     "err": done.stderr, "pid": os.getpid(),
                                     "env": env}) + "\n")
    ready = os.environ.get("FAKE_PROVIDER_READY")
    if ready:
        with open(ready, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "env": env}) + "\n")


def main() -> int:
    if not (TOOL == "codex" and ARGS[:1] == ["app-server"]):
        run_tools()
    if TOOL == "codex":
        return codex_app_server() if ARGS[:1] == ["app-server"] else codex_exec()
    if TOOL == "claude":
        return claude()
    if TOOL == "gemini":
        return gemini()
    if TOOL == "opencode":
        return opencode()
    sys.stderr.write(f"fake_provider: unknown tool {TOOL}\n")
    return 127


if __name__ == "__main__":
    sys.exit(main())
