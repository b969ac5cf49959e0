"""A memory review's page over real HTTP: its operations with their records, linked from
the queue and the agent's page; the accepted subset becomes its own plan with its own
digest (all accepted = the drafted plan itself); a stale review, bad indices, another
agent's run and a POST without the CSRF token are refused with nothing changed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import building_home, copy_home
from tests.web._reviews import draft_review, memory_rows, seed_reviewable
from tests.web._support import garden_server, get, save_aged, seed_agent, update


@dataclass(frozen=True)
class Drafted:
    """A home with `seed_reviewable`'s agent and its drafted review."""

    home: Path
    agent: str
    ids: dict[str, str]
    review: dict[str, Any]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Drafted:
    """The seeded agent and its review, drafted once for the module by the real CLI."""
    with building_home(tmp_path_factory.mktemp("drafted")) as home:
        agent, ids = seed_reviewable()
        review = draft_review(home)
    return Drafted(home, agent, ids, review)


@pytest.fixture
def drafted(prepared: Drafted, wardian_home: Path) -> Drafted:
    """This test's own copy of the prepared home, as WARDIAN_HOME."""
    copy_home(prepared.home, wardian_home)
    return Drafted(wardian_home, prepared.agent, dict(prepared.ids), dict(prepared.review))


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no CSRF field"
    return found.group(1)


def _open(client: httpx.Client, garden: Any, path: str) -> httpx.Response:
    client.get(garden.url)  # the token link sets the session cookie
    return client.get(path)


def test_the_review_page_shows_each_operation_and_is_linked(
        drafted: Drafted, wardian_home: Path) -> None:
    agent, ids, review = drafted.agent, drafted.ids, drafted.review
    run = review["run_id"]
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        queue = _open(client, garden, "/queue").text
        assert f'href="{garden.base_path}/agents/{agent}/reviews/{run}"' in queue
        memory = client.get(f"/agents/{agent}").text
        assert f'href="{garden.base_path}/agents/{agent}/reviews/{run}"' in memory
        page = client.get(f"/agents/{agent}/reviews/{run}")
        assert page.status_code == 200
        html = page.text
        assert 'id="review-state">pending<' in html
        assert review["digest_prefix"] in html and review["drafted_at"] in html
        assert re.findall(r'name="accept" value="(\d+)" id="accept-\d+" checked', html) == [
            "0", "1", "2"]
        assert 'class="badge op">merge<' in html and 'class="badge op">retire<' in html
        for key in ("stale", "yarn", "lint", "lint_again"):
            assert f'data-id="{ids[key]}"' in html, key
        assert "Always lint the changelog before tagging" in html
        assert "memory review (contradiction)" in html
        assert 'id="review-apply">Apply reviewed plan' in html  # enabled


def test_all_accepted_previews_the_drafted_plan_and_a_subset_gets_its_own_digest(
        drafted: Drafted, wardian_home: Path) -> None:
    agent, review = drafted.agent, drafted.review
    run = review["run_id"]
    before = memory_rows()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        csrf = _csrf(_open(client, garden, f"/agents/{agent}/reviews/{run}").text)
        url = f"/agents/{agent}/reviews/{run}/apply"
        full = client.post(url, data={"csrf": csrf, "accept": ["0", "1", "2"]})
        assert full.status_code == 200
        assert f'id="digest-prefix">{review["digest_prefix"]}<' in full.text
        part = client.post(url, data={"csrf": csrf, "accept": ["2", "0"]})
        assert part.status_code == 200
        digest = re.search(r'id="digest-prefix">(sha256:[0-9a-f]{12})<', part.text)
        assert digest and digest.group(1) != review["digest_prefix"]
        assert f"review:{run}:ops-0,2" in part.text  # its own idempotency key
        assert 'id="counts">2 (retire 1, retire_into 1)' in part.text
        assert f'name="review" value="{run}"' in part.text
    assert memory_rows() == before  # previews write nothing


def test_a_stale_review_shows_its_conflicts_and_apply_is_refused(
        drafted: Drafted, wardian_home: Path) -> None:
    agent, ids, review = drafted.agent, drafted.ids, drafted.review
    run = review["run_id"]
    update(ids["yarn"], text="Use yarn for the storybook and the docs site")
    before = memory_rows()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        html = _open(client, garden, f"/agents/{agent}/reviews/{run}").text
        assert 'id="review-state">stale<' in html
        assert "CONFLICT <b>revision_changed</b>" in html and ids["yarn"] in html
        assert 'id="apply-disabled-reason">This review is stale' in html
        assert '<button type="submit" id="review-apply" disabled>' in html
        refused = client.post(f"/agents/{agent}/reviews/{run}/apply",
                              data={"csrf": _csrf(html), "accept": ["0", "2"]})
        assert refused.status_code == 409
        assert f"review {run[:8]} is stale" in refused.text
        assert "Nothing was changed" in refused.text and "Traceback" not in refused.text
    assert memory_rows() == before


@pytest.mark.parametrize(("accept", "said"), [
    (["3"], "operation 3 is out of range"),
    (["0", "0"], "operation 0 is accepted twice"),
    (["one"], "&#39;one&#39; is no operation index"),
    (["-1"], "&#39;-1&#39; is no operation index"),
    ([], "nothing to apply"),
])
def test_bad_indices_are_an_error_page_naming_the_field(
        drafted: Drafted, wardian_home: Path, accept: list[str], said: str) -> None:
    agent, run = drafted.agent, drafted.review["run_id"]
    before = memory_rows()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        csrf = _csrf(_open(client, garden, f"/agents/{agent}/reviews/{run}").text)
        answer = client.post(f"/agents/{agent}/reviews/{run}/apply",
                             data={"csrf": csrf, "accept": accept})
        assert answer.status_code == 422, answer.text
        assert said in answer.text
        assert 'id="error-field">Field: <code>accept</code>' in answer.text
        assert f'href="{garden.base_path}/agents/{agent}/reviews/{run}" id="back">Back to '\
               'the review<' in answer.text
    assert memory_rows() == before


