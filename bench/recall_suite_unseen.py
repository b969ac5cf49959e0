# ruff: noqa: E501  (a data file: one record or query per line reads best)
"""A fourth hand-written fictional recall suite, written before any floor rule was scored on it.

Written on 2026-12-01 in the session that reworked the relevance floor's calibration (issue 19),
*before* any candidate rule was scored on it: the holdout and fresh suites had been looked at
while choosing between rule families, so they no longer count as unseen, and this one does.
Its domains are in none of the other suites (ferry ticketing, a brewery's stock system, an
observatory's night scheduler, a choir's sheet-music library, a tram depot's maintenance log)
and so is its person. ``bench/recall_bench.py --suite unseen`` scores it; nothing may be tuned on
it.

Same shapes as `recall_suite`: `WORKSPACES`, `RECORDS` ``(key, scope, text)``, `UPDATES`,
`REMOVED`, `QUERIES` ``(kind, workspace, query, expected keys)``. Everything is made up
(projects, people, hosts, numbers).
"""

from __future__ import annotations

WORKSPACES = {
    "sound": "/home/ingrid/sound",      # ferry ticketing (Scala, Akka)
    "mash": "/home/ingrid/mash",        # brewery stock and batches (PHP, Laravel)
    "dome": "/home/ingrid/dome",        # observatory night scheduler (Python, Astropy)
    "chorus": "/home/ingrid/chorus",    # choir sheet-music library (Vue + Firebase)
    "depot": "/home/ingrid/depot",      # tram depot maintenance log (C#, .NET 8)
}

