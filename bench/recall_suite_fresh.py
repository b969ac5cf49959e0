# ruff: noqa: E501  (a data file: one record or query per line reads best)
"""A third hand-written fictional recall suite, written fresh and never tuned on (issue 19).

Written in the session that recalibrated the relevance floor, before that floor was
scored on it, with domains neither ``bench/recall_suite.py`` nor
``bench/recall_suite_holdout.py`` has (hospital rota scheduling, greenhouse control,
double-entry bookkeeping, video transcoding, a library catalogue) and another person.
``bench/recall_bench.py --suite fresh`` scores it; like the holdout, a gap between it and
the main suite is fitting, not something to tune away here.

Same shapes as `recall_suite`: `WORKSPACES`, `RECORDS` ``(key, scope, text)``, `UPDATES`,
`REMOVED`, `QUERIES` ``(kind, workspace, query, expected keys)``. Everything is made up
(projects, people, hosts, numbers).
"""

from __future__ import annotations

WORKSPACES = {
    "rota": "/srv/priya/rota",              # hospital shift scheduling (Go)
    "glasshouse": "/srv/priya/glasshouse",  # greenhouse controller (Rust, embedded Linux)
    "ledger": "/srv/priya/ledger",          # bookkeeping back end (Kotlin)
    "reel": "/srv/priya/reel",              # video transcoding pipeline (Python, ffmpeg)
    "stacks": "/srv/priya/stacks",          # library catalogue (Django)
}

