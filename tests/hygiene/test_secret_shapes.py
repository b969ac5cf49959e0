"""The scanner on secrets by shape (`tests.hygiene.secret_shapes`): every secret of every
shape is found and wholly redacted, no near-miss of any shape is flagged, and each shape
has at least 40 of each."""

from __future__ import annotations

import pytest

from tests.hygiene.secret_shapes import SHAPES
from wardian.memory.secret_scan import redact, scan

SECRETS = [(shape, text, value) for shape, (secrets, _) in SHAPES.items()
           for text, value in secrets]
NEAR = [(shape, text) for shape, (_, near) in SHAPES.items() for text in near]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_shape_has_forty_secrets_and_forty_near_misses(shape: str) -> None:
    secrets, near = SHAPES[shape]
    assert len(secrets) >= 40 and len(near) >= 40, (len(secrets), len(near))
    assert all(text.count(value) == 1 for text, value in secrets)


@pytest.mark.parametrize(("shape", "text", "value"), SECRETS,
                         ids=[f"{s}-{i}" for i, (s, _, _) in enumerate(SECRETS)])
def test_the_secret_is_found_and_wholly_redacted(shape: str, text: str, value: str) -> None:
    assert scan(text), f"nothing found in {text!r}"
    redacted, _ = redact(text)
    assert value not in redacted, redacted
    tail = value[-6:] if len(value) > 8 else None
    assert tail is None or tail not in redacted, redacted


@pytest.mark.parametrize(("shape", "text"), NEAR,
                         ids=[f"{s}-{i}" for i, (s, _) in enumerate(NEAR)])
def test_the_near_miss_is_not_flagged(shape: str, text: str) -> None:
    assert [f.detector for f in scan(text)] == [], text