_R = [
    # --- agent scope: Ingrid's preferences ---------------------------------------------------
    ("agent", "tone", "Ingrid prefers short answers that lead with the decision, reasons after."),
    ("agent", "branches", "Name branches after the ticket, for example ING-412-fix-refunds."),
    ("agent", "no-force", "Never force-push to a branch someone else has pushed to."),
    ("agent", "shell", "Ingrid uses fish as her shell; give fish syntax for environment variables."),
    ("agent", "old-shell", "Ingrid uses zsh as her shell."),
    ("agent", "approver", "Ask Kwame before changing anything that touches passenger personal data."),
    ("agent", "units", "Use metric units and 24-hour times in everything you write for Ingrid."),
    ("agent", "holiday", "Ingrid is away from 2027-07-05 to 2027-07-23; Kwame covers reviews."),
    ("agent", "commits", "Write commit messages in the imperative mood, under 72 characters."),
    ("agent", "questions", "When a request is ambiguous, ask one clarifying question before starting."),
    # --- sound: ferry ticketing ------------------------------------------------------------------
    ("sound", "stack", "Sound is a Scala 3 service on Akka Typed with a Cassandra event journal."),
    ("sound", "capacity", "Each sailing sells at most 480 foot passengers and 120 car deck lanes metres per lane."),
    ("sound", "refunds", "Tickets are refundable up to 24 hours before departure, minus a 5 euro fee."),
    ("sound", "weather", "When the coastguard cancels a sailing for weather, every ticket on it is refunded in full automatically."),
    ("sound", "payments", "Card payments go through Adyen; the webhook secret lives in Vault at kv/sound/adyen."),
    ("sound", "sbt", "Run the tests with `sbt test`; integration tests need a local Cassandra from docker compose."),
    ("sound", "timetable", "The summer timetable starts on the last Sunday of March."),
    ("sound", "old-timetable", "The summer timetable starts on the first of April."),
    ("sound", "gdpr", "Passenger names are deleted 90 days after the sailing; only booking totals are kept."),
    ("sound", "owner", "Saoirse Byrne owns the booking engine."),
    ("sound", "checkpoint", "Current: moving seat maps to the new vessel MV Skarv; the upper deck is done, the lounge is not."),
    ("sound", "kiosk", "Harbour kiosks run the same web app in kiosk mode on Chromebooks."),
    # --- mash: brewery stock ---------------------------------------------------------------------
    ("mash", "stack", "Mash is Laravel 11 on PHP 8.3 with MariaDB and Livewire."),
    ("mash", "batches", "Every brew gets a batch number of the form YYYY-NNN, restarting each January."),
    ("mash", "hops", "Hop stock is counted in grams and reordered when it falls below two brews' worth."),
    ("mash", "duty", "Alcohol duty is calculated per batch at packaging, from the measured ABV."),
    ("mash", "kegs", "Kegs carry QR stickers; scanning one at the door records that it left the brewery."),
    ("mash", "cold", "The cold room must stay between 2 and 4 °C; above 6 °C an alarm goes to the head brewer."),
    ("mash", "deploy", "Deploy with Envoyer; migrations run before the new release is switched in."),
    ("mash", "tests", "Run `php artisan test`; Pest is the test framework."),
    ("mash", "owner", "Tomasz Wójcik owns the duty calculations."),
    ("mash", "old-hops", "Hop stock is counted in kilograms."),
    ("mash", "label", "Bottle labels are printed on a Zebra printer from ZPL templates in resources/labels."),
    ("mash", "checkpoint", "Current: adding a cask ale line; the recipe screens are done, the duty rules are not."),
    # --- dome: observatory scheduler --------------------------------------------------------------
    ("dome", "stack", "Dome is Python 3.12 with Astropy and a FastAPI control API."),
    ("dome", "queue", "Observation requests are queued by scientific priority, then by how soon the target sets."),
    ("dome", "moon", "Faint targets are not scheduled within 30 degrees of the Moon when it is more than half full."),
    ("dome", "roof", "The roof closes automatically when humidity passes 85 % or wind exceeds 40 km/h."),
    ("dome", "calibration", "Dark and flat calibration frames are taken every evening at dusk."),
    ("dome", "storage", "Raw FITS frames go to the NAS at /data/raw and are copied to tape each week."),
    ("dome", "owner", "Dr. Amara Nwosu owns the scheduling algorithm."),
    ("dome", "tests", "Run `pytest -m 'not hardware'` on a laptop; hardware tests need the mount simulator."),
    ("dome", "alerts", "Gamma-ray burst alerts from GCN interrupt the current exposure within ten seconds."),
    ("dome", "guiding", "Autoguiding uses PHD2 over its JSON-RPC socket on port 4400."),
    ("dome", "old-moon", "Faint targets are not scheduled within 20 degrees of the Moon."),
    # --- chorus: choir library ------------------------------------------------------------------
    ("chorus", "stack", "Chorus is a Vue 3 app on Firebase with Firestore and Cloud Functions."),
    ("chorus", "rights", "Scores under copyright may only be shared with members of the choir, never publicly."),
    ("chorus", "parts", "Each score is split into soprano, alto, tenor and bass part files for rehearsal."),
    ("chorus", "practice", "Practice tracks are MP3 files at 128 kbit/s, one per voice part."),
    ("chorus", "roles", "Only the conductor and the librarian can upload or delete scores."),
    ("chorus", "emulator", "Run the Firebase emulator suite locally with `firebase emulators:start`."),
    ("chorus", "owner", "Lars Eriksen owns the upload pipeline."),
    ("chorus", "print", "Members may print one copy of a score for their own use."),
    ("chorus", "concert", "The concert programme page is generated from the setlist collection each season."),
    # --- depot: tram maintenance --------------------------------------------------------------------
    ("depot", "stack", "Depot is a .NET 8 web API with Entity Framework Core and SQL Server."),
    ("depot", "intervals", "Every tram gets a brake inspection every 15,000 km or 30 days, whichever comes first."),
    ("depot", "wheels", "Wheel profiles are re-turned on the lathe when flange height passes 32 mm."),
    ("depot", "faults", "Drivers report faults on a tablet in the cab; a fault marked critical takes the tram out of service."),
    ("depot", "parts", "Spare parts are reserved when a work order opens and released if it is cancelled."),
    ("depot", "shifts", "The depot works three shifts; the night shift does the heavy maintenance."),
    ("depot", "signoff", "A work order closes only after a second technician signs it off."),
    ("depot", "owner", "Kwame Mensah owns the work-order module."),
    ("depot", "tests", "Run `dotnet test`; the SQL Server tests use Testcontainers."),
    ("depot", "old-intervals", "Every tram gets a brake inspection every 10,000 km."),
    ("depot", "checkpoint", "Current: importing the new tram class T-40's maintenance plan; brakes are done, doors are not."),
]

RECORDS: list[tuple[str, str, str]] = [
    (f"{scope}/{name}", scope, text) for scope, name, text in _R
]

UPDATES = {
    # corrected records: the new text must come back
    "sound/capacity": "Each sailing sells at most 480 foot passengers and 36 cars.",
}

REMOVED = {
    "agent/old-shell",
    "sound/old-timetable",
    "mash/old-hops",
    "dome/old-moon",
    "depot/old-intervals",
}

