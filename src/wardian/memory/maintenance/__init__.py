"""Reviewed maintenance: plan schema v1, preview + digest, atomic apply, receipts.

Spec: "Operator maintenance in Garden" and everything under it. Modules:

* `limits` — the plan's size and operation-count limits (no pydantic; used by `draft`).
* `plan` — strict pydantic models and the JSON loader (duplicate keys, JSON paths,
  owner binding).
* `preview` — read-only preview: canonical digest, Before/After, conflicts, net changes.
* `previews` — the preview cache in ``state.db`` (component ``maintenance_previews``).
* `apply` — confirmation-gated atomic apply, receipts, idempotent replay.
* `terminal` — the one function that asks on the controlling terminal.
* `service` — one call per ``garden maintain`` command.
* `draft` — plan skeletons for an agent's own records (``memory draft-plan``).
* `errors` — the maintenance errors (exit 2 / 1 / 4).

Nothing is imported here, so importing one module stays cheap.
"""
