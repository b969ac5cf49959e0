# ruff: noqa: E501  (a data file: one record or query per line reads best)
"""A second, separate hand-written fictional recall suite: the held-out check (issue 19).

Written before any ranking change of this round, by a different hand from
``bench/recall_suite.py``, with other workspaces, another person and other wording, and
never used to tune a floor or weight: ``bench/recall_bench.py --suite holdout`` scores it
so that a change which only fits the first suite shows up as a gap between the two.

Same shapes as `recall_suite`: `WORKSPACES`, `RECORDS` ``(key, scope, text)``, `UPDATES`,
`REMOVED`, `QUERIES` ``(kind, workspace, query, expected keys)`` with the kinds
``paraphrase``, ``identifier``, ``stale``, ``cross``, ``none`` and ``multi``. Everything is
made up (projects, people, hosts, numbers).
"""

from __future__ import annotations

WORKSPACES = {
    "fernhill": "/home/tomas/fernhill",    # multiplayer game server (C#)
    "pebble": "/home/tomas/pebble",        # sensor firmware (C, Zephyr)
    "marigold": "/home/tomas/marigold",    # online shop back end (Ruby on Rails)
    "juniper": "/home/tomas/juniper",      # analytics dashboard (Elixir + Phoenix)
    "coppice": "/home/tomas/coppice",      # internal search service (Java)
    "wren": "/home/tomas/wren",            # desktop notes app (Electron)
}

