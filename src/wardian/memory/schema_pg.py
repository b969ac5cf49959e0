"""The ``memory`` schema on PostgreSQL: the same tables as `wardian.memory.schema`.

Migration 1 is SQLite's migrations 1-7 as they stand (a PostgreSQL database starts empty:
there is nothing older to upgrade, and `wardian db migrate --to` copies into it). Each
later change of ``memory.db`` appends one migration to both lists; a change of the
PostgreSQL side alone (migrations 2 and 3: how words are cut and folded) appends to this
one only.

Differences, all here:

* ``records.rowid`` is an explicit identity column (SQLite's implicit rowid), so recall's
  candidate ids and "newest first" windows mean the same on both.
* Full-text search: ``records.fts`` is a ``tsvector`` over text + evidence with a GIN
  index, kept by a trigger with the token count (``doclen``), in place of the FTS5 table
  and its triggers; `wardian.memory.fulltext_pg` scores as FTS5's ``bm25()`` does. Words
  are cut as FTS5's ``porter unicode61`` tokenizer cuts them (migration 2): ``fts_text``
  turns punctuation into spaces, the configuration ``wardian_fts`` stems with the
  original Porter algorithm and keeps stop words. Migration 3 makes ``fts_text`` apply
  unicode61's own table per character (`wardian.memory.fts_fold_pg`, read off SQLite):
  its separators, and its folds of case and Latin diacritics, which PostgreSQL does not
  do under a ``C`` ctype. Migration 5 stems as FTS5's own Porter code does
  (`wardian.memory.fts_porter_pg`: Snowball's ``porter`` differed on short words,
  ``-logy``/``-bly``, undoubling and non-ASCII words) and builds the ``tsvector`` and
  query from ``fts_text``'s words without PostgreSQL's parser, whose word classes follow
  the ctype: every word and code point now cuts, folds and stems as on SQLite under any
  ctype (``bench/stem_bench.py``).
* ``memory_version`` counts write transactions (SQLite's ``data_version``) for the recall
  caches.
* ``REAL`` is ``DOUBLE PRECISION`` (process start times need every bit), ``BLOB`` is
  ``BYTEA`` (the same little-endian float16 vectors).
"""

from __future__ import annotations

from collections.abc import Iterable

from wardian._db import NamedMigration
from wardian.memory.fts_fold_pg import FOLD, FOLDED, SEPARATORS
from wardian.memory.fts_porter_pg import migration_sql as _stem_as_fts5

__all__ = ["POSTGRES_MIGRATIONS"]


def _bracket(runs: Iterable[tuple[int, int]], *, negated: bool = False) -> str:
    """A regular-expression bracket of the code point `runs`, written as escapes."""
    def esc(c: int) -> str:
        return f"\\u{c:04x}" if c <= 0xFFFF else f"\\U{c:08x}"

    body = "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in runs)
    return f"[{'^' if negated else ''}{body}]"