_R = [
    # --- agent scope: Priya's preferences -------------------------------------------------
    ("agent", "plain-words", "Priya wants plain words in explanations; define any acronym the first time it appears."),
    ("agent", "no-weekend", "Do not open pull requests for Priya between Friday 18:00 and Monday 08:00 CET."),
    ("agent", "diff-first", "Show Priya the diff before running any migration against a shared database."),
    ("agent", "numbered-steps", "Give setup instructions as numbered steps, one command per step."),
    ("agent", "editor", "Priya edits in Zed; suggest Zed settings rather than VS Code ones."),
    ("agent", "reviewers", "Ask Dmitri to review anything that changes money handling."),
    ("agent", "licences", "Only add dependencies under MIT, Apache-2.0 or BSD licences."),
    ("agent", "old-editor", "Priya edits in Sublime Text."),
    ("agent", "leave", "Priya is on parental leave from 2027-02-01 to 2027-04-30; Dmitri decides meanwhile."),
    ("agent", "handoff", "End each working session with a short list of open questions."),
    # --- rota: hospital shift scheduling ----------------------------------------------------
    ("rota", "stack", "Rota is a Go 1.22 service with a Postgres 16 database and a Svelte front end."),
    ("rota", "solver", "Shift assignment is solved with OR-Tools CP-SAT, with a 20-second time limit per ward."),
    ("rota", "rest-rule", "Nobody may be rostered for two shifts with less than 11 hours between them."),
    ("rota", "nights", "Nurses work at most four night shifts in a row."),
    ("rota", "swap", "Staff swap shifts in the app; a ward manager must approve each swap."),
    ("rota", "publish", "Rosters are published six weeks ahead, on Thursdays."),
    ("rota", "sso", "Staff sign in through the hospital's Azure AD; there are no local accounts."),
    ("rota", "audit", "Every roster change is written to the audit_events table and kept for eight years."),
    ("rota", "owner", "Oluwaseun Bello owns the solver constraints."),
    ("rota", "tests", "Run `go test ./...`; solver tests need the ORTOOLS_HOME variable set."),
    ("rota", "oncall-page", "Unfilled shifts within 48 hours page the staffing office through Opsgenie."),
    ("rota", "checkpoint", "Current: adding bank-holiday pay rules; the rules engine is done, the payslip export is not."),
    ("rota", "old-publish", "Rosters are published four weeks ahead."),
    # --- glasshouse: greenhouse controller --------------------------------------------------
    ("glasshouse", "stack", "Glasshouse is Rust on a Raspberry Pi CM4 running Yocto Linux."),
    ("glasshouse", "sensors", "Temperature and humidity come from SHT45 sensors on the I2C bus, read every 30 seconds."),
    ("glasshouse", "vents", "Roof vents open when the air passes 27 °C and close below 22 °C."),
    ("glasshouse", "frost", "Below 4 °C the heaters switch on and an SMS goes to the grower."),
    ("glasshouse", "irrigation", "Drip irrigation runs from 05:00 for twelve minutes unless soil moisture is above 40 %."),
    ("glasshouse", "mqtt", "Readings are published over MQTT to the Mosquitto broker on the farm server."),
    ("glasshouse", "failsafe", "If the controller loses power, the vents fail open and the valves fail closed."),
    ("glasshouse", "update", "Devices update with RAUC A/B images; a failed boot rolls back to the other slot."),
    ("glasshouse", "cross", "Build for the device with `cross build --target aarch64-unknown-linux-gnu`."),
    ("glasshouse", "owner", "Mei Tanaka owns the irrigation logic."),
    ("glasshouse", "lights", "Grow lights top up daylight to 14 hours from October to March."),
    ("glasshouse", "logs", "The controller keeps 7 days of logs on the SD card and ships them nightly."),
    ("glasshouse", "co2", "CO2 dosing stops whenever a vent is more than 10 % open."),
    # --- ledger: bookkeeping back end --------------------------------------------------------
    ("ledger", "stack", "Ledger is Kotlin on Ktor with Exposed and PostgreSQL."),
    ("ledger", "double-entry", "Every transaction must balance: the sum of debits equals the sum of credits."),
    ("ledger", "money", "Amounts are BigDecimal with scale 4, rounded half-even only when shown."),
    ("ledger", "immutability", "Posted journal entries are never edited; corrections are reversing entries."),
    ("ledger", "close", "The books close on the fifth working day of each month; after that the period is locked."),
    ("ledger", "fx", "Exchange rates come from the ECB daily feed at 16:00 CET."),
    ("ledger", "vat-return", "VAT returns are filed quarterly through the HMRC Making Tax Digital API."),
    ("ledger", "build", "Build with `./gradlew build`; ktlint runs as part of check."),
    ("ledger", "owner", "Dmitri Volkov owns the posting engine."),
    ("ledger", "import", "Bank statements are imported as CAMT.053 files every morning."),
    ("ledger", "retention", "Financial records are kept for seven years, then archived to Glacier."),
    ("ledger", "checkpoint", "Current: migrating from Exposed 0.41 to 0.50; the reporting module still fails its tests."),
    ("ledger", "old-fx", "Exchange rates come from the Open Exchange Rates API."),
    # --- reel: video transcoding ---------------------------------------------------------------
    ("reel", "stack", "Reel is Python 3.12 workers around ffmpeg 7, queued with Celery on Redis."),
    ("reel", "ladder", "Each upload is encoded to a ladder of 1080p, 720p, 480p and 240p renditions."),
    ("reel", "codec", "Renditions use H.264 for compatibility and AV1 for the two largest sizes."),
    ("reel", "packaging", "Output is packaged as HLS with six-second segments."),
    ("reel", "gpu", "Transcoding runs on NVIDIA L4 spot instances; jobs retry when an instance is reclaimed."),
    ("reel", "limits", "Uploads are limited to 4 GB and three hours of footage."),
    ("reel", "thumbnails", "A thumbnail is cut every ten seconds and stitched into a sprite sheet."),
    ("reel", "captions", "Captions are generated by Whisper and must be reviewed by a person before publishing."),
    ("reel", "storage", "Source files are deleted 30 days after transcoding; renditions stay in Backblaze B2."),
    ("reel", "owner", "Aroha Ngata owns the encoding ladder."),
    ("reel", "tests", "Run `pytest -m 'not gpu'` locally; GPU tests run only in the nightly job."),
    ("reel", "drm", "Premium titles are encrypted with Widevine and FairPlay through the packager."),
    # --- stacks: library catalogue ------------------------------------------------------------
    ("stacks", "stack", "Stacks is Django 5 with PostgreSQL full-text search and HTMX templates."),
    ("stacks", "marc", "Catalogue records are imported from MARC21 files with pymarc every Sunday night."),
    ("stacks", "loans", "Books are lent for three weeks and can be renewed twice unless someone reserved them."),
    ("stacks", "fines", "The library charges no late fines; overdue items block new loans after 14 days."),
    ("stacks", "isbn", "ISBNs are stored as 13-digit strings; ten-digit ones are converted on import."),
    ("stacks", "patrons", "Patron accounts are deleted 12 months after the last loan is returned."),
    ("stacks", "a11y", "Every page must pass WCAG 2.2 AA; axe runs in CI."),
    ("stacks", "tests", "Run `python manage.py test`; the search tests need the unaccent extension."),
    ("stacks", "owner", "Ines Duarte owns the cataloguing screens."),
    ("stacks", "deploy", "Stacks runs on the council's OpenShift cluster; deploys need a change ticket."),
    ("stacks", "rfid", "Self-service kiosks read RFID tags over the SIP2 protocol."),
    ("stacks", "old-fines", "Late fines are 20 pence a day per item."),
]
RECORDS: list[tuple[str, str, str]] = [
    (f"{scope}/{slug}", scope, text) for scope, slug, text in _R
]

UPDATES = {
    "rota/nights": "Nurses work at most three night shifts in a row since the 2026 staff agreement.",
    "ledger/close": "The books close on the third working day of each month; after that the period is locked.",
    "glasshouse/irrigation": "Drip irrigation runs from 05:30 for ten minutes unless soil moisture is above 45 %.",
}

REMOVED = {
    "agent/old-editor",
    "rota/old-publish",
    "ledger/old-fx",
    "stacks/old-fines",
}

