"""Garden's recall page over real HTTP: what the agent would get for a query — the matches,
or, when nothing fits, the nearest records labelled as such — never another workspace's,
another agent's or a removed record; bad input is an error page naming the field."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.web._support import garden_server, save, seed_agent

ALPHA, BETA = "/srv/alpha", "/srv/beta"


def _ids(html: str, list_id: str) -> list[str]:
    """The record ids of one list (``matches`` or ``nearest``) of the page, in order."""
    found = re.search(rf'<ol class="records [a-z]+" id="{list_id}">(.*?)</ol>', html, re.S)
    return re.findall(r'data-record="([0-9a-f-]{36})"', found.group(1)) if found else []


def _seed() -> dict[str, str]:
    from wardian.memory.db import open_memory_db
    from wardian.memory.models import Scope
    from wardian.memory.store import MemoryStore

    ada, bo = seed_agent("ada"), seed_agent("bo")
    ids = {
        "signing": save(ada, "Release builds are signed with the hardware key kept in the"
                        " office safe.", scope=Scope.workspace(ALPHA)).id,
        "tabs": save(ada, "Prefer tabs for indentation in Makefiles.", scope=Scope.agent()).id,
        "staging": save(ada, "The staging database is refreshed from production every"
                        " Monday night.", scope=Scope.workspace(BETA)).id,
        "ports": save(ada, "The web server listens on port 8443 behind the proxy.",
                      scope=Scope.workspace(ALPHA)).id,
        "gone": save(ada, "Release builds are signed by the old build server.",
                     scope=Scope.workspace(ALPHA)).id,
        "other": save(bo, "Release builds are signed on the CI runner.",
                      scope=Scope.workspace(ALPHA)).id,
        "ada": ada,
    }
    store = MemoryStore(open_memory_db())
    store.remove(None, ids["gone"], actor="test", reason="the old server is gone")
    return ids


def test_recall_page_shows_the_matches_from_the_chosen_workspace(wardian_home: Path) -> None:
    ids = _seed()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        client.get(garden.url)  # the launch URL sets Garden's cookie
        form = client.get(f"/agents/{ids['ada']}/recall")
        assert form.status_code == 200
        assert f'<option value="{ALPHA}"' in form.text and f'<option value="{BETA}"' in form.text
        assert "No record matches" not in form.text  # no query yet: the form only

        page = client.get(f"/agents/{ids['ada']}/recall",
                          params={"q": "how are release builds signed", "workspace": ALPHA})
        assert page.status_code == 200
        assert _ids(page.text, "matches")[:1] == [ids["signing"]]
        shown = set(_ids(page.text, "matches"))
        assert not shown & {ids["gone"], ids["other"], ids["staging"]}

        # From the other workspace the alpha record is out of reach: whatever is shown,
        # matches or nearest, comes from beta or the agent scope.
        page = client.get(f"/agents/{ids['ada']}/recall",
                          params={"q": "how are release builds signed", "workspace": BETA})
        shown = set(_ids(page.text, "matches")) | set(_ids(page.text, "nearest"))
        assert shown <= {ids["staging"], ids["tabs"]}


def test_nothing_fits_shows_the_nearest_records_labelled(wardian_home: Path) -> None:
    ids = _seed()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        client.get(garden.url)  # the launch URL sets Garden's cookie
        page = client.get(f"/agents/{ids['ada']}/recall",
                          params={"q": "what colour is the lobby carpet", "workspace": ALPHA})
        assert page.status_code == 200
        assert _ids(page.text, "matches") == []
        assert "No record matches “what colour is the lobby carpet”." in page.text
        nearest = _ids(page.text, "nearest")
        assert nearest, "nothing fits: the nearest records are shown"
        assert "below the relevance floor" in page.text
        assert set(nearest) <= {ids["signing"], ids["ports"], ids["tabs"]}


def test_bad_recall_input_is_an_error_page_naming_the_field(wardian_home: Path) -> None:
    ids = _seed()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        client.get(garden.url)  # the launch URL sets Garden's cookie
        page = client.get(f"/agents/{ids['ada']}/recall",
                          params={"q": "signing", "workspace": "/srv/nowhere"})
        assert page.status_code == 422 and "workspace" in page.text
        assert "/srv/nowhere" in page.text
        page = client.get(f"/agents/{ids['ada']}/recall", params={"q": "x" * 2001})
        assert page.status_code == 422 and "2000-character limit" in page.text
        page = client.get("/agents/no-such-agent/recall", params={"q": "signing"})
        assert page.status_code == 404