_R = [
    # --- agent scope: Tomas's preferences ------------------------------------------------
    ("agent", "summary-first", "Start every answer to Tomas with a one-line summary, details after."),
    ("agent", "metric", "Use metric units and 24-hour times when talking to Tomas."),
    ("agent", "branch-names", "Name branches type/short-topic, for example fix/login-redirect."),
    ("agent", "squash", "Squash-merge feature branches; keep merge commits only for releases."),
    ("agent", "no-sudo", "Never run commands with sudo without asking Tomas first."),
    ("agent", "vacation", "Tomas is on holiday from 2026-12-20 to 2027-01-06; nothing gets deployed then."),
    ("agent", "terminal", "Tomas uses WezTerm with tmux; keep command output narrow."),
    ("agent", "docs-links", "Link to the exact docs version in use, not to the latest page."),
    ("agent", "estimates", "Give estimates as ranges in half days, never single numbers."),
    ("agent", "reviewer", "Request reviews from Ines for anything touching authentication."),
    ("agent", "dark-mode", "Screenshots for Tomas should use the light theme; he prints them."),
    ("agent", "changelog", "Every user-visible change adds a line to CHANGELOG.md under Unreleased."),
    ("agent", "question-style", "When unsure, ask one clarifying question, not several at once."),
    ("agent", "license", "New repositories use the Apache-2.0 licence."),
    ("agent", "standup", "Tomas's standup is at 09:30 Prague time; send async notes before it."),
    ("agent", "old-tomas-editor", "Tomas edits in Sublime Text."),
    ("agent", "editor-now", "Tomas switched to Zed as his editor in November."),
    # --- fernhill: game server ---------------------------------------------------------------
    ("fernhill", "engine", "Fernhill's server runs on .NET 8 with a custom ECS, no Unity on the server."),
    ("fernhill", "tick", "The simulation ticks at 30 Hz; never do blocking IO inside a tick."),
    ("fernhill", "netcode", "Player state goes over UDP with ENet; chat and lobby use WebSockets."),
    ("fernhill", "matchmaking", "Matchmaking groups players within 150 rating points, widening after 40 s."),
    ("fernhill", "anticheat", "Movement is validated server-side; clients are never trusted with positions."),
    ("fernhill", "persistence", "Player inventories live in Redis with AOF, flushed to Postgres every 5 minutes."),
    ("fernhill", "regions", "Servers run in Frankfurt, Virginia and Singapore; Sao Paulo is planned."),
    ("fernhill", "build", "Build the server with `dotnet build -c Release Fernhill.sln`."),
    ("fernhill", "tests", "Run the simulation tests with `dotnet test --filter Category=Sim`."),
    ("fernhill", "replays", "Match replays are stored for 14 days in the bucket fh-replays."),
    ("fernhill", "owner", "Kofi Mensah leads the netcode; talk to him before changing packet layouts."),
    ("fernhill", "protocol-version", "Bump PROTOCOL_VERSION in Shared/Net/Version.cs on any packet change."),
    ("fernhill", "logging", "Server logs use Serilog with compact JSON; never log session tokens."),
    ("fernhill", "capacity", "One server process hosts at most 64 concurrent matches."),
    ("fernhill", "checkpoint", "Current: rewriting the lobby service; the old lobby stays up until the rewrite passes load tests."),
    ("fernhill", "load-test", "Load tests use 2000 simulated clients from the botfarm tool."),
    ("fernhill", "cheat-reports", "Player cheat reports go to the moderation queue in Zendesk."),
    ("fernhill", "maps", "Map files are binary .fhmap, built from Tiled exports by tools/mapc."),
    # --- pebble: firmware --------------------------------------------------------------------
    ("pebble", "rtos", "Pebble firmware runs on Zephyr 3.6 on the nRF52840."),
    ("pebble", "flash", "Flash a board with `west flash --runner jlink`."),
    ("pebble", "power", "The sensor must average under 30 microamps; the radio sleeps between readings."),
    ("pebble", "interval", "Readings are taken every 10 minutes and sent in batches of six."),
    ("pebble", "ota", "Firmware updates go over BLE with MCUboot; images are signed with the ECDSA key in the HSM."),
    ("pebble", "stack", "Keep every thread stack at or below 2 KiB; the RAM is 256 KiB in total."),
    ("pebble", "coding-std", "Firmware code follows MISRA C:2012 except rules listed in docs/misra-deviations.md."),
    ("pebble", "hw-rev", "Hardware revision C is the only one in the field; rev B boards are lab-only."),
    ("pebble", "calibration", "Each humidity sensor is calibrated at the factory; offsets live in the UICR."),
    ("pebble", "ci-hil", "CI flashes three real boards in the hardware-in-the-loop rack on every merge."),
    ("pebble", "watchdog", "The watchdog resets the chip after 8 seconds without a kick."),
    ("pebble", "owner", "Hana Novak owns the radio driver."),
    ("pebble", "battery", "A CR2477 cell must last five years in the field."),
    ("pebble", "old-interval", "Readings are taken every 5 minutes."),
    # --- marigold: shop back end ------------------------------------------------------------------
    ("marigold", "stack", "Marigold is Rails 7.1 on Ruby 3.3 with PostgreSQL and Sidekiq."),
    ("marigold", "payments", "Card payments go through Adyen; PayPal is handled by its own adapter."),
    ("marigold", "tax", "VAT is computed by the TaxJar service; never hard-code rates."),
    ("marigold", "inventory", "Stock is reserved for 20 minutes when an item enters the basket."),
    ("marigold", "emails", "Order emails are sent through Postmark from the Sidekiq mailers queue."),
    ("marigold", "search", "Product search uses Meilisearch, reindexed nightly and on every product save."),
    ("marigold", "feature-flags", "Feature flags live in Flipper; remove a flag within a month of full rollout."),
    ("marigold", "tests", "Run the specs with `bin/rspec`; system specs need Chrome installed."),
    ("marigold", "n-plus-one", "Bullet is enabled in development; fix every N+1 it reports before merging."),
    ("marigold", "deploy", "Marigold deploys to Heroku through the pipeline; review apps exist per pull request."),
    ("marigold", "returns", "Customers may return items within 30 days; sale items within 14."),
    ("marigold", "owner", "Lucia Ferreira owns checkout; the catalogue belongs to the merchandising team."),
    ("marigold", "images", "Product images are resized by imgproxy; originals stay in S3."),
    ("marigold", "currency", "Prices are stored as integer cents with a currency column."),
    ("marigold", "gdpr", "Customer data deletion requests are processed within 30 days by the privacy rake task."),
    ("marigold", "rate-limit", "Rack::Attack limits the login endpoint to 5 attempts per minute per IP."),
    ("marigold", "checkpoint", "Current: migrating Sidekiq jobs to GoodJob; half the queues are moved."),
    ("marigold", "old-email", "Order emails are sent through Mailgun."),
    # --- juniper: analytics dashboard ---------------------------------------------------------------
    ("juniper", "stack", "Juniper is Elixir 1.16 with Phoenix LiveView and TimescaleDB."),
    ("juniper", "charts", "Charts are drawn with Vega-Lite specs generated on the server."),
    ("juniper", "refresh", "Dashboards refresh every 60 seconds over the LiveView socket."),
    ("juniper", "auth", "Users sign in with Google Workspace SSO; there are no local passwords."),
    ("juniper", "tenants", "Each customer gets a separate Postgres schema, named tenant_<id>."),
    ("juniper", "exports", "CSV exports are capped at one million rows and built by an Oban job."),
    ("juniper", "retention", "Raw metrics are downsampled to hourly after 90 days and deleted after two years."),
    ("juniper", "tests", "Run `mix test`; tests tagged :slow are skipped unless you pass --include slow."),
    ("juniper", "format", "Run `mix format` and `mix credo --strict` before pushing."),
    ("juniper", "deploy", "Juniper ships as a Docker image to Fly.io in the ams and iad regions."),
    ("juniper", "owner", "Ravi Iyer owns the query planner module."),
    ("juniper", "timezones", "All timestamps are stored in UTC and shown in the viewer's browser time zone."),
    ("juniper", "alerts", "Threshold alerts are evaluated every minute and sent through PagerDuty."),
    ("juniper", "colours", "Chart colours come from the Okabe-Ito palette so colour-blind users can read them."),
    # --- coppice: internal search -------------------------------------------------------------------
    ("coppice", "stack", "Coppice is a Java 21 service on Spring Boot 3 in front of OpenSearch 2."),
    ("coppice", "build", "Build with `./gradlew build`; the wrapper pins Gradle 8.7."),
    ("coppice", "index", "Documents are indexed by the crawler every four hours; deletions propagate within a day."),
    ("coppice", "synonyms", "Search synonyms are kept in config/synonyms.txt and reviewed by the docs team."),
    ("coppice", "acl", "Results are filtered by the reader's group memberships from LDAP at query time."),
    ("coppice", "latency", "The search endpoint must answer within 200 ms at p99."),
    ("coppice", "heap", "Run the JVM with a 4 GiB heap and G1; larger heaps made pauses worse."),
    ("coppice", "owner", "Jonas Berg owns relevance tuning; ask him before changing boosts."),
    ("coppice", "api", "The public API is GET /api/v3/search?q=; v2 is retired."),
    ("coppice", "logging", "Query logs are kept 30 days and anonymised before analysis."),
    ("coppice", "tests", "Integration tests start OpenSearch with Testcontainers."),
    ("coppice", "checkpoint", "Current: upgrading OpenSearch from 2.11 to 2.15 on the staging cluster."),
    # --- wren: desktop notes app --------------------------------------------------------------------
    ("wren", "stack", "Wren is an Electron 30 app with a React renderer and a SQLite store."),
    ("wren", "sync", "Notes sync through a CRDT (Automerge) over our relay; the relay never sees plaintext."),
    ("wren", "crypto", "Notes are encrypted with XChaCha20-Poly1305 using keys derived by Argon2id."),
    ("wren", "updates", "Auto-updates use electron-updater from GitHub releases; updates are signed."),
    ("wren", "platforms", "Wren supports Windows 10+, macOS 13+ and Ubuntu 22.04+."),
    ("wren", "notarize", "macOS builds are notarised in CI with the team's Apple developer account."),
    ("wren", "ipc", "The renderer talks to the main process only through the preload bridge; nodeIntegration stays off."),
    ("wren", "shortcuts", "Keyboard shortcuts are defined in src/main/shortcuts.ts and listed in the help menu."),
    ("wren", "telemetry", "Wren sends no telemetry; crash reports are opt-in and go to our Sentry."),
    ("wren", "tests", "Run unit tests with `npm test` and end-to-end tests with Playwright's Electron support."),
    ("wren", "markdown", "Notes are stored as Markdown with front matter; attachments sit beside them."),
    ("wren", "owner", "Elif Kaya owns the sync engine."),
    ("wren", "release", "Releases are cut on the first Tuesday of the month from the main branch."),
]
RECORDS: list[tuple[str, str, str]] = [
    (f"{scope}/{slug}", scope, text) for scope, slug, text in _R
]

