"""FTS5's ``porter`` stemmer as PL/pgSQL, for the PostgreSQL ``memory`` schema.

SQLite's recall index stems each word with FTS5's own Porter code (``fts5_tokenize.c``);
PostgreSQL's Snowball ``porter`` dictionary is the same algorithm in another reading,
and the two disagree on whole kinds of words (measured by ``bench/stem_bench.py``):

* FTS5 leaves words under 3 bytes and over 64 bytes alone (``as``, ``is``; Snowball:
  ``a``, ``i``), and reads the words ``eed``, ``ies`` and ``sses`` by its length rules;
* FTS5 has the rules ``logi -> log`` and ``bli -> ble`` of Porter's own C version
  (``biology`` -> ``biolog``, ``possibly`` -> ``possibl``); Snowball has the paper's
  ``abli -> able`` and no ``logi``;
* FTS5 undoubles every consonant but ``l``, ``s`` and ``z`` after ``-ed``/``-ing``
  (``revving`` -> ``rev``, digits and ``y`` too); Snowball only ``bb`` … ``tt``;
* FTS5 counts bytes: each byte of a non-ASCII character is a consonant (``taøing`` ->
  ``taø``; Snowball, counting characters: ``taøe``).

`migration_sql` is the SQL of the migration that makes PostgreSQL cut and stem words as
FTS5 does: ``fts5_porter(word)`` is FTS5's algorithm step for step (on one character per
byte, so it counts as FTS5 counts); ``fts_stem(word)`` lower-cases ASCII and hands
the words where Snowball is known to agree (ASCII letters and digits, none of the shapes
above) to the Snowball dictionary, which is C and ~10x faster, and the rest to
``fts5_porter``; ``fts_vector(text)`` / ``fts_query(text)`` build the ``tsvector`` /
phrase ``tsquery`` of a text from ``fts_text``'s words without PostgreSQL's parser, whose
word classes follow the database's ctype (under a UTF-8 ctype it split words at
characters unicode61 keeps in words, and it left words with digits unstemmed).

One case cannot agree: where FTS5 undoubles the last two bytes of a multi-byte
character (``U+1041`` is ``E1 81 81``), SQLite indexes a token that is not UTF-8, which
PostgreSQL text cannot hold; ``fts5_porter`` writes the cut character as ``U+FFFD`` and
the hex of the bytes kept (unicode61 separates at ``U+FFFD``, so no typed word is
written so), which keeps such words matching each other as on SQLite.
"""

from __future__ import annotations

__all__ = ["STEP2", "STEP3", "STEP4", "migration_sql"]

STEP2: tuple[tuple[str, str], ...] = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("logi", "log"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"),
    ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)
"""FTS5's step 2, in its order (the first suffix that matches decides; condition m > 0)."""

STEP3: tuple[tuple[str, str], ...] = (
    ("ical", "ic"), ("ness", ""), ("icate", "ic"), ("iciti", "ic"), ("ful", ""),
    ("ative", ""), ("alize", "al"),
)
"""FTS5's step 3 (condition m > 0)."""

STEP4: tuple[str, ...] = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
    "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)
"""FTS5's step 4: suffixes removed where m > 1 (``ion`` also needs ``s`` or ``t`` before)."""

_WORDS = ("btrim(regexp_replace(translate(fts_text(value), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',"
          " 'abcdefghijklmnopqrstuvwxyz'), '  +', ' ', 'g'))")
"""A text's words as unicode61 leaves them, one space apart: fts_text folds all but
ASCII, which is lower-cased here (``lower()`` would follow the ctype); a word of
characters unicode61 drops (a lone combining accent) leaves no gap."""

_SNOWBALL_AGREES = (
    "octet_length(word) = length(word) AND word NOT LIKE '%logi%' AND word NOT LIKE '%logy%'"
    " AND word NOT LIKE '%bli%' AND word NOT LIKE '%bly%'"
    " AND NOT ((word LIKE '%ed' OR word LIKE '%ing' OR word LIKE '%eds' OR word LIKE '%ings')"
    " AND word ~ '([0-9chjkqvwxy])\\1(ed|ing)s?$') AND word NOT IN ('eed', 'ies', 'sses')")
