"""Garden's refusals over real HTTP (httpx against the real server on 127.0.0.1).

Issue 17: requests without the access token, with another Host header, or cross-site POSTs
without the CSRF token are refused; the server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import re
import socket
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.web._support import Garden, garden_server, save, seed_agent


@pytest.fixture
def garden(wardian_home: Path) -> Iterator[Garden]:
    agent = seed_agent("ada")
    save(agent, "Deploys need <script>alert(1)</script> the staging key rotated first")
    from wardian.config import open_state_db
    from wardian.invokers.store import InvokerStore

    store = InvokerStore(open_state_db())
    invoker = store.add("session-close", name="nightly tidy",
                        blueprint_id="no-such-blueprint", agent_id=agent, assignments={})
    store.set_enabled(invoker.id, True)
    with garden_server(wardian_home) as running:
        yield running


@contextmanager
def _client(garden: Garden) -> Iterator[httpx.Client]:
    """A client holding Garden's cookie, as a browser does after opening the URL."""
    with httpx.Client(base_url=garden.base, follow_redirects=False) as client:
        first = client.get(garden.url)
        assert first.status_code == 303
        assert first.headers["location"] == garden.base_path + "/"
        cookie = first.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert f"Path={garden.base_path}/" in cookie and garden.token not in cookie
        yield client


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', page)
    assert found, "the page embeds no CSRF token"
    return found.group(1)


def _invoker_enabled() -> bool:
    from wardian.config import open_state_db
    from wardian.invokers.store import InvokerStore

    store = InvokerStore(open_state_db())
    return store.list()[0].enabled


def test_prints_a_tokenised_url_on_127_0_0_1(garden: Garden) -> None:
    assert garden.url.startswith(f"{garden.base}/?token=")
    assert garden.base_path.startswith("/g/") and len(garden.base_path) == len("/g/") + 22
    assert garden.token not in garden.base_path
    assert len(garden.token) >= 40
    assert any("this machine only" in line for line in garden.output)


def test_requests_without_the_token_are_refused(garden: Garden) -> None:
    for url in ("/", "/runs", "/invokers", "/static/garden.js", "/?token=wrong" + "x" * 40):
        for origin in (garden.base, garden.root):
            refused = httpx.get(origin + url)
            assert refused.status_code == 403, url
            assert "access token" in refused.text
            assert "ada" not in refused.text
    forged = httpx.get(garden.base + "/", cookies={f"garden_session_{garden.port}": "guess"})
    assert forged.status_code == 403
    # The token opens pages only under the secret base path.
    assert httpx.get(f"{garden.root}/?token={garden.token}").status_code == 403


def test_the_token_opens_the_pages_and_text_is_escaped(garden: Garden) -> None:
    with _client(garden) as client:
        agents = client.get("/")
        assert agents.status_code == 200 and "ada" in agents.text
        assert "default-src 'none'" in agents.headers["content-security-policy"]
        assert agents.headers["x-frame-options"] == "DENY"
        agent_id = re.search(r'data-agent="([0-9a-f-]{36})"', agents.text)
        assert agent_id
        memory = client.get(f"/agents/{agent_id.group(1)}")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in memory.text
        assert "<script>alert(1)" not in memory.text


def test_another_host_header_is_refused(garden: Garden) -> None:
    with _client(garden) as client:
        for host in ("evil.example", f"evil.example:{garden.port}", f"127.0.0.1:{garden.port + 1}"):
            refused = client.get("/", headers={"Host": host})
            assert refused.status_code == 421, host
            assert "ada" not in refused.text
        assert client.get("/", headers={"Host": f"localhost:{garden.port}"}).status_code == 200


def test_posts_need_the_csrf_token_and_a_same_site_origin(garden: Garden) -> None:
    with _client(garden) as client:
        page = client.get("/invokers")
        assert "broken" in page.text and "no-such-blueprint" in page.text
        invoker = re.search(r'data-invoker="([0-9a-f-]{36})"', page.text)
        assert invoker
        action = f"/invokers/{invoker.group(1)}/enabled"
        token = _csrf(page.text)
        missing = client.post(action, data={"enabled": "false"})
        assert missing.status_code == 403 and "CSRF" in missing.text
        wrong = client.post(action, data={"enabled": "false", "csrf": "0" * 64})
        assert wrong.status_code == 403
        cross = client.post(action, data={"enabled": "false", "csrf": token},
                            headers={"Origin": "https://evil.example"})
        assert cross.status_code == 403 and "cross-site" in cross.text
        assert _invoker_enabled(), "a refused POST changed nothing"
        same = client.post(action, data={"enabled": "false", "csrf": token},
                           headers={"Origin": garden.root})
        assert same.status_code == 303
        assert not _invoker_enabled()


