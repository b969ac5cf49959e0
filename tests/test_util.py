"""Small shared helpers (`wardian._util`)."""

from __future__ import annotations

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