"""Words Snowball's ``porter`` stems as FTS5 does (``bench/stem_bench.py`` checks it
on every word of up to three letters and on made-up and dictionary words): ASCII (of
which fts_text leaves only letters and digits), 3 to 64 bytes, none of FTS5's own rules
(``logi``, ``bli``: after step 1 a word ends so only if it holds ``logi``, ``logy``,
``bli`` or ``bly``), no double consonant
before ``-ed``/``-ing`` that Snowball leaves doubled, none of FTS5's short exceptions.
The bracket: what FTS5 undoubles and Snowball does not (all but ``bb dd ff gg mm nn pp
rr tt`` and ``ll ss zz``)."""


def _suffix_chain(rules: list[tuple[str, str, str]]) -> str:
    """PL/pgSQL: the first of `rules` (suffix, condition on the stem's pattern ``p``,
    replacement) whose suffix ends ``t`` decides, as FTS5's generated steps do; like
    them, it first picks the rules by the word's last letter but one."""
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for rule in rules:
        groups.setdefault(rule[0][-2], []).append(rule)
    lines = ["before_last := substr(t, length(t) - 1, 1);"]
    for g, (letter, group) in enumerate(groups.items()):
        lines.append(f"    {'IF' if g == 0 else 'ELSIF'} before_last = '{letter}' THEN")
        for i, (suffix, cond, out) in enumerate(group):
            n = len(suffix)
            lines.append(
                f"        {'IF' if i == 0 else 'ELSIF'} right(t, {n}) = '{suffix}'"
                f" AND length(t) > {n} THEN\n"
                f"            p := left(fts5_porter_cv(t), -{n});\n"
                f"            IF {cond} THEN t := left(t, -{n}) || '{out}'; END IF;")
        lines.append("        END IF;")
    return "\n".join(lines) + "\n    END IF;"