def _fold_as_unicode61() -> str:
    """Migration 3's SQL (built from `wardian.memory.fts_fold_pg`, pinned by its digest)."""
    # translate() walks its list for each character: the common scripts' capitals first.
    common = ((0xC0, 0xFF), (0x100, 0x17F), (0x400, 0x4FF), (0x370, 0x3FF))

    def order(pair: tuple[int, int]) -> tuple[int, int]:
        return next((i for i, (a, b) in enumerate(common) if a <= pair[0] <= b),
                    len(common)), pair[0]

    kept = sorted((p for p in FOLD if p[1]), key=order)
    dropped = [p for p in FOLD if not p[1]]  # after `kept`: translate() drops the tail
    source = "".join(chr(c) for c, _ in (*kept, *dropped))
    target = "".join(chr(t) for _, t in kept)
    separator, fold, rest = (_bracket(SEPARATORS), _bracket(FOLDED),
                             _bracket(FOLDED, negated=True))
    return f"""
    -- FTS5's unicode61 per character: its separators become spaces, its word
    -- characters are folded (Ä, ä -> a; É -> e; a combining acute dropped). ASCII
    -- letters are left to the dictionaries, which lower-case them under every ctype;
    -- a text without a character to fold skips the fold.
    CREATE OR REPLACE FUNCTION fts_text(value TEXT) RETURNS TEXT
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        spaced TEXT := regexp_replace(value, '{separator}+', ' ', 'g');
    BEGIN
        IF spaced !~ '{fold}' THEN
            RETURN spaced;
        END IF;
        RETURN (SELECT string_agg(COALESCE(translate(x.m[1], '{source}', '{target}'),
                                           x.m[2]), '' ORDER BY x.n)
                FROM regexp_matches(spaced, '({fold}+)|({rest}+)', 'g')
                     WITH ORDINALITY AS x(m, n));
    END $fn$;

    ALTER TABLE records DISABLE TRIGGER records_fts_sync;
    UPDATE records SET fts = to_tsvector('wardian_fts', fts_text(text))
                             || to_tsvector('wardian_fts', fts_text(evidence))
        WHERE text || evidence ~ '[^[:space:]\\x20-\\x7e]';
    UPDATE records SET doclen = (SELECT COALESCE(sum(cardinality(positions)), 0)
                                 FROM unnest(fts))
        WHERE text || evidence ~ '[^[:space:]\\x20-\\x7e]';
    ALTER TABLE records ENABLE TRIGGER records_fts_sync;
    """