def test_another_agents_run_is_not_found(drafted: Drafted, wardian_home: Path) -> None:
    ada, run = drafted.agent, drafted.review["run_id"]
    bo = seed_agent("bo")
    before = memory_rows()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        page = _open(client, garden, f"/agents/{bo}/reviews/{run}")
        assert page.status_code == 404
        assert f"run {run[:8]} drafted no memory review" in page.text
        csrf = _csrf(client.get(f"/agents/{ada}/reviews/{run}").text)
        posted = client.post(f"/agents/{bo}/reviews/{run}/apply",
                             data={"csrf": csrf, "accept": ["0"]})
        assert posted.status_code == 404
        assert client.get(f"/agents/{bo}/reviews/not-a-run").status_code == 404
    assert memory_rows() == before


def test_the_apply_post_needs_the_csrf_token(drafted: Drafted, wardian_home: Path) -> None:
    agent, run = drafted.agent, drafted.review["run_id"]
    before = memory_rows()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        _open(client, garden, f"/agents/{agent}/reviews/{run}")
        for data in ({"accept": ["0"]}, {"csrf": "forged", "accept": ["0"]}):
            refused = client.post(f"/agents/{agent}/reviews/{run}/apply", data=data)
            assert refused.status_code == 403
            assert "no valid CSRF token" in refused.text
    assert memory_rows() == before


def _confirm_fields(html: str) -> dict[str, str]:
    """The confirmation dialog's hidden fields (plan text, review, the values shown)."""
    import html as entities

    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">',
                             html[html.index('id="confirm-dialog"'):]))
    text = re.search(r'<textarea name="plan_text" hidden>(.*?)</textarea>',
                     html[html.index('id="confirm-dialog"'):], re.S)
    assert text
    fields["plan_text"] = entities.unescape(text.group(1))
    return {k: entities.unescape(v) for k, v in fields.items()}


def test_decline_leads_back_to_the_review_and_accepting_all_applies_it(
        drafted: Drafted, wardian_home: Path) -> None:
    agent, ids, review = drafted.agent, drafted.ids, drafted.review
    run = review["run_id"]
    before = memory_rows()
    with garden_server(wardian_home) as garden, httpx.Client(
            base_url=garden.base, follow_redirects=True) as client:
        csrf = _csrf(_open(client, garden, f"/agents/{agent}/reviews/{run}").text)
        url = f"/agents/{agent}/reviews/{run}/apply"
        preview = client.post(url, data={"csrf": csrf, "accept": ["1"]}).text
        fields = _confirm_fields(preview)
        assert fields["review"] == run and fields["confirm_count"] == "1"
        declined = client.post(f"/agents/{agent}/maintain/apply",
                               data={**fields, "decision": "decline"})
        assert declined.url.path == f"{garden.base_path}/agents/{agent}/reviews/{run}"
        assert 'id="notice">Declined: nothing was changed.' in declined.text
        assert memory_rows() == before

        preview = client.post(url, data={"csrf": csrf, "accept": ["0", "1", "2"]}).text
        fields = _confirm_fields(preview)
        assert fields["confirm_digest"] == review["digest_prefix"]
        applied = client.post(f"/agents/{agent}/maintain/apply",
                              data={**fields, "decision": "apply"})
        assert applied.status_code == 200 and 'id="outcome">Applied.' in applied.text
        assert f'/agents/{agent}/reviews/{run}" id="back-to-review"' in applied.text
        page = client.get(f"/agents/{agent}/reviews/{run}").text
        assert 'id="review-state">applied<' in page
        assert '<button type="submit" id="review-apply" disabled>' in page
    assert memory_rows() != before
    assert get(ids["yarn"]).status == "removed" and get(ids["plain"]).status == "active"


def test_a_long_subset_gets_a_short_key_and_still_validates(wardian_home: Path) -> None:
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.reviews import review_subset_plan

    agent = seed_agent("ada")
    letters = "abcdefghijklmnopqrstuvwxyz"
    for i in range(60):  # sixty stale checkpoints sharing no word: no duplicate findings
        words = " ".join(f"{letters[i % 26]}{letters[i // 26]}{k}q" for k in "abcde")
        save_aged(agent, f"Pending: {words}", days=40)
    review = draft_review(wardian_home)
    assert review["operations"] == 60
    before = memory_rows()
    accepted = [str(i) for i in range(60) if i != 7]
    subset = review_subset_plan(open_state_db(), open_memory_db(), review["run_id"], agent,
                                accepted)
    key = subset.document["idempotency_key"]
    assert key.startswith(f"review:{review['run_id']}:ops-sha256-") and len(key) < 100
    assert subset.accepted == [i for i in range(60) if i != 7]
    assert len(subset.plan.operations) == 59 and subset.plan.agent_id == agent
    again = review_subset_plan(open_state_db(), open_memory_db(), review["run_id"], agent,
                               list(reversed(accepted)))
    assert again.document["idempotency_key"] == key  # the same subset, whatever the order
    assert memory_rows() == before