_NO = ()
QUERIES: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- paraphrase -------------------------------------------------------------------------------
    ("paraphrase", "sound", "can a traveller get their money back if they cancel", ("sound/refunds",)),
    ("paraphrase", "sound", "what happens to bookings when a storm stops the boat", ("sound/weather",)),
    ("paraphrase", "sound", "how many people fit on one crossing", ("sound/capacity",)),
    ("paraphrase", "sound", "how long do we keep travellers' names", ("sound/gdpr",)),
    ("paraphrase", "sound", "what do the machines at the port run", ("sound/kiosk",)),
    ("paraphrase", "mash", "how is each brew numbered", ("mash/batches",)),
    ("paraphrase", "mash", "when do we buy more hops", ("mash/hops",)),
    ("paraphrase", "mash", "how cold must the chilled storage be", ("mash/cold",)),
    ("paraphrase", "mash", "how do we know a barrel has gone out", ("mash/kegs",)),
    ("paraphrase", "mash", "how is the tax on beer worked out", ("mash/duty",)),
    ("paraphrase", "dome", "in what order are observations done", ("dome/queue",)),
    ("paraphrase", "dome", "when does the building shut itself because of bad weather", ("dome/roof",)),
    ("paraphrase", "dome", "how bright can the moon be near a dim object", ("dome/moon",)),
    ("paraphrase", "dome", "where are the camera images stored", ("dome/storage",)),
    ("paraphrase", "dome", "what happens when a burst alert arrives", ("dome/alerts",)),
    ("paraphrase", "chorus", "who may add new music", ("chorus/roles",)),
    ("paraphrase", "chorus", "can we put copyrighted music on the public website", ("chorus/rights",)),
    ("paraphrase", "chorus", "may a singer make a paper copy", ("chorus/print",)),
    ("paraphrase", "chorus", "what recordings help singers learn their part", ("chorus/practice",)),
    ("paraphrase", "depot", "how often are the brakes checked", ("depot/intervals",)),
    ("paraphrase", "depot", "when does a tram get pulled from service", ("depot/faults",)),
    ("paraphrase", "depot", "who has to approve finished repairs", ("depot/signoff",)),
    ("paraphrase", "depot", "when are the wheels reshaped", ("depot/wheels",)),
    # --- identifier -------------------------------------------------------------------------------
    ("identifier", "sound", "kv/sound/adyen", ("sound/payments",)),
    ("identifier", "sound", "MV Skarv", ("sound/checkpoint",)),
    ("identifier", "mash", "ZPL templates", ("mash/label",)),
    ("identifier", "mash", "Envoyer", ("mash/deploy",)),
    ("identifier", "dome", "PHD2 port", ("dome/guiding",)),
    ("identifier", "dome", "GCN", ("dome/alerts",)),
    ("identifier", "chorus", "firebase emulators:start", ("chorus/emulator",)),
    ("identifier", "depot", "Testcontainers", ("depot/tests",)),
    # --- stale ------------------------------------------------------------------------------------
    ("stale", "sound", "when does the summer timetable start", ("sound/timetable",)),
    ("stale", "mash", "what unit is hop stock counted in", ("mash/hops",)),
    ("stale", "dome", "how far from the moon must faint targets be", ("dome/moon",)),
    ("stale", "depot", "brake inspection interval", ("depot/intervals",)),
    ("stale", "chorus", "which shell does Ingrid use", ("agent/shell",)),
    ("stale", "sound", "how many cars fit on a sailing", ("sound/capacity",)),
    # --- cross-scope --------------------------------------------------------------------------------
    ("cross", "depot", "who approves changes to passenger data", ("agent/approver",)),
    ("cross", "dome", "when is Ingrid away", ("agent/holiday",)),
    ("cross", "chorus", "Cassandra event journal", _NO),
    ("cross", "mash", "flange height", _NO),
    # --- multi-answer -------------------------------------------------------------------------------
    ("multi", "mash", "who owns duty and when is duty calculated", ("mash/owner", "mash/duty")),
    ("multi", "dome", "roof closing and calibration frames", ("dome/roof", "dome/calibration")),
    ("multi", "depot", "what is in progress at the depot", ("depot/checkpoint",)),
    ("multi", "sound", "refund rules and weather cancellations", ("sound/refunds", "sound/weather")),
    # --- no answer ----------------------------------------------------------------------------------
    ("none", "sound", "how much does the onboard cafe charge for coffee", _NO),
    ("none", "sound", "which captain sails on Tuesdays", _NO),
    ("none", "mash", "what yeast strain goes into the stout", _NO),
    ("none", "mash", "who designs the beer labels' artwork", _NO),
    ("none", "dome", "what is the telescope mirror's diameter", _NO),
    ("none", "dome", "when is the next public open night", _NO),
    ("none", "chorus", "what key is the Christmas carol in", _NO),
    ("none", "chorus", "how much is the membership fee", _NO),
    ("none", "depot", "which company built the depot building", _NO),
    ("none", "depot", "what colour are the new trams painted", _NO),
    ("none", "depot", "how do drivers book their annual leave", _NO),
    ("none", "chorus", "where does the choir rehearse", _NO),
]