POSTGRES_MIGRATIONS: list[NamedMigration] = [
    NamedMigration("create_memory_schema", """
    CREATE TEXT SEARCH DICTIONARY wardian_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION wardian_fts (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION wardian_fts
        ALTER MAPPING FOR asciiword, word, asciihword, hword_asciipart, hword_part, hword
        WITH wardian_stem;

    CREATE TABLE records (
        id TEXT PRIMARY KEY,
        rowid BIGINT GENERATED BY DEFAULT AS IDENTITY UNIQUE,
        agent_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('stable', 'current')),
        scope_kind TEXT NOT NULL CHECK (scope_kind IN ('agent', 'workspace')),
        scope_path TEXT NOT NULL DEFAULT '',
        text TEXT NOT NULL,
        evidence TEXT NOT NULL CHECK (length(evidence) > 0),
        status TEXT NOT NULL CHECK (status IN ('active', 'removed')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        current_revision_id TEXT NOT NULL,
        removed_reason TEXT,
        flagged TEXT,
        fts tsvector NOT NULL DEFAULT '',
        doclen BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX records_agent_status ON records (agent_id, status, kind, scope_kind);
    CREATE INDEX records_updated ON records (agent_id, updated_at);
    CREATE INDEX records_startup
        ON records (agent_id, status, kind, scope_kind, scope_path, updated_at);
    CREATE INDEX records_page ON records (agent_id, status, updated_at, id);
    CREATE INDEX records_fts ON records USING GIN (fts);

    -- A counter that every write transaction moves (MemoryDB sets it up), as
    -- SQLite's data_version: caches of recall's totals and vectors compare it.
    CREATE TABLE memory_version (
        id BIGINT PRIMARY KEY CHECK (id = 1),
        changes BIGINT NOT NULL
    );
    INSERT INTO memory_version VALUES (1, 0);

    -- The index row of a record follows its text and evidence, as FTS5's triggers do.
    CREATE FUNCTION records_fts_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        IF TG_OP = 'UPDATE' AND NEW.text = OLD.text AND NEW.evidence = OLD.evidence THEN
            NEW.fts := OLD.fts;
            NEW.doclen := OLD.doclen;
            RETURN NEW;
        END IF;
        NEW.fts := to_tsvector('wardian_fts', NEW.text)
                   || to_tsvector('wardian_fts', NEW.evidence);
        NEW.doclen := (SELECT COALESCE(sum(cardinality(positions)), 0) FROM unnest(NEW.fts));
        RETURN NEW;
    END $fn$;
    CREATE TRIGGER records_fts_sync BEFORE INSERT OR UPDATE ON records
        FOR EACH ROW EXECUTE FUNCTION records_fts_sync();

    -- One query word's BM25 term for one record, as FTS5's bm25() computes it (k1 = 1.2,
    -- b = 0.75); `lexemes` are the word's stems (the frequency of a several-stem word is
    -- the mean of its stems').
    CREATE FUNCTION bm25_term(doc tsvector, doclen BIGINT, lexemes TEXT[],
                              idf DOUBLE PRECISION, avgdl DOUBLE PRECISION)
    RETURNS DOUBLE PRECISION LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN tf = 0 THEN 0.0
                    ELSE idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * doclen / avgdl)) END
        FROM (SELECT COALESCE(sum(cardinality(positions)), 0)::float8
                     / greatest(cardinality(lexemes), 1) AS tf
              FROM unnest(doc) WHERE lexeme = ANY(lexemes)) s
    $fn$;

    CREATE TABLE record_sources (
        record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
        position BIGINT NOT NULL,
        source_type TEXT NOT NULL,
        locator TEXT NOT NULL,
        is_primary BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (record_id, source_type, locator)
    );

    CREATE TABLE revisions (
        revision_id TEXT PRIMARY KEY,
        record_id TEXT NOT NULL REFERENCES records (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        snapshot_json TEXT NOT NULL,
        actor TEXT NOT NULL,
        reason TEXT,
        created_at TEXT NOT NULL,
        UNIQUE (record_id, seq)
    );

    CREATE TABLE capabilities (
        token_hash TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        pid BIGINT NOT NULL,
        process_started_at DOUBLE PRECISION NOT NULL,
        workspace TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT,
        revoked_reason TEXT
    );
    CREATE INDEX capabilities_agent ON capabilities (agent_id);

    CREATE TABLE loaded_events (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        pid BIGINT,
        process_started_at DOUBLE PRECISION,
        workspace TEXT,
        created_at TEXT NOT NULL,
        context TEXT NOT NULL,
        record_ids_json TEXT NOT NULL,
        omitted_count BIGINT NOT NULL DEFAULT 0,
        source TEXT NOT NULL
    );
    CREATE INDEX loaded_events_agent ON loaded_events (agent_id, created_at);

    CREATE TABLE maintenance_receipts (
        owner_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        plan_id TEXT NOT NULL,
        preview_digest TEXT NOT NULL,
        applied_at TEXT NOT NULL,
        receipt_json TEXT NOT NULL,
        PRIMARY KEY (owner_id, idempotency_key)
    );

    CREATE TABLE consolidation_receipts (
        agent_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        batch_digest TEXT NOT NULL,
        committed_at TEXT NOT NULL,
        result_json TEXT NOT NULL,
        PRIMARY KEY (agent_id, idempotency_key)
    );

    CREATE TABLE consolidation_cursors (
        agent_id TEXT PRIMARY KEY,
        cursor_seq BIGINT NOT NULL,
        updated_at TEXT NOT NULL,
        updated_by TEXT NOT NULL
    );

    CREATE TABLE launches (
        launch_id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        pid BIGINT NOT NULL,
        process_started_at DOUBLE PRECISION NOT NULL,
        workspace TEXT,
        memory_enabled BIGINT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX launches_process ON launches (pid, process_started_at);

    CREATE TABLE capability_refusals (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        at TEXT NOT NULL,
        holder_agent_id TEXT NOT NULL,
        holder_launch_id TEXT,
        caller_agent_id TEXT,
        caller_launch_id TEXT,
        caller_pid BIGINT NOT NULL,
        reason TEXT NOT NULL
    );

    CREATE TABLE record_vectors (
        record_id TEXT PRIMARY KEY REFERENCES records (id) ON DELETE CASCADE,
        revision_id TEXT NOT NULL,
        model TEXT NOT NULL,
        vector BYTEA NOT NULL
    );
    """),
    # 2: words as FTS5's ``porter unicode61`` tokenizer cuts them, so both backends find
    # and score the same records (the default parser kept ``heron.payments.v2`` and
    # ``pnpm-workspace.yaml`` whole, as host and file names, and the Snowball English
    # stemmer is Porter's second algorithm): punctuation separates words (`fts_text`),
    # words are stemmed with the original Porter algorithm; every row is indexed again.
    # And the trigger runs with the search_path it was created under, so a client
    # whose search_path lacks this schema (psql, a migration tool, another role) can
    # write records ("text search configuration does not exist" before).
    NamedMigration("fts_tokens_as_fts5", r"""
    ALTER TEXT SEARCH DICTIONARY wardian_stem (Language = porter);

    -- FTS5's unicode61 separators: whitespace and punctuation (ASCII, Latin-1, the
    -- general punctuation and CJK symbol blocks) become spaces before parsing.
    CREATE FUNCTION fts_text(value TEXT) RETURNS TEXT
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
        SELECT regexp_replace(value,
            '[[:space:]!-/:-@\[-`{-~\u00a1-\u00bf\u00d7\u00f7\u2000-\u206f\u3000-\u303f]+',
            ' ', 'g')
    $fn$;

    CREATE OR REPLACE FUNCTION records_fts_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        IF TG_OP = 'UPDATE' AND NEW.text = OLD.text AND NEW.evidence = OLD.evidence THEN
            NEW.fts := OLD.fts;
            NEW.doclen := OLD.doclen;
            RETURN NEW;
        END IF;
        NEW.fts := to_tsvector('wardian_fts', fts_text(NEW.text))
                   || to_tsvector('wardian_fts', fts_text(NEW.evidence));
        NEW.doclen := (SELECT COALESCE(sum(cardinality(positions)), 0) FROM unnest(NEW.fts));
        RETURN NEW;
    END $fn$;
    ALTER FUNCTION records_fts_sync() SET search_path FROM CURRENT;

    ALTER TABLE records DISABLE TRIGGER records_fts_sync;
    UPDATE records SET fts = to_tsvector('wardian_fts', fts_text(text))
                             || to_tsvector('wardian_fts', fts_text(evidence));
    UPDATE records SET doclen = (SELECT COALESCE(sum(cardinality(positions)), 0)
                                 FROM unnest(fts));
    ALTER TABLE records ENABLE TRIGGER records_fts_sync;
    """),
    # 3: non-ASCII words as unicode61 folds them (`_fold_as_unicode61`): under a ``C``
    # ctype PostgreSQL lower-cased only ASCII, so ``Ärger`` and ``ärger`` were different
    # words, and it kept the diacritics FTS5 drops (``école`` did not find ``ÉCOLE``);
    # the separators are unicode61's own (``→``, ``€`` and emoji split words; ``²``,
    # ``ª`` and ``µ`` are word characters). Records holding anything but printable
    # ASCII are indexed again.
    NamedMigration("fts_fold_as_unicode61", _fold_as_unicode61()),
    # 4: migration 1's per-word BM25 function; recall scores in one query since
    # (`wardian.memory.fulltext_pg.lexical_candidates`) and nothing calls it.
    NamedMigration("drop_bm25_term", """
    DROP FUNCTION bm25_term(tsvector, BIGINT, TEXT[], DOUBLE PRECISION, DOUBLE PRECISION);
    """),
    # 5: words stemmed as FTS5's porter stems them (`wardian.memory.fts_porter_pg`): the
    # Snowball dictionary disagreed on short words, -logy/-bly, undoubling after
    # -ed/-ing and non-ASCII words (1,272 of 19,753 made-up words, bench/stem_bench.py);
    # and words are cut at fts_text's spaces, not by PostgreSQL's parser, whose classes
    # follow the ctype (under a UTF-8 one it split words at characters unicode61 keeps,
    # such as symbols newer than Unicode 6.1, and left words with digits unstemmed).
    # Every row is indexed again.
    NamedMigration("fts_stem_as_fts5", _stem_as_fts5()),
    # 6: as SQLite's add_launch_namespaces: the pid and user namespace of a launch's
    # supervisor (NULL off Linux and for older rows).
    NamedMigration("add_launch_namespaces", """
    ALTER TABLE launches ADD COLUMN pid_ns BIGINT;
    ALTER TABLE launches ADD COLUMN user_ns BIGINT;
    ALTER TABLE capabilities ADD COLUMN pid_ns BIGINT;
    ALTER TABLE capabilities ADD COLUMN user_ns BIGINT;
    """),
]
