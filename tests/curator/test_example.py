"""The shipped example transcript (written by us, package data) and what the curator keeps."""

from __future__ import annotations

from importlib import resources

from wardian.curator import curate
from wardian.transcripts import detect_format, load_transcript


def _example() -> str:
    ref = resources.files("wardian.library") / "examples" / "claude-code-session.jsonl"
    return str(ref)


def test_example_is_real_claude_code_shape() -> None:
    path = _example()
    assert detect_format(path) == "claude-code"
    conv = load_transcript(path)
    assert conv.malformed_lines == 0 and conv.session_id and conv.cwd
    kinds = {m.kind for m in conv.messages}
    assert {
        "text",
        "tool_call",
        "tool_result",
        "tool_rejection",
        "injected",
        "command",
        "interrupt",
    } <= kinds


def test_curator_extracts_the_example_memories() -> None:
    conv = load_transcript(_example())
    ops = curate(
        {
            "messages": [m.to_json() for m in conv.messages],
            "records": [],
            "max_changes": 10,
            "include_tool_output": False,
            "workspace": conv.cwd,
        }
    )["operations"]
    texts = [op["text"].lower() for op in ops]

    def has(*words: str) -> list[dict[str, str]]:
        return [op for op, t in zip(ops, texts, strict=True) if all(w in t for w in words)]

    assert has("pnpm", "npm")  # package-manager convention / correction
    assert has("openapi")  # decision
    assert has(".gitignore")  # correction of the agent
    assert [op["scope"] for op in has("commit messages")] == ["agent"]  # cross-project
    assert [op["kind"] for op in has("safari")] == ["current"]  # left open at the end
    assert not has("e2e tests.")  # "Just for now" is one-off
    assert not any("model" in t or "interrupted" in t for t in texts)
    all_text = [m.text for m in conv.messages]
    assert all(any(op["evidence"] in t for t in all_text) for op in ops)


def test_byte_identical_across_processes_and_hash_seeds() -> None:
    import subprocess
    import sys

    code = (
        "import json,sys\n"
        "from wardian.transcripts import load_transcript\n"
        "from wardian.curator import curate\n"
        "c = load_transcript(sys.argv[1])\n"
        "p = {'messages': [m.to_json() for m in c.messages], 'records': [], 'max_changes': 10}\n"
        "sys.stdout.write(json.dumps(curate(p)))\n"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**__import__("os").environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code, _example()],
            capture_output=True,
            env=env,
            timeout=120,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1 and b'"operations"' in next(iter(outputs))
