"""Durable bullets of instruction files (`wardian.memory.instruction_files`), on made-up
Markdown: what counts, what is skipped and why, line numbers and evidence."""

from __future__ import annotations

from wardian.memory.instruction_files import parse_instructions
from wardian.memory.models import MAX_TEXT_CHARS

SAMPLE = """---
owner: platform team
- not a bullet, front matter
---
# Conventions

- Deploys go through the **staging** cluster first
- Testing:
  - Run `make check` before pushing,
    and never skip the lint step
* [ ] migrate the CI runners
* [x] rename the default branch
1. Commit messages explain *why* the change is needed
- [Architecture](docs/arch.md)
- Yes

```markdown
- an example bullet inside a code fence
```

<!--
- a commented-out rule
-->
## Tooling
+ The formatter is [black](https://black.readthedocs.io), line length 88
"""


def test_durable_bullets_with_lines_evidence_and_headings() -> None:
    parsed = parse_instructions(SAMPLE)
    assert [(b.line, b.text, b.heading) for b in parsed.bullets] == [
        (7, "Deploys go through the staging cluster first", "Conventions"),
        (9, "Run `make check` before pushing, and never skip the lint step", "Conventions"),
        (13, "Commit messages explain why the change is needed", "Conventions"),
        (25, "The formatter is black, line length 88", "Tooling"),
    ]
    assert parsed.bullets[0].evidence == "- Deploys go through the **staging** cluster first"
    assert parsed.bullets[1].evidence == "  - Run `make check` before pushing,"
    assert parsed.skipped == {"a lead-in": 1, "a task item": 2, "only a link": 1,
                              "fewer than two words": 1, "in code": 1, "in a comment": 1}


def test_crlf_bom_and_over_limit_items() -> None:
    text = "\ufeff- First rule here\r\n- " + "w " * (MAX_TEXT_CHARS // 2 + 10) + "\r\n"
    parsed = parse_instructions(text)
    assert [b.text for b in parsed.bullets] == ["First rule here"]
    assert parsed.skipped == {"over the text limit": 1}


def test_no_bullets_at_all() -> None:
    parsed = parse_instructions("# Title\n\nJust prose, no list.\n")
    assert parsed.bullets == [] and not parsed.skipped
