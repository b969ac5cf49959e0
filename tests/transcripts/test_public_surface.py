"""Pin the public surface of wardian.transcripts (contract "Transcripts")."""

from __future__ import annotations

import ast
from pathlib import Path

import wardian.transcripts as transcripts


def test_public_surface() -> None:
    assert set(transcripts.__all__) == {
        "FORMATS",
        "KINDS",
        "MAX_TOOL_OUTPUT_BYTES",
        "Conversation",
        "Message",
        "TranscriptFormatError",
        "TranscriptNotFound",
        "classify_user_text",
        "detect_format",
        "load_transcript",
        "parse_text",
    }
    assert transcripts.FORMATS == ("claude-code", "codex", "gemini", "opencode", "generic")


def test_imports_nothing_above_config() -> None:
    allowed = {"wardian.transcripts", "wardian.errors", "wardian.config"}
    root = Path(transcripts.__file__).parent
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("wardian")
            ):
                assert any(node.module == a or node.module.startswith(a + ".") for a in allowed), (
                    f"{path.name} imports {node.module}"
                )