_NO = ()
QUERIES: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- paraphrase ---------------------------------------------------------------------------
    ("paraphrase", "rota", "how much time off must staff get between shifts", ("rota/rest-rule",)),
    ("paraphrase", "rota", "how far in advance do people see their schedule", ("rota/publish",)),
    ("paraphrase", "rota", "can two nurses trade their shifts", ("rota/swap",)),
    ("paraphrase", "rota", "how do employees log in", ("rota/sso",)),
    ("paraphrase", "rota", "what happens when nobody covers a shift soon", ("rota/oncall-page",)),
    ("paraphrase", "glasshouse", "when do the windows in the roof open", ("glasshouse/vents",)),
    ("paraphrase", "glasshouse", "what happens on a freezing night", ("glasshouse/frost",)),
    ("paraphrase", "glasshouse", "when are the plants watered", ("glasshouse/irrigation",)),
    ("paraphrase", "glasshouse", "what if the electricity goes out", ("glasshouse/failsafe",)),
    ("paraphrase", "glasshouse", "how is new software installed on the controller", ("glasshouse/update",)),
    ("paraphrase", "ledger", "can a booked entry be changed afterwards", ("ledger/immutability",)),
    ("paraphrase", "ledger", "where do currency conversion rates come from", ("ledger/fx",)),
    ("paraphrase", "ledger", "how long do we have to keep accounting data", ("ledger/retention",)),
    ("paraphrase", "ledger", "how are decimal amounts rounded", ("ledger/money",)),
    ("paraphrase", "reel", "which resolutions does every video get", ("reel/ladder",)),
    ("paraphrase", "reel", "what is the biggest file someone may upload", ("reel/limits",)),
    ("paraphrase", "reel", "how are subtitles made", ("reel/captions",)),
    ("paraphrase", "reel", "how long are the original videos kept", ("reel/storage",)),
    ("paraphrase", "stacks", "how long can someone borrow a book", ("stacks/loans",)),
    ("paraphrase", "stacks", "do readers pay when they bring books back late", ("stacks/fines",)),
    ("paraphrase", "stacks", "is the site usable with a screen reader", ("stacks/a11y",)),
    # --- identifier ---------------------------------------------------------------------------
    ("identifier", "rota", "CP-SAT time limit", ("rota/solver",)),
    ("identifier", "rota", "ORTOOLS_HOME", ("rota/tests",)),
    ("identifier", "glasshouse", "SHT45", ("glasshouse/sensors",)),
    ("identifier", "glasshouse", "aarch64-unknown-linux-gnu", ("glasshouse/cross",)),
    ("identifier", "ledger", "CAMT.053", ("ledger/import",)),
    ("identifier", "reel", "HLS segments", ("reel/packaging",)),
    ("identifier", "stacks", "SIP2", ("stacks/rfid",)),
    ("identifier", "stacks", "pymarc", ("stacks/marc",)),
    # --- stale --------------------------------------------------------------------------------
    ("stale", "rota", "how many night shifts in a row", ("rota/nights",)),
    ("stale", "rota", "how many weeks ahead are rosters published", ("rota/publish",)),
    ("stale", "ledger", "when do the books close", ("ledger/close",)),
    ("stale", "stacks", "late fines", ("stacks/fines",)),
    ("stale", "reel", "which editor does Priya use", ("agent/editor",)),
    # --- cross-scope ----------------------------------------------------------------------------
    ("cross", "reel", "who reviews money handling changes", ("agent/reviewers",)),
    ("cross", "glasshouse", "when is Priya on leave", ("agent/leave",)),
    ("cross", "stacks", "MQTT broker", _NO),
    ("cross", "rota", "Widevine", _NO),
    # --- multi-answer ---------------------------------------------------------------------------
    ("multi", "ledger", "who owns posting and who reviews money changes", ("ledger/owner", "agent/reviewers")),
    ("multi", "glasshouse", "vents and CO2 dosing", ("glasshouse/vents", "glasshouse/co2")),
    ("multi", "reel", "codecs and packaging of renditions", ("reel/codec", "reel/packaging")),
    ("multi", "rota", "what is in progress on rota", ("rota/checkpoint",)),
    # --- no answer ------------------------------------------------------------------------------
    ("none", "rota", "how are surgeons paid for overtime", _NO),
    ("none", "rota", "which pager model do doctors carry", _NO),
    ("none", "glasshouse", "which tomato variety grows best", _NO),
    ("none", "glasshouse", "what does the farm shop sell", _NO),
    ("none", "ledger", "who is the company's auditor", _NO),
    ("none", "ledger", "how do we pay suppliers in bitcoin", _NO),
    ("none", "reel", "which microphone records the podcasts", _NO),
    ("none", "reel", "how many subscribers does the channel have", _NO),
    ("none", "stacks", "when does the library cafe open", _NO),
    ("none", "stacks", "who painted the mural in the reading room", _NO),
    ("none", "stacks", "what is the parking fee", _NO),
    ("none", "glasshouse", "what is the weather forecast for tomorrow", _NO),
]
