"""The relevance floor's rule for questions in the store's own words (issue 19), on made-up
scores, and what `RecallIndex.recall_considered` reports about a query's words."""

from __future__ import annotations

import pytest

from wardian.memory.db import open_memory_db
from wardian.memory.models import Scope
from wardian.memory.ranking import (
    KNOWN_FLOOR,
    KNOWN_Z,
    MARGIN_COSINE,
    MARGIN_FLOOR,
    MARGIN_NEIGHBOURS,
    Candidate,
    Considered,
    fuse,
)
from wardian.memory.store import MemoryStore

AGENT = "eeeeeeee-0000-4000-8000-000000000005"


@pytest.fixture
def store(backend: str) -> MemoryStore:
    """A store on each backend (SQLite, then PostgreSQL: `backend` in tests/conftest.py)."""
    return MemoryStore(open_memory_db())


def _by_meaning(cosine: float, z: float, rowid: int = 1) -> Candidate:
    """A record sharing no word with the query (coverage 0), found by meaning alone."""
    return Candidate(rowid, coverage=0.0, cosine=cosine, z=z)


def test_evidence_is_cosine_plus_weighted_standing_out() -> None:
    assert _by_meaning(0.25, 2.5).evidence == 0.25 + KNOWN_Z * 2.5


def test_a_question_in_the_stores_words_passes_on_evidence_one_with_an_unknown_word_not() -> None:
    # Below the meaning-alone floor (cosine 0.4 and z 3) and the fused one (coverage 0.4):
    # only the rule for questions whose every word the store knows can pass it.
    z = 3.0
    cosine = KNOWN_FLOOR - KNOWN_Z * z + 0.01
    record = _by_meaning(cosine, z)
    assert cosine < 0.4
    assert record.passes(semantic=True, all_known=True)
    assert not record.passes(semantic=True, all_known=False)
    assert not record.passes(semantic=False, all_known=True)  # no cosines, no evidence
    assert [c.rowid for c in fuse([record], semantic=True, limit=5, all_known=True)] == [1]
    assert fuse([record], semantic=True, limit=5, all_known=False) == []


def test_just_under_the_evidence_floor_stays_empty_even_with_every_word_known() -> None:
    z = 2.0
    record = _by_meaning(KNOWN_FLOOR - KNOWN_Z * z - 0.01, z)
    assert fuse([record], semantic=True, limit=5, all_known=True) == []


def test_followers_of_a_known_words_answer_still_need_the_relaxed_floor() -> None:
    leader = _by_meaning(0.35, 3.0, rowid=1)
    follower = Candidate(2, coverage=0.45, cosine=0.1, z=0.2)  # relaxed by coverage
    stranger = Candidate(3, coverage=0.1, cosine=0.1, z=0.2)
    kept = fuse([stranger, follower, leader], semantic=True, limit=5, all_known=True)
    # The fused score orders them (0.275 before 0.175); the stranger clears nothing.
    assert [c.rowid for c in kept] == [2, 1]


def test_considered_all_known_needs_some_word() -> None:
    assert not Considered([], terms=0, unknown=0, semantic=True).all_known
    assert Considered([], terms=2, unknown=0, semantic=True).all_known
    assert not Considered([], terms=2, unknown=1, semantic=True).all_known


def test_recall_considered_counts_words_no_record_holds(store: MemoryStore) -> None:
    store.save(AGENT, "The quokka feeder refills at dawn", evidence="e",
               scope=Scope.workspace("/w/zoo"), actor="t")
    # Another workspace's words count as known: the statistics are the store's.
    store.save(AGENT, "Marmalade jars are sterilised first", evidence="e",
               scope=Scope.workspace("/w/kitchen"), actor="t")
    seen = store.index.recall_considered(AGENT, "when does the quokka feeder refill",
                                   workspace="/w/zoo")
    assert (seen.terms, seen.unknown, seen.all_known) == (3, 0, True)
    assert seen.candidates
    odd = store.index.recall_considered(AGENT, "quokka marmalade zeppelin", workspace="/w/zoo")
    assert (odd.terms, odd.unknown, odd.all_known) == (3, 1, False)
    empty = store.index.recall_considered(AGENT, "what is it", workspace="/w/zoo")
    assert (empty.terms, empty.candidates) == (0, [])


def test_a_record_answering_the_part_the_passing_ones_leave_follows_them() -> None:
    # "how do I water the ferns and feed the koi": the passing record is about the ferns.
    ferns = Candidate(1, coverage=0.7, cosine=0.3, z=1.0,
                      held={"water": 1.0, "ferns": 2.0})
    koi = Candidate(2, coverage=0.3, cosine=0.1, z=0.2, held={"feed": 1.0, "koi": 2.5})
    water_only = Candidate(3, coverage=0.3, cosine=0.1, z=0.2, held={"water": 1.0})
    feed_only = Candidate(4, coverage=0.1, cosine=0.1, z=0.2, held={"feed": 1.0})
    kept = fuse([ferns, koi, water_only, feed_only], semantic=True, limit=5)
    # The koi record holds all of the rest (feed + koi); "water" is answered already and
    # "feed" alone is less than half of what is left.
    assert [c.rowid for c in kept] == [1, 2]


