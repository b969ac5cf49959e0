"""The record page's forms over real HTTP: every bad input gives an error page naming the
field and changes nothing; the web guard covers every new POST; a good form only previews
(nothing changes until the confirmation), and the dialog's answer goes through the same
apply as a pasted plan. (The browser walks are in test_record_controls.py.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.web._support import Garden, garden_server, get, save, seed_agent, update


@contextmanager
def _client(garden: Garden) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=garden.base, follow_redirects=True) as client:
        assert client.get(garden.url).status_code == 200  # follows the token redirect
        yield client


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="(\w+)"', page)
    assert found
    return found.group(1)


def _hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, name
    return found.group(1)


def _state() -> tuple[int, int, list[tuple[str, str, str]]]:
    """(revisions, receipts, every record's id/status/current revision): what a refused
    form must leave as it was."""
    from wardian.memory.db import open_memory_db
    from wardian.memory.store import MemoryStore

    store = MemoryStore(open_memory_db())
    def count(table: str) -> int:
        return int(store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    rows = store.conn.execute(
        "SELECT id, status, current_revision_id FROM records ORDER BY id").fetchall()
    return count("revisions"), count("maintenance_receipts"), [
        (str(r[0]), str(r[1]), str(r[2])) for r in rows]


@pytest.fixture
def seeded(wardian_home: Path) -> Iterator[tuple[Garden, dict[str, Any]]]:
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    ada = seed_agent("ada")
    bo = seed_agent("bo")
    note = save(ada, "Build needs Rust 1.79", kind="stable")
    keep = save(ada, "Build needs Rust 1.80")
    store = MemoryStore(open_memory_db())
    gone = store.save(ada, "Old rule about tabs", evidence="e", scope=Scope.agent(),
                      actor="test")
    store.remove(None, gone.id, actor="test", reason="superseded")
    theirs = save(bo, "Bo's own note")
    with garden_server(wardian_home) as garden:
        yield garden, {"ada": ada, "note": note, "keep": keep, "gone": gone,
                       "theirs": theirs}


def _refused(client: httpx.Client, path: str, data: dict[str, str], *, status: int,
             field: str, says: str) -> None:
    before = _state()
    answer = client.post(path, data=data)
    assert answer.status_code == status, answer.text[-600:]
    assert f"Field: <code>{field}</code>" in answer.text, answer.text[-600:]
    assert says in answer.text, answer.text[-600:]
    assert "Apply reviewed plan" not in answer.text
    assert 'id="back"' in answer.text  # back to the record
    assert _state() == before, "a refused form changes nothing"


def test_bad_retire_and_revise_forms_name_the_field(
        seeded: tuple[Garden, dict[str, Any]]) -> None:
    garden, s = seeded
    note = s["note"]
    with _client(garden) as client:
        page = client.get(f"/records/{note.id}").text
        base = {"csrf": _csrf(page), "revision": _hidden(page, "revision")}
        assert base["revision"] == note.current_revision_id
        retire, revise = f"/records/{note.id}/retire", f"/records/{note.id}/revise"
        _refused(client, retire, {**base, "reason": "  "}, status=422, field="reason",
                 says="the reason is empty")
        good = {"text": note.text, "kind": "stable", "scope": "workspace",
                "workspace_path": "/srv/project"}
        _refused(client, revise, {**base, **good, "text": " \n"}, status=422,
                 field="text", says="the text is empty")
        _refused(client, revise, {**base, **good, "kind": "fuzzy"}, status=422,
                 field="kind", says="unknown kind &#39;fuzzy&#39;")
        _refused(client, revise, {**base, **good, "scope": "planet"}, status=422,
                 field="scope", says="unknown scope")
        _refused(client, revise, {**base, **good, "workspace_path": "srv/project"},
                 status=422, field="workspace_path", says="absolute path")
        _refused(client, revise, {**base, **good}, status=422, field="text",
                 says="nothing to revise")
        _refused(client, revise, {**base, **good, "text": "x" * 9000}, status=422,
                 field="text", says="the limit is 8192")
        _refused(client, retire, {**base, "reason": "token ghp_" + "a1B2" * 9}, status=422,
                 field="reason", says="secret")


def test_bad_merge_forms_name_the_field(seeded: tuple[Garden, dict[str, Any]]) -> None:
    garden, s = seeded
    note = s["note"]
    with _client(garden) as client:
        page = client.get(f"/records/{note.id}").text
        options = re.findall(r'<option value="([0-9a-f-]{36})"', page)
        assert options == [s["keep"].id], "only the agent's other active records"
        base = {"csrf": _csrf(page), "revision": note.current_revision_id}
        merge = f"/records/{note.id}/merge"
        for into, says in ((note.id, "cannot be merged into itself"),
                           (s["gone"].id, "is removed"),
                           (s["theirs"].id, "belongs to another agent"),
                           ("ffffffff", "no record has id"),
                           ("", "no record to merge into")):
            _refused(client, merge, {**base, "into": into}, status=422, field="into",
                     says=says)


def test_a_stale_or_removed_record_is_refused(seeded: tuple[Garden, dict[str, Any]]
                                              ) -> None:
    garden, s = seeded
    note = s["note"]
    with _client(garden) as client:
        page = client.get(f"/records/{note.id}").text
        shown = {"csrf": _csrf(page), "revision": _hidden(page, "revision")}
        update(note.id, text="Build needs Rust 1.81", reason="changed elsewhere")
        for action, fields in (("retire", {"reason": "old"}),
                               ("revise", {"text": "x", "kind": "stable", "scope": "agent"}),
                               ("merge", {"into": s["keep"].id})):
            _refused(client, f"/records/{note.id}/{action}", {**shown, **fields},
                     status=409, field="revision", says="changed after this page was shown")
        gone = s["gone"]
        assert 'id="controls"' not in client.get(f"/records/{gone.id}").text
        _refused(client, f"/records/{gone.id}/retire",
                 {"csrf": shown["csrf"], "revision": gone.current_revision_id,
                  "reason": "again"}, status=422, field="record", says="already removed")
        missing = client.post("/records/ffffffff/retire",
                              data={"csrf": shown["csrf"], "revision": "r", "reason": "x"})
        assert missing.status_code == 404 and "ffffffff" in missing.text


def test_the_guard_covers_the_new_forms(seeded: tuple[Garden, dict[str, Any]]) -> None:
    garden, s = seeded
    note = s["note"]
    fields = {"revision": note.current_revision_id, "reason": "old", "text": "t",
              "kind": "stable", "scope": "agent", "into": s["keep"].id}
    before = _state()
    with _client(garden) as client:
        for action in ("retire", "revise", "merge"):
            path = f"/records/{note.id}/{action}"
            assert client.post(path, data=fields).status_code == 403  # no CSRF token
            assert client.post(path, data={**fields, "csrf": "0" * 64}).status_code == 403
            csrf = _csrf(client.get(f"/records/{note.id}").text)
            cross = client.post(path, data={**fields, "csrf": csrf},
                                headers={"Origin": "http://evil.example"})
            assert cross.status_code == 403
    with httpx.Client(base_url=garden.base) as stranger:  # no cookie, no token
        assert stranger.post(f"/records/{note.id}/retire", data=fields).status_code == 403
    assert _state() == before


def test_a_form_only_previews_and_the_dialog_applies_or_declines(
        seeded: tuple[Garden, dict[str, Any]]) -> None:
    """Without script: the form's preview changes nothing; the confirmation page carries
    the record, Decline returns to it, Apply stores the receipt and links back to it."""
    garden, s = seeded
    note = s["note"]
    with _client(garden) as client:
        page = client.get(f"/records/{note.id}").text
        before = _state()
        preview = client.post(f"/records/{note.id}/retire", data={
            "csrf": _csrf(page), "revision": note.current_revision_id,
            "reason": "Superseded."})
        assert preview.status_code == 200 and 'id="digest-prefix"' in preview.text
        assert _state() == before
        plan_text = re.search(r'<textarea name="plan_text" hidden>(.*?)</textarea>',
                              preview.text, re.S)
        assert plan_text
        import html

        plan = html.unescape(plan_text.group(1))
        owner = s["ada"]
        shown = client.post(f"/agents/{owner}/maintain/confirm", data={
            "csrf": _csrf(page), "plan_text": plan, "record": note.id})
        dialog = {"csrf": _csrf(page), "plan_text": plan, "record": note.id,
                  "confirm_owner": _hidden(shown.text, "confirm_owner"),
                  "confirm_count": _hidden(shown.text, "confirm_count"),
                  "confirm_digest": _hidden(shown.text, "confirm_digest")}
        declined = client.post(f"/agents/{owner}/maintain/apply",
                               data={**dialog, "decision": "decline"})
        assert declined.url.path.endswith(f"/records/{note.id}")
        assert "nothing was changed" in declined.text and _state() == before
        again = client.post(f"/records/{note.id}/retire", data={  # a decline drops the preview
            "csrf": _csrf(page), "revision": note.current_revision_id,
            "reason": "Superseded."})
        assert again.status_code == 200
        applied = client.post(f"/agents/{owner}/maintain/apply",
                              data={**dialog, "decision": "apply"})
        assert applied.status_code == 200 and 'id="outcome">Applied.' in applied.text
        assert f'href="{garden.base_path}/records/{note.id}" id="back-to-record"' in \
            applied.text
        assert get(note.id).status == "removed"


def test_a_record_changed_after_its_preview_is_not_applied(
        seeded: tuple[Garden, dict[str, Any]]) -> None:
    """The record moves on between preview and confirmation: the apply refuses, the
    error leads back to the record, and nothing of the plan is written."""
    import html

    garden, s = seeded
    note = s["note"]
    with _client(garden) as client:
        page = client.get(f"/records/{note.id}").text
        csrf = _csrf(page)
        preview = client.post(f"/records/{note.id}/revise", data={
            "csrf": csrf, "revision": note.current_revision_id, "text": "Rust 1.80",
            "kind": "stable", "scope": "agent"})
        assert preview.status_code == 200 and 'id="from-record"' in preview.text
        found = re.search(r'<textarea name="plan_text" hidden>(.*?)</textarea>',
                          preview.text, re.S)
        assert found
        plan = html.unescape(found.group(1))
        update(note.id, text="Build needs Rust 1.81", reason="changed elsewhere")
        before = _state()
        owner = s["ada"]
        applied = client.post(f"/agents/{owner}/maintain/apply", data={
            "csrf": csrf, "plan_text": plan, "record": note.id, "decision": "apply",
            "confirm_owner": _hidden(preview.text, "confirm_owner"),
            "confirm_count": _hidden(preview.text, "confirm_count"),
            "confirm_digest": _hidden(preview.text, "confirm_digest")})
        assert applied.status_code in (409, 422), applied.text[-600:]
        assert "Nothing was changed" in applied.text and 'id="back"' in applied.text
        assert _state() == before and get(note.id).text == "Build needs Rust 1.81"