def _porter_function() -> str:
    mgt0, mgt1 = "p ~ 'vc'", "p ~ 'vc.*vc'"
    step2 = _suffix_chain([(s, mgt0, o) for s, o in STEP2])
    step3 = _suffix_chain([(s, mgt0, o) for s, o in STEP3])
    step4 = _suffix_chain([
        (s, f"right(left(t, -{len(s)}), 1) IN ('s', 't') AND {mgt1}" if s == "ion" else mgt1,
         "") for s in STEP4])
    return f"""
    -- A word's consonant/vowel pattern as FTS5 reads it: a e i o u are vowels, y is a
    -- vowel after a consonant (not first), everything else (digits, the bytes of other
    -- characters) is a consonant.
    CREATE FUNCTION fts5_porter_cv(t TEXT) RETURNS TEXT
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        m TEXT := translate(regexp_replace(t, '[^aeiouy]', 'c', 'g'), 'aeiouy', 'vvvvv#');
    BEGIN
        WHILE strpos(m, '#') > 0 LOOP
            m := replace(replace(regexp_replace(m, '^#', 'c'), 'c#', 'cv'), 'v#', 'vc');
        END LOOP;
        RETURN m;
    END $fn$;

    -- FTS5's porter stemmer on one lower-case word (fts5_tokenize.c, fts5PorterCb):
    -- m > 0 is "the pattern holds vc", m > 1 "vc.*vc", *o "ends cvc, not in w x y".
    -- A word with a non-ASCII character is worked on one character per byte (bytes
    -- from 0x80 as U+0180..U+01FF), so it is counted as FTS5 counts it.
    CREATE FUNCTION fts5_porter(word TEXT) RETURNS TEXT
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        wide BOOLEAN := word ~ '[^\\u0001-\\u007f]';
        t TEXT := word;
        cv TEXT;
        before_last TEXT;
        p TEXT;
        s TEXT;
        cut BOOLEAN := false;
        kept BYTEA;
    BEGIN
        IF octet_length(word) < 3 OR octet_length(word) > 64 THEN
            RETURN word;
        END IF;
        IF wide THEN
            t := (SELECT string_agg(chr(CASE WHEN b < 128 THEN b ELSE 256 + b END), ''
                                    ORDER BY i)
                  FROM (SELECT i, get_byte(convert_to(word, 'UTF8'), i) AS b
                        FROM generate_series(0, octet_length(word) - 1) i) x);
        END IF;
        -- Step 1a
        IF right(t, 1) = 's' THEN
            IF right(t, 4) = 'sses' AND length(t) > 4 OR right(t, 3) = 'ies' AND length(t) > 3
            THEN
                t := left(t, -2);
            ELSIF right(t, 2) <> 'ss' THEN
                t := left(t, -1);
            END IF;
        END IF;
        -- Step 1b
        IF right(t, 3) = 'eed' AND length(t) > 3 THEN
            IF left(fts5_porter_cv(t), -3) ~ 'vc' THEN
                t := left(t, -1);
            END IF;
        ELSIF right(t, 2) = 'ed' AND length(t) > 2 OR right(t, 3) = 'ing' AND length(t) > 3
        THEN
            s := left(t, CASE WHEN right(t, 2) = 'ed' THEN -2 ELSE -3 END);
            IF s ~ '^[aeiou]' OR substr(s, 2) ~ '[aeiouy]' THEN
                t := s;
                IF right(t, 2) IN ('at', 'bl', 'iz') AND length(t) > 2 THEN
                    t := t || 'e';
                ELSIF length(t) > 1 AND right(t, 1) = substr(t, length(t) - 1, 1)
                      AND right(t, 1) !~ '[aeioulsz]' THEN
                    cut := ascii(right(t, 1)) >= 256;
                    t := left(t, -1);
                ELSE
                    cv := fts5_porter_cv(t);
                    IF cv ~ 'vc' AND cv !~ 'vc.*vc' AND right(cv, 3) = 'cvc'
                       AND right(t, 1) NOT IN ('w', 'x', 'y') THEN
                        t := t || 'e';
                    END IF;
                END IF;
            END IF;
        END IF;
        -- Step 1c
        IF right(t, 1) = 'y' AND (left(t, 1) ~ '[aeiou]' OR substr(left(t, -1), 2) ~ '[aeiouy]')
        THEN
            t := left(t, -1) || 'i';
        END IF;
        -- Step 2 (each step works out the pattern only where a suffix matches)
    {step2}
        -- Step 3
    {step3}
        -- Step 4
    {step4}
        -- Step 5a
        IF right(t, 1) = 'e' THEN
            p := left(fts5_porter_cv(t), -1);
            IF p ~ 'vc.*vc' OR p ~ 'vc' AND NOT (right(p, 3) = 'cvc'
                                                AND substr(t, length(t) - 1, 1)
                                                    NOT IN ('w', 'x', 'y')) THEN
                t := left(t, -1);
            END IF;
        END IF;
        -- Step 5b
        IF right(t, 2) = 'll' AND left(fts5_porter_cv(t), -1) ~ 'vc.*vc' THEN
            t := left(t, -1);
        END IF;
        IF NOT wide THEN
            RETURN t;
        END IF;
        IF cut THEN  -- the last character lost its last byte (see the module's note)
            p := substring(t FROM '[\\u01c0-\\u01ff][\\u0180-\\u01bf]*$');
            t := left(t, -length(p));
        END IF;
        kept := (SELECT decode(string_agg(lpad(to_hex(ascii(c) % 256), 2, '0'), ''
                                          ORDER BY i), 'hex')
                 FROM unnest(regexp_split_to_array(t, '')) WITH ORDINALITY u(c, i));
        t := COALESCE(convert_from(kept, 'UTF8'), '');
        IF cut THEN
            t := t || chr(65533) || (SELECT string_agg(to_hex(ascii(c) - 256), '' ORDER BY i)
                FROM unnest(regexp_split_to_array(p, '')) WITH ORDINALITY u(c, i));
        END IF;
        RETURN t;
    END $fn$;
    """


