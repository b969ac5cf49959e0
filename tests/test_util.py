"""Small shared helpers (`wardian._util`)."""

from __future__ import annotations

import json
import uuid

from wardian._util import new_id


def test_new_id_is_a_random_uuid4_in_its_canonical_form() -> None:
    seen = set()
    for _ in range(2000):
        text = new_id()
        parsed = uuid.UUID(text)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert str(parsed) == text  # lower-case, hyphenated: what str(uuid.uuid4()) gives
        seen.add(text)
    assert len(seen) == 2000


def test_trailing_commas_are_dropped_outside_strings_only() -> None:
    from wardian._jsonc import strip_comments, strip_trailing_commas

    text = '{"a": [1, 2, ], "b": "x, }", "c": {"d": "\\\\", },\n}'
    cleaned = strip_trailing_commas(strip_comments(text))
    assert len(cleaned) == len(text)
    assert json.loads(cleaned) == {"a": [1, 2], "b": "x, }", "c": {"d": "\\"}}