UPDATES = {
    "fernhill/capacity": "One server process hosts at most 48 concurrent matches since the physics rewrite.",
    "juniper/refresh": "Dashboards refresh every 30 seconds over the LiveView socket.",
    "coppice/heap": "Run the JVM with a 6 GiB heap and ZGC; G1 pauses were too long.",
    "marigold/inventory": "Stock is reserved for 15 minutes when an item enters the basket.",
}

REMOVED = {
    "agent/old-tomas-editor",
    "pebble/old-interval",
    "marigold/old-email",
}

_NO = ()
QUERIES: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- paraphrase --------------------------------------------------------------------------
    ("paraphrase", "fernhill", "how often does the game world update per second", ("fernhill/tick",)),
    ("paraphrase", "fernhill", "can the client tell the server where a player is", ("fernhill/anticheat",)),
    ("paraphrase", "fernhill", "where are players' items saved", ("fernhill/persistence",)),
    ("paraphrase", "fernhill", "which data centres host matches", ("fernhill/regions",)),
    ("paraphrase", "fernhill", "how long do we keep recordings of games", ("fernhill/replays",)),
    ("paraphrase", "fernhill", "who should I ask before changing the network messages", ("fernhill/owner",)),
    ("paraphrase", "fernhill", "how are opponents paired up", ("fernhill/matchmaking",)),
    ("paraphrase", "pebble", "how much current may the device draw", ("pebble/power",)),
    ("paraphrase", "pebble", "how do I put new firmware on a board", ("pebble/flash",)),
    ("paraphrase", "pebble", "how are devices updated remotely", ("pebble/ota",)),
    ("paraphrase", "pebble", "how long should the coin battery survive", ("pebble/battery",)),
    ("paraphrase", "pebble", "what happens if the firmware hangs", ("pebble/watchdog",)),
    ("paraphrase", "pebble", "which operating system does the firmware use", ("pebble/rtos",)),
    ("paraphrase", "marigold", "how long can shoppers send things back", ("marigold/returns",)),
    ("paraphrase", "marigold", "who processes credit cards for the shop", ("marigold/payments",)),
    ("paraphrase", "marigold", "how do we work out sales tax", ("marigold/tax",)),
    ("paraphrase", "marigold", "how long is an item held in someone's cart", ("marigold/inventory",)),
    ("paraphrase", "marigold", "what protects sign-in from password guessing", ("marigold/rate-limit",)),
    ("paraphrase", "marigold", "where are product photos scaled", ("marigold/images",)),
    ("paraphrase", "juniper", "how do people log in to the dashboard", ("juniper/auth",)),
    ("paraphrase", "juniper", "how is each customer's data kept apart", ("juniper/tenants",)),
    ("paraphrase", "juniper", "how long is old metric data kept", ("juniper/retention",)),
    ("paraphrase", "juniper", "which palette do graphs use", ("juniper/colours",)),
    ("paraphrase", "juniper", "where is the app hosted", ("juniper/deploy",)),
    ("paraphrase", "coppice", "how fast must a search answer", ("coppice/latency",)),
    ("paraphrase", "coppice", "how do we stop people seeing documents they may not read", ("coppice/acl",)),
    ("paraphrase", "coppice", "how much memory does the java process get", ("coppice/heap",)),
    ("paraphrase", "coppice", "how fresh is the search index", ("coppice/index",)),
    ("paraphrase", "wren", "can the sync server read my notes", ("wren/sync",)),
    ("paraphrase", "wren", "which operating systems can run the app", ("wren/platforms",)),
    ("paraphrase", "wren", "does the app phone home", ("wren/telemetry",)),
    ("paraphrase", "wren", "what file format are notes saved in", ("wren/markdown",)),
    ("paraphrase", "wren", "when do new versions come out", ("wren/release",)),
    ("paraphrase", "wren", "which cipher protects notes", ("wren/crypto",)),
    ("paraphrase", "juniper", "how is a teammate told when a metric crosses a limit", ("juniper/alerts",)),
    # --- identifier ---------------------------------------------------------------------------
    ("identifier", "fernhill", "PROTOCOL_VERSION", ("fernhill/protocol-version",)),
    ("identifier", "fernhill", "ENet", ("fernhill/netcode",)),
    ("identifier", "fernhill", "fh-replays bucket", ("fernhill/replays",)),
    ("identifier", "fernhill", "tools/mapc", ("fernhill/maps",)),
    ("identifier", "pebble", "nRF52840", ("pebble/rtos",)),
    ("identifier", "pebble", "MCUboot", ("pebble/ota",)),
    ("identifier", "pebble", "UICR", ("pebble/calibration",)),
    ("identifier", "pebble", "misra-deviations.md", ("pebble/coding-std",)),
    ("identifier", "marigold", "Flipper flags", ("marigold/feature-flags",)),
    ("identifier", "marigold", "bin/rspec", ("marigold/tests",)),
    ("identifier", "marigold", "Rack::Attack", ("marigold/rate-limit",)),
    ("identifier", "juniper", "Oban", ("juniper/exports",)),
    ("identifier", "juniper", "tenant_<id>", ("juniper/tenants",)),
    ("identifier", "juniper", "mix credo", ("juniper/format",)),
    ("identifier", "coppice", "/api/v3/search", ("coppice/api",)),
    ("identifier", "coppice", "synonyms.txt", ("coppice/synonyms",)),
    ("identifier", "coppice", "Testcontainers", ("coppice/tests",)),
    ("identifier", "wren", "XChaCha20-Poly1305", ("wren/crypto",)),
    ("identifier", "wren", "src/main/shortcuts.ts", ("wren/shortcuts",)),
    ("identifier", "wren", "nodeIntegration", ("wren/ipc",)),
    # --- stale ------------------------------------------------------------------------------------
    ("stale", "fernhill", "how many matches fit on one server process", ("fernhill/capacity",)),
    ("stale", "juniper", "dashboard refresh interval", ("juniper/refresh",)),
    ("stale", "coppice", "which garbage collector does coppice use", ("coppice/heap",)),
    ("stale", "marigold", "how many minutes is stock reserved", ("marigold/inventory",)),
    ("stale", "pebble", "how often are readings taken", ("pebble/interval",)),
    ("stale", "marigold", "which service sends order emails", ("marigold/emails",)),
    ("stale", "wren", "what editor does Tomas use", ("agent/editor-now",)),
    # --- cross-scope ----------------------------------------------------------------------------------
    ("cross", "pebble", "who reviews authentication changes", ("agent/reviewer",)),
    ("cross", "juniper", "how should I name a branch", ("agent/branch-names",)),
    ("cross", "wren", "which licence for a new repository", ("agent/license",)),
    ("cross", "coppice", "when is Tomas away over new year", ("agent/vacation",)),
    ("cross", "wren", "Rack::Attack login limit", _NO),
    ("cross", "pebble", "Meilisearch reindex", _NO),
    ("cross", "juniper", "ENet packets", _NO),
    # --- no answer --------------------------------------------------------------------------------
    ("none", "fernhill", "what is the office door code", _NO),
    ("none", "fernhill", "which voice actors recorded the trailer", _NO),
    ("none", "pebble", "what does the enclosure cost to injection mould", _NO),
    ("none", "pebble", "which bluetooth mesh profile do we use", _NO),
    ("none", "marigold", "who designed the shop's logo", _NO),
    ("none", "marigold", "how are gift cards redeemed", _NO),
    ("none", "juniper", "what is the mobile app called", _NO),
    ("none", "juniper", "which kafka cluster feeds the dashboard", _NO),
    ("none", "coppice", "how many engineers are on the search team", _NO),
    ("none", "coppice", "what python version does coppice need", _NO),
    ("none", "wren", "how much does a wren subscription cost", _NO),
    ("none", "wren", "who translated the app into japanese", _NO),
    ("none", "wren", "what is the capital of peru", _NO),
    ("none", "fernhill", "when is the company party", _NO),
    # --- multi-answer ----------------------------------------------------------------------------------
    ("multi", "fernhill", "how do I build and test the server", ("fernhill/build", "fernhill/tests")),
    ("multi", "fernhill", "what is the state of the lobby work", ("fernhill/checkpoint",)),
    ("multi", "pebble", "power and battery budget", ("pebble/power", "pebble/battery")),
    ("multi", "marigold", "email and background job setup", ("marigold/emails", "marigold/checkpoint")),
    ("multi", "juniper", "how are tests and formatting run", ("juniper/tests", "juniper/format")),
    ("multi", "coppice", "opensearch version and upgrade", ("coppice/stack", "coppice/checkpoint")),
    ("multi", "wren", "how are updates and releases shipped", ("wren/updates", "wren/release")),
    ("multi", "wren", "security of notes at rest and in sync", ("wren/crypto", "wren/sync")),
]