def test_listens_on_127_0_0_1_only(garden: Garden) -> None:
    # The whole of 127/8 is loopback on Linux: another address there reaches any server
    # bound to all interfaces, but not one bound to 127.0.0.1.
    with pytest.raises(OSError), socket.create_connection(("127.0.0.2", garden.port), 2):
        pass


def test_an_oversized_form_is_refused_before_reading(garden: Garden) -> None:
    with _client(garden) as client:
        agent = re.search(r'data-agent="([0-9a-f-]{36})"', client.get("/").text)
        assert agent
        page = client.get(f"/agents/{agent.group(1)}/maintain")
        huge = client.post(f"/agents/{agent.group(1)}/maintain/preview",
                           data={"csrf": _csrf(page.text), "plan_text": "x" * (4 << 20)})
        assert huge.status_code == 422 and "limit" in huge.text


def test_a_missing_record_gives_the_operators_hint(garden: Garden) -> None:
    # The operator browses Garden: the hint names their command, not the agent's own
    # `memory list` (as `garden memory show` says; issue 13).
    with _client(garden) as client:
        missing = client.get("/records/ffffffff")
    assert missing.status_code == 404 and "&#39;ffffffff&#39; not found" in missing.text
    assert "wardian garden memory list --agent NAME" in missing.text
    assert "see `memory list`" not in missing.text


def test_a_foreign_origin_is_refused_on_every_request(garden: Garden) -> None:
    with _client(garden) as client:
        for origin in ("https://evil.example", f"http://127.0.0.1:{garden.port + 1}", "null"):
            refused = client.get("/", headers={"Origin": origin})
            assert refused.status_code == 403 and "cross-site" in refused.text, origin
            assert "ada" not in refused.text
        assert client.get("/", headers={"Origin": garden.root}).status_code == 200


def test_the_session_cookie_is_not_the_token_and_works_only_under_the_base_path(
        garden: Garden) -> None:
    with _client(garden) as client:
        session = client.cookies.get(f"garden_session_{garden.port}")
        assert session and session != garden.token
        assert client.get("/").status_code == 200
    # The cookie alone, sent to a path outside the secret base (as a browser would send
    # a Path=/ cookie to any port), opens nothing.
    cookie = {"Cookie": f"garden_session_{garden.port}={session}"}
    assert httpx.get(f"{garden.root}/", headers=cookie).status_code == 403
    assert httpx.get(f"{garden.base}/", headers=cookie).status_code == 200


def test_open_puts_no_token_on_the_browser_command_line(
        wardian_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed_agent("ada")
    argv_file = tmp_path / "browser-argv.json"
    browser = tmp_path / "browser"
    browser.write_text("#!" + sys.executable + "\nimport json, sys\n"
                       f"open({str(argv_file)!r}, 'w').write(json.dumps(sys.argv))\n")
    browser.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(browser))
    with garden_server(wardian_home, "--open") as garden:
        # The browser ran (synchronously) before the URL was printed.
        argv = json.loads(argv_file.read_text())
        assert garden.token not in " ".join(argv)
        assert garden.base_path not in " ".join(argv)
        (opened,) = argv[1:]
        assert opened.startswith("file://")
        launcher = Path(urlsplit(opened).path)
        assert stat.S_IMODE(launcher.stat().st_mode) == 0o600
        assert garden.token not in launcher.read_text()
        link = re.search(r'url=(http://127\.0\.0\.1:\d+/open/[A-Za-z0-9_-]+)"',
                         launcher.read_text())
        assert link
        with httpx.Client(follow_redirects=False) as client:
            first = client.get(link.group(1))
            assert first.status_code == 303
            assert first.headers["location"] == garden.base_path + "/"
            page = client.get(garden.base + "/")
            assert page.status_code == 200 and "ada" in page.text
        # One time only: a second use (another user who saw the link) is refused.
        again = httpx.get(link.group(1), follow_redirects=False)
        assert again.status_code == 403 and "set-cookie" not in again.headers
    assert not launcher.exists()  # removed when the server stopped