def test_covers_rest_is_more_than_half_of_the_uncovered_weight() -> None:
    from wardian.memory.ranking import covers_rest

    rest = {"feed": 1.0, "koi": 2.5}
    assert covers_rest(Candidate(1, held={"koi": 2.5}), rest)
    assert not covers_rest(Candidate(1, held={"feed": 1.0}), rest)
    assert not covers_rest(Candidate(1, held={"koi": 2.5}), {})
    # Nothing follows a question that nothing answers.
    assert fuse([Candidate(1, coverage=0.3, held={"koi": 2.5})], semantic=True, limit=5) == []


def test_the_nearest_record_passes_when_it_stands_apart_from_its_neighbours() -> None:
    # Weak by every other rule (no shared word, cosine 0.3, z 1): only the margin, how far
    # it stands above the next nearest records, can pass it.
    nearest = _by_meaning(0.3, 1.0, rowid=1)
    other = _by_meaning(0.12, 0.2, rowid=2)
    assert not nearest.passes(semantic=True, all_known=True)
    kept = fuse([other, nearest], semantic=True, limit=5, margin=MARGIN_FLOOR)
    assert [c.rowid for c in kept] == [1]
    assert fuse([other, nearest], semantic=True, limit=5, margin=MARGIN_FLOOR - 0.01) == []
    assert fuse([other, nearest], semantic=True, limit=5, margin=None) == []
    # Without cosines there is no nearest by meaning.
    assert fuse([other, nearest], semantic=False, limit=5, margin=MARGIN_FLOOR) == []


def test_a_far_record_does_not_pass_on_its_lead_over_records_farther_still() -> None:
    # Every record of the scope is far from the question (cosine 0.14): one leading the
    # rest by the margin is noise ahead of noise, not an answer in other words.
    far = _by_meaning(MARGIN_COSINE - 0.11, 1.0, rowid=1)
    farther = _by_meaning(-0.05, -1.0, rowid=2)
    assert fuse([farther, far], semantic=True, limit=5, margin=MARGIN_FLOOR + 0.05) == []
    near = _by_meaning(MARGIN_COSINE, 1.0, rowid=1)
    kept = fuse([farther, near], semantic=True, limit=5, margin=MARGIN_FLOOR)
    assert [c.rowid for c in kept] == [1]


BILLING = (
    "The Orbix billing service deploys to Kubernetes via the Helm chart in "
    "deploy/orbix-billing; never kubectl apply by hand.",
    "Use Postgres 15 for local development; the docker-compose file pins postgres:15.4.",
    "Invoice IDs follow the format INV-YYYY-NNNNNN and are generated by invoice_seq in the "
    "ledger schema.",
    "Currency amounts are stored as integer minor units (cents), never floats.",
    "Feature flag ORBIX_FF_TAXCALC_V2 gates the new tax calculation; it is off in production.",
    "Migration 0042_split_customers is half done: the backfill ran on staging but not prod.",
    "Run the linter with make lint before committing; CI rejects ruff warnings.",
)
"""A made-up project an operator tried (stop 28's fresh-clone trial)."""


def test_reported_a_question_in_words_the_store_never_saw_is_not_answered_on_margin(
        store: MemoryStore) -> None:
    # Reported: "what is the office wifi password?" came back with the Helm deploy record
    # as a match. Its three words are in no record, the best cosine was 0.139, and it led
    # the next five by 0.161, just past the margin floor.
    if store.index.embedder() is None:
        pytest.skip("the optional embedding model is not installed")
    for text in BILLING:
        store.save(AGENT, text, evidence="e", scope=Scope.workspace("/w/orbix"), actor="t")
    store.save(AGENT, "The user prefers pytest fixtures over unittest setUp methods.",
               evidence="e", scope=Scope.agent(), actor="t")
    for question in ("what is the office wifi password?", "what is the office wifi password"):
        assert store.index.recall(AGENT, question, workspace="/w/orbix") == []
    assert store.index.recall(AGENT, "ORBIX_FF_TAXCALC_V2", workspace="/w/orbix")


