"""``wardian automation trial``: text rendering of a curator trial (service: `wardian.app.trial`).

Everything fits 100 columns: one header line per session, one line per change (wrapped),
its evidence excerpt indented below; with ``--compare`` two 48-column halves, A left, B right.
"""

from __future__ import annotations

import textwrap
from typing import Any

from wardian.cli._common import stdout

__all__ = ["render_compare", "render_trial"]

WIDTH = 100
_MARK = {"save": "+", "update": "~", "remove": "-"}


def _scope(change: dict[str, Any]) -> str:
    scope = change.get("scope") or {}
    return "agent" if scope.get("kind") == "agent" else "workspace"


def _header(index: int, total: int, session: dict[str, Any]) -> str:
    seq = session.get("seq_range")
    when = str(session.get("imported_at") or "")[:16].replace("T", " ")
    ident = str(session.get("session_id") or session["conversation_id"])[:20]
    line = (f"session {index}/{total}  {ident}  {when} UTC  {session['messages']} messages"
            + (f"  seq {seq[0]}-{seq[1]}" if seq else ""))
    workspace = str(session.get("workspace") or "")
    room = WIDTH - len(line) - len("  in ")
    if workspace and room > 8:
        line += "  in " + (workspace if len(workspace) <= room else "..." + workspace[3 - room:])
    return line


def _change_lines(change: dict[str, Any], width: int) -> list[str]:
    head = f"{_MARK.get(change['op'], '?')} {change['op']:6} {change.get('kind') or '-':7} " \
           f"{_scope(change):9} "
    lines = textwrap.wrap(str(change.get("text") or ""), width=width - len(head)) or [""]
    out = [head + lines[0]] + [" " * len(head) + rest for rest in lines[1:]]
    pad = " " * len(head)
    if change.get("previous_text"):
        out += textwrap.wrap(f"was: {change['previous_text']}", width=width,
                             initial_indent=pad, subsequent_indent=pad + "     ")
    if change.get("evidence"):
        out += textwrap.wrap(f'evidence: "{change["evidence"]}"', width=width,
                             initial_indent=pad, subsequent_indent=pad + "          ")
    return out


def _dropped_line(dropped: list[dict[str, Any]]) -> str | None:
    if not dropped:
        return None
    codes: dict[str, int] = {}
    for item in dropped:
        codes[item["code"]] = codes.get(item["code"], 0) + 1
    return "  dropped: " + ", ".join(f"{code} {n}" for code, n in sorted(codes.items()))


def render_trial(doc: dict[str, Any]) -> None:
    """Print a `wardian.app.trial.run_trial` document for a reader (100 columns)."""
    stdout(f"trial of {doc['blueprint']} for {doc['agent']['name']}: "
           f"last {len(doc['sessions'])} archived session(s), in a scratch copy")
    total = len(doc["sessions"])
    for index, session in enumerate(doc["sessions"], 1):
        stdout("")
        stdout(_header(index, total, session))
        if session["run_status"] != "succeeded":
            stdout(textwrap.shorten(f"  run {session['run_status']}: "
                                    f"{session.get('error') or '-'}", width=WIDTH))
        if not session["changes"]:
            stdout("  (no change)")
        for change in session["changes"]:
            for line in _change_lines(change, WIDTH - 2):
                stdout("  " + line)
        dropped = _dropped_line(session["dropped"])
        if dropped:
            stdout(dropped)
    t = doc["totals"]
    stdout("")
    stdout(f"would save {t['save']}, update {t['update']}, remove {t['remove']}; "
           f"dropped {t['dropped']}; failed runs {t['failed']} of {t['sessions']}")
    stdout(_tokens_line(t))


def _tokens_line(totals: dict[str, Any]) -> str:
    """The tokens the host reported, or that it reported none (the builtin uses none)."""
    if "input_tokens" not in totals:
        return "tokens: none reported"
    return (f"tokens: {totals['input_tokens']} in, {totals['output_tokens']} out "
            f"(reported for {totals['sessions_with_tokens']} of {totals['sessions']} runs)")


_HALF = 48


def _cell(change: dict[str, Any]) -> list[str]:
    head = f"{_MARK.get(change['op'], '?')} {change.get('kind') or '-'}/{_scope(change)}: "
    return textwrap.wrap(head + str(change.get("text") or ""), width=_HALF,
                         subsequent_indent="  ")


def _side_by_side(left: list[str], right: list[str]) -> list[str]:
    rows = max(len(left), len(right))
    left += [""] * (rows - len(left))
    right += [""] * (rows - len(right))
    return [f"{a:<{_HALF}} | {b}".rstrip() for a, b in zip(left, right, strict=True)]


def render_compare(doc: dict[str, Any]) -> None:
    """Print a `wardian.app.trial.compare_trials` document side by side (100 columns)."""
    stdout(f"compare {doc['blueprint']} for {doc['agent']['name']}: "
           f"A (left) vs B (right), in scratch copies")
    for name in ("a", "b"):
        roles = doc[name]["assignments"]
        summary = "; ".join(
            f"{role}={a.get('provider') or a.get('target_type')}"
            + (f"/{a['model']}" if a.get("model") else "") for role, a in sorted(roles.items()))
        stdout(textwrap.shorten(f"  {name.upper()}: {summary}", width=WIDTH))
    total = len(doc["sessions"])
    for index, session in enumerate(doc["sessions"], 1):
        stdout("")
        stdout(_header(index, total, session))
        for name in ("a", "b"):
            status = session[f"run_status_{name}"]
            if status != "succeeded":
                stdout(textwrap.shorten(f"  run {name.upper()} {status}: "
                                        f"{session.get(f'error_{name}') or '-'}", width=WIDTH))
        stdout(f"{'A':<{_HALF}} | B")
        stdout(f"{'-' * _HALF}-+-{'-' * (WIDTH - _HALF - 3)}")
        if session["both"]:
            stdout("both:")
        for change in session["both"]:
            for line in _side_by_side(_cell(change), _cell({**change,
                                                            "text": change.get("text_b")})):
                stdout(line)
        if session["only_a"]:
            stdout("only in A:")
        for change in session["only_a"]:
            for line in _side_by_side(_cell(change), []):
                stdout(line)
        if session["only_b"]:
            stdout("only in B:")
        for change in session["only_b"]:
            for line in _side_by_side([], _cell(change)):
                stdout(line)
        if not (session["both"] or session["only_a"] or session["only_b"]):
            stdout("  (no change from either)")
    t = doc["totals"]
    stdout("")
    stdout(f"both {t['both']}, only in A {t['only_a']}, only in B {t['only_b']}")
    for name in ("a", "b"):
        stdout(f"{name.upper()} {_tokens_line(doc[name]['totals'])}")