def migration_sql() -> str:
    """The SQL of the ``memory`` schema's migration ``fts_stem_as_fts5``: the functions
    above, the trigger and `wardian.memory.fulltext_pg`'s queries on them, every row
    indexed again."""
    return _porter_function() + f"""
    -- One lower-case word of fts_text as FTS5's porter tokenizer stems it; `plain`:
    -- the caller knows Snowball agrees on it (fts_plain). Not STRICT, one expression:
    -- PostgreSQL inlines it into the queries below.
    CREATE FUNCTION fts_stem(word TEXT, plain BOOLEAN DEFAULT false) RETURNS TEXT
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN octet_length(word) < 3 OR octet_length(word) > 64 THEN word
                    WHEN plain OR {_SNOWBALL_AGREES}
                    THEN COALESCE((ts_lexize('wardian_stem', word))[1], word)
                    ELSE fts5_porter(word) END
    $fn$;

    -- Whether Snowball stems every word of the lower-case text `t` as FTS5 does: the
    -- test above on the whole text at once (most texts pass, and a word's own test
    -- costs more than stemming it).
    CREATE FUNCTION fts_plain(t TEXT) RETURNS BOOLEAN
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
        SELECT octet_length(t) = length(t) AND t NOT LIKE '%logi%' AND t NOT LIKE '%logy%'
               AND t NOT LIKE '%bli%' AND t NOT LIKE '%bly%'
               AND t !~ '([0-9chjkqvwxy])\\1(ed|ing)|(^| )(eed|ies|sses)( |$)'
    $fn$;

    -- The tsvector of a text: its words (_WORDS) stemmed, numbered from 1 as
    -- to_tsvector numbers them (at most 16383; ::tsvector merges a lexeme's positions
    -- and keeps its first 256). A word of 2048 bytes or more is left out, as to_tsvector
    -- leaves it out (a tsvector cannot hold it). Quoting a word needs no escapes: ' and
    -- \\ separate words (fts_text), so no word holds one.
    CREATE FUNCTION fts_vector(value TEXT) RETURNS tsvector
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        t TEXT := {_WORDS};
        plain BOOLEAN := fts_plain(t);
    BEGIN
        -- Two queries, not one with `plain` in it: PL/pgSQL would plan that one again
        -- for each call (its plan for a known `plain` looks cheaper).
        IF plain THEN
            RETURN (SELECT COALESCE(string_agg('''' || fts_stem(w, true) || ''':'
                                               || least(n, 16383), ' '), '')::tsvector
                    FROM string_to_table(t, ' ') WITH ORDINALITY s(w, n)
                    WHERE octet_length(w) < 2048);
        END IF;
        RETURN (SELECT COALESCE(string_agg('''' || fts_stem(w) || ''':'
                                           || least(n, 16383), ' '), '')::tsvector
                FROM string_to_table(t, ' ') WITH ORDINALITY s(w, n)
                WHERE octet_length(w) < 2048);
    END $fn$;

    -- A query word (or words) as one phrase of stems, as phraseto_tsquery writes it;
    -- with `prefix`, the last word matches as a prefix (Garden's text filter).
    CREATE FUNCTION fts_query(value TEXT, prefix BOOLEAN DEFAULT false) RETURNS tsquery
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    DECLARE
        words TEXT[] := string_to_array({_WORDS}, ' ');
    BEGIN
        RETURN (SELECT COALESCE(string_agg('''' || fts_stem(w) || ''''
                                           || CASE WHEN prefix AND n = cardinality(words)
                                                   THEN ':*' ELSE '' END,
                                           ' <-> ' ORDER BY n), '')::tsquery
                FROM unnest(words) WITH ORDINALITY s(w, n) WHERE octet_length(w) < 2048);
    END $fn$;

    CREATE OR REPLACE FUNCTION records_fts_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        IF TG_OP = 'UPDATE' AND NEW.text = OLD.text AND NEW.evidence = OLD.evidence THEN
            NEW.fts := OLD.fts;
            NEW.doclen := OLD.doclen;
            RETURN NEW;
        END IF;
        NEW.fts := fts_vector(NEW.text) || fts_vector(NEW.evidence);
        NEW.doclen := (SELECT COALESCE(sum(cardinality(positions)), 0) FROM unnest(NEW.fts));
        RETURN NEW;
    END $fn$;

    -- The trigger runs with the schema's search_path whoever writes (migration 2); the
    -- functions above need the schema on the caller's search_path, as fts_text does.
    ALTER FUNCTION records_fts_sync() SET search_path FROM CURRENT;

    ALTER TABLE records DISABLE TRIGGER records_fts_sync;
    UPDATE records SET fts = fts_vector(text) || fts_vector(evidence);
    UPDATE records SET doclen = (SELECT COALESCE(sum(cardinality(positions)), 0)
                                 FROM unnest(fts));
    ALTER TABLE records ENABLE TRIGGER records_fts_sync;
    """