def test_recall_considered_measures_the_margin_against_the_next_nearest(
        store: MemoryStore) -> None:
    import math

    embedder = store.index.embedder()
    if embedder is None:
        pytest.skip("the optional embedding model is not installed")
    texts = ["Kiln shelves are vacuumed before every glaze firing",
             "The pottery van is booked through the front desk",
             "Clay orders above forty kilos need the treasurer's signature",
             "Studio keys are returned to the lockbox at night",
             "Beginners throw on the two slow wheels by the window",
             "Glaze buckets are stirred for a full minute before dipping",
             "The gallery shelf is restocked on Saturday mornings"]
    question = "how do we clean the oven racks"
    for text in texts[:MARGIN_NEIGHBOURS]:
        store.save(AGENT, text, evidence="e", scope=Scope.workspace("/w/studio"), actor="t")
    # No more records than neighbours to measure against: no margin.
    assert store.index.recall_considered(AGENT, question, workspace="/w/studio").margin is None
    for text in texts[MARGIN_NEIGHBOURS:]:
        store.save(AGENT, text, evidence="e", scope=Scope.workspace("/w/studio"), actor="t")
    # Another workspace's record is not a neighbour.
    store.save(AGENT, "Oven racks are scrubbed with soda", evidence="e",
               scope=Scope.workspace("/w/kitchen"), actor="t")
    seen = store.index.recall_considered(AGENT, question, workspace="/w/studio")
    query = embedder.embed(question)
    assert query is not None

    def cosine(text: str) -> float:
        vector = embedder.embed(text)
        assert vector is not None
        return sum(a * b for a, b in zip(vector, query, strict=True))

    near = sorted(map(cosine, texts), reverse=True)[: MARGIN_NEIGHBOURS + 1]
    expected = near[0] - sum(near[1:]) / MARGIN_NEIGHBOURS
    assert seen.margin is not None
    assert math.isclose(seen.margin, expected, abs_tol=2e-3)  # vectors are stored as float16


def test_once_something_fits_the_best_few_that_stand_out_follow() -> None:
    from wardian.memory.ranking import FOLLOW_RANK, FOLLOW_Z

    # "which tools check the glaze recipes": one record passes on coverage; the second
    # answer shares no word with the question and is too weak for the relaxed floor, but
    # it is among the best few by fused score and stands out from the scope.
    leader = Candidate(1, coverage=0.8, cosine=0.4, z=3.0, held={"glaze": 2.0})
    second = _by_meaning(0.22, FOLLOW_Z, rowid=2)
    flat = _by_meaning(0.21, FOLLOW_Z - 0.01, rowid=3)  # near, but like any other record
    assert not second.passes_relaxed(semantic=True)
    kept = fuse([flat, second, leader], semantic=True, limit=5)
    assert [c.rowid for c in kept] == [1, 2]
    # Only the best few: the same record ranked after FOLLOW_RANK others does not follow.
    crowd = [Candidate(10 + i, coverage=0.45, cosine=0.3, z=FOLLOW_Z - 0.5)
             for i in range(FOLLOW_RANK)]
    kept = fuse([second, leader, *crowd], semantic=True, limit=10)
    assert 2 not in [c.rowid for c in kept]
    assert len(kept) == 1 + FOLLOW_RANK  # the crowd follows by coverage (relaxed floor)
    # Nothing follows when nothing fits, and without cosines nothing stands out.
    assert fuse([second, flat], semantic=True, limit=5) == []
    lexical = fuse([leader, second], semantic=False, limit=5)
    assert [c.rowid for c in lexical] == [1]


@pytest.mark.parametrize(("query", "workspace", "embedded"), [
    ("how often are ottermoor's backups rotated", "/w/ottermoor",
     "how often are backups rotated"),
    ("Ottermoor deploy steps", "/w/ottermoor/", "deploy steps"),
    ("does the tide-gauge app log to loki", "C:\\src\\tide-gauge", "does the app log to loki"),
    ("ottermoor", "/w/ottermoor", "ottermoor"),  # nothing else to ask about: kept
    ("what is ottermoor", "/w/ottermoor", "what is ottermoor"),
    ("how often are backups rotated", "/w/ottermoor", "how often are backups rotated"),
    ("ottermoor backups", None, "ottermoor backups"),
    ("the app backups", "/w/my", "the app backups"),  # a name of stop words only
])
def test_the_embedded_query_leaves_out_the_workspaces_own_name(
        query: str, workspace: str | None, embedded: str) -> None:
    from wardian.memory.ranking import semantic_query

    assert semantic_query(query, workspace) == embedded


def test_recall_weighs_a_question_naming_its_workspace_as_one_that_does_not(
        store: MemoryStore) -> None:
    if store.index.embedder() is None:
        pytest.skip("the optional embedding model is not installed")
    here = "/w/ottermoor"
    for text in ("Ottermoor is a Rust service behind nginx",
                 "Ottermoor's logs go to Loki for fourteen days",
                 "Snapshots are rotated every Sunday and four are kept",
                 "Ottermoor runs on two hosts in Tromsø"):
        store.save(AGENT, text, evidence="e", scope=Scope.workspace(here), actor="t")

    def cosines(query: str, workspace: str | None) -> dict[int, float]:
        seen = store.index.recall_considered(AGENT, query, workspace=workspace)
        return {c.rowid: round(c.cosine, 6) for c in seen.candidates}

    named = cosines("how often are ottermoor backups replaced", here)
    assert named == cosines("how often are backups replaced", here)
    assert named  # by meaning: no record holds "backups" or "replaced"
    # Asked from no workspace (every scope), the name is what the question is about.
    assert cosines("how often are ottermoor backups replaced", None) != \
        cosines("how often are backups replaced", None)
