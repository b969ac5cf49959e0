"""Wardian's opencode plugin: the file `wardian hooks install opencode` writes.

opencode has no hook settings; it runs the JavaScript plugins in its plugin folders
(``~/.config/opencode/plugins/`` for the user, ``.opencode/plugins/`` for a project). The
plugin Wardian installs carries the same hook entries the other hosts keep in their
settings files, as one JSON line (``HOOKS``), and runs them as those hosts do, with the
same JSON on stdin:

* ``SessionStart`` at a session's first model request (opencode's
  ``experimental.chat.system.transform`` plugin hook): the answer's ``additionalContext``
  (the agent's startup recall) is added to that session's system prompt on every request
  from then on, and its ``systemMessage`` ("Memory loaded · N records …") is shown as a
  toast in opencode's terminal UI (on stderr under ``opencode run``, which has none);
* ``SessionEnd`` when the opencode process exits, once for every session it ran: the hook
  reads the session from opencode's own database (`wardian.transcripts.opencode`).

A hook that fails, hangs past its ``timeout`` (seconds) or prints something unreadable
never stops opencode. `read_hooks` and `render` are the file's two directions; the install
logic (agents added, removed, the data dir embedded) is the other hosts'
(`wardian.runtime.hook_install`). Spec: docs/hosts.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from wardian.errors import ValidationError

__all__ = ["MARKER", "plugin_path", "read_hooks", "render"]

MARKER = "/* wardian-hooks */ const HOOKS = "
"""The start of the line that holds the hook entries as JSON (the rest of the line)."""

_TEMPLATE = """\
// Wardian's opencode plugin, written by `wardian hooks install opencode`: it runs Wardian's
// SessionStart hook at a session's first model request and adds the agent's memory to the
// system prompt, and its SessionEnd hook for each session when opencode exits. Change it
// with that command (`--agent NAME` adds an agent, `--uninstall` removes it); edits by hand
// are overwritten.
import { spawnSync } from "node:child_process";

@HOOKS@

// `opencode run` has no terminal UI to show a toast in: the line goes to stderr there.
const HEADLESS = process.argv.slice(2)[0] === "run";

function entry(event) {
  const groups = (HOOKS.hooks || {})[event] || [];
  return groups.length && groups[0].hooks && groups[0].hooks.length ? groups[0].hooks[0] : null;
}

function run(event, payload) {
  const hook = entry(event);
  if (!hook) return null;
  try {
    const done = spawnSync(hook.command, {
      shell: true, input: JSON.stringify(payload), encoding: "utf8",
      timeout: (hook.timeout || 10) * 1000, maxBuffer: 4 * 1024 * 1024,
    });
    if (done.stderr) process.stderr.write(done.stderr);
    return done.status === 0 ? done.stdout : null;
  } catch {
    return null;
  }
}

export const WardianMemory = async ({ client, directory }) => {
  const contexts = new Map();
  process.on("exit", () => {
    for (const id of contexts.keys()) {
      run("SessionEnd", { hook_event_name: "SessionEnd", session_id: id, cwd: directory,
                          reason: "exit" });
    }
  });
  return {
    "experimental.chat.system.transform": async (input, output) => {
      const id = input && input.sessionID;
      if (!id) return;
      if (!contexts.has(id)) {
        let answer = {};
        try {
          answer = JSON.parse(run("SessionStart", {
            hook_event_name: "SessionStart", session_id: id, cwd: directory,
            source: "startup" }) || "{}") || {};
        } catch {
          answer = {};
        }
        const context = (answer.hookSpecificOutput || {}).additionalContext || "";
        contexts.set(id, context);
        if (answer.systemMessage && HEADLESS) {
          process.stderr.write(answer.systemMessage + "\\n");
        } else if (answer.systemMessage && client && client.tui) {
          Promise.resolve()
            .then(() => client.tui.showToast({ body: { message: answer.systemMessage,
                                                       variant: "info" } }))
            .catch(() => {});
        }
      }
      const context = contexts.get(id);
      if (context) output.system.push(context);
    },
  };
};
"""


def plugin_path() -> Path:
    """The user's opencode plugin file Wardian writes: ``$XDG_CONFIG_HOME/opencode/plugins/
    wardian.js`` (``~/.config`` when unset), the folder opencode loads at every start."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    root = Path(base) if base else Path.home() / ".config"
    return root / "opencode" / "plugins" / "wardian.js"


def read_hooks(text: str, *, source: str) -> dict[str, Any]:
    """The hook entries a plugin file holds (``{"hooks": {...}}``); ``{}`` for an empty file.

    Raises:
        ValidationError: the file is not Wardian's plugin (no `MARKER` line), or that
            line's JSON is not an object: the file is left as it is.
    """
    if not text.strip():
        return {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith(MARKER):
            continue
        raw = line[len(MARKER):].rstrip().removesuffix(";")
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"line {number}: the hook entries are not valid JSON: "
                                  f"{exc.msg}", source=source,
                                  hint="remove the file and install again with `wardian "
                                       "hooks install opencode --agent NAME`") from exc
        if not isinstance(data, dict):
            raise ValidationError(f"line {number}: the hook entries must be a JSON object",
                                  source=source, hint="remove the file and install again")
        return data
    raise ValidationError(
        "this file is not Wardian's opencode plugin (it has no hook entries line), so "
        "Wardian does not overwrite it", source=source,
        hint="move it away, or pass --settings with another file name")


def render(data: dict[str, Any]) -> str:
    """The plugin file for hook entries `data` (one JSON line after `MARKER`)."""
    line = MARKER + json.dumps(data, ensure_ascii=True, separators=(",", ":")) + ";"
    return _TEMPLATE.replace("@HOOKS@", line)
