"""Every corpus transcript normalises cleanly (read from ../shared/corpus; skipped if absent)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from wardian.transcripts import load_transcript

FILES = {
    "claude-code/spotter-phx-server-short.jsonl": "claude-code",
    "claude-code/spotter-xterm-scrollback-tool-heavy.jsonl": "claude-code",
    "claude-code/spotter-create-beads-skill.jsonl": "claude-code",
    "claude-code/spotter-compaction-sidechain.jsonl": "claude-code",
    "claude-code/jgive-rails-home-assignment.jsonl": "claude-code",
    "claude-code/fundwise-roadmap-zerion-demo.jsonl": "claude-code",
    "claude-code/entire-fmt-with-lint-claude-md-slice.jsonl": "claude-code",
    "claude-code/entire-checkpoint-trailer-lesson.jsonl": "claude-code",
    "claude-code/entire-global-gitignore-debugging.jsonl": "claude-code",
    "codex/legacy-codex-session-viewer-corrections.jsonl": "codex",
    "codex/rollout-fundwise-apply-grant-export.jsonl": "codex",
    "gemini/entire-gemini-color-file-self-correction.json": "gemini",
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_corpus_file_loads(corpus_dir: Path, name: str) -> None:
    path = corpus_dir / name
    if not path.exists():
        pytest.skip(f"{name} not in the corpus")
    conv = load_transcript(path)
    assert conv.provider == FILES[name]
    assert conv.malformed_lines == 0
    assert conv.messages and [m.seq for m in conv.messages] == list(range(len(conv.messages)))
    assert all(m.role in ("user", "assistant", "tool") for m in conv.messages)
    assert all(len(m.text.encode()) <= 8 * 1024 for m in conv.messages if m.role == "tool")


def _kinds(corpus_dir: Path, name: str) -> Counter[tuple[str, str]]:
    return Counter((m.role, m.kind) for m in load_transcript(corpus_dir / name).messages)


def test_corpus_injected_text_is_not_human(corpus_dir: Path) -> None:
    short = _kinds(corpus_dir, "claude-code/spotter-phx-server-short.jsonl")
    assert short[("user", "text")] == 1  # "mix phx.server doesnt seem to start"
    assert short[("tool", "tool_rejection")] == 2
    assert short[("user", "interrupt")] == 1
    assert short[("user", "command")] == 2  # /model echo and its stdout
    skill = _kinds(corpus_dir, "claude-code/spotter-create-beads-skill.jsonl")
    assert skill[("user", "injected")] == 1 and skill[("user", "command")] == 1
    compaction = _kinds(corpus_dir, "claude-code/spotter-compaction-sidechain.jsonl")
    assert compaction[("user", "text")] == 0 and compaction[("user", "compaction")] == 1
    rollout = _kinds(corpus_dir, "codex/rollout-fundwise-apply-grant-export.jsonl")
    assert rollout[("user", "text")] == 1  # event_msg mirror de-duplicated
    legacy = load_transcript(corpus_dir / "codex/legacy-codex-session-viewer-corrections.jsonl")
    assert legacy.meta["format"] == "codex-legacy"
    assert sum(1 for m in legacy.messages if m.role == "user") == 47
    assert legacy.messages[0].kind == "injected"  # <user_instructions> (AGENTS.md)
