"""The Garden web app's routes: thin handlers over the application layer.

Every page reads through `wardian.app.garden`; "Maintain memory…" calls
`wardian.app.maintenance` — the same preview, cache, confirmation and apply functions as
``wardian garden maintain`` — so the browser is one more surface, not a second
implementation. POST handlers read their form with `_form`, which checks the CSRF token.

Maintenance flow (spec "Operator maintenance in Garden"):

1. ``GET /agents/{id}/maintain``: paste or upload a plan.
2. ``POST …/maintain/preview``: validate, preview (cached in ``state.db``), render digest,
   counts, Before/After with full text, sources, absorbed ids and conflicts. "Apply
   reviewed plan…" is disabled while there are conflicts.
3. The button opens a dialog (``POST …/maintain/confirm`` renders the same dialog as a page
   without script) showing owner, operation count and ``sha256:`` + 12 hex.
4. ``POST …/maintain/apply`` with ``decision=apply`` and the three confirmed values: the
   service asks its ``confirm`` callback, which accepts only when the values the operator
   saw are exactly the ones being applied. ``decision=decline`` answers no: zero changes.
5. Success redirects to ``GET …/maintain/receipt?key=…``, the stored receipt (reloadable).

A record page's controls (``POST /records/{id}/retire|revise|merge``) skip step 1: the
form goes to one `wardian.app.garden` function that builds a one-operation plan (the
functions behind ``garden memory retire|revise``), and its preview is step 2's page, so
steps 3 to 5 are the same. The plan carries the hidden field ``record`` along, so a
decline, an error at apply and the receipt lead back to the record. A bad field is an
error page naming it; nothing is written before the confirmation.

The review queue (``GET /queue``) and the agents page's counts read
`wardian.app.garden.review_queue`. A memory review (``GET /agents/{id}/reviews/{run}``,
`wardian.app.reviews.load_review`) lists its operations with a checkbox each; ``POST
…/reviews/{run}/apply`` sends the accepted indices to
`wardian.app.reviews.review_subset_plan`, whose plan is previewed on step 2's page (the
hidden field ``review`` leads a decline, an error and the receipt back to the review). A
stale review, a bad index or nothing accepted is an error page; nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from wardian.app.databases import open_memory_db, open_state_db
from wardian.errors import (
    EXIT_AUTH,
    EXIT_CONFLICT,
    EXIT_USAGE,
    NotFoundError,
    UsageError,
    WardianError,
)
from wardian.web.guard import Guard, GuardMiddleware
from wardian.web.render import render

__all__ = ["MAX_FORM_BYTES", "create_app"]

MAX_FORM_BYTES = 3 * 1024 * 1024
"""Largest form accepted: a 1 MiB plan as file or paste, with room for the encoding."""

STATIC = Path(__file__).parent / "static"
_STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


class CsrfRefused(WardianError):
    """A POST without this start's CSRF token (a cross-site form, or a stale page)."""

    exit_code = EXIT_AUTH


def _field(data: Any, name: str) -> str:
    value = data.get(name)
    return value if isinstance(value, str) else ""


def _record_field(data: Any) -> str | None:
    """The record a plan came from (a record page's control), if it looks like an id."""
    value = _field(data, "record")
    return value if value and len(value) <= 64 and all(
        c in "0123456789abcdef-" for c in value) else None


def _review_field(data: Any) -> str | None:
    """The review a plan came from (a review page's apply), if it looks like a run id."""
    return _record_field({"record": _field(data, "review")})


def _form_field(exc: WardianError) -> str | None:
    """The form field a record control's error is about: the app layer's `field`, or the
    one-operation plan's field path (``operations[0].text`` → ``text``)."""
    named = getattr(exc, "field", None) or getattr(exc, "path", None)
    return named.removeprefix("operations[0].") if isinstance(named, str) else None


def _status(exc: WardianError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    return {EXIT_USAGE: 422, EXIT_AUTH: 403, EXIT_CONFLICT: 409}.get(exc.exit_code, 500)


def create_app(guard: Guard) -> Any:
    """The Garden ASGI app behind `GuardMiddleware` for this start's `guard`."""

    def page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
        html = render(template, {"csrf": guard.csrf, "path": request.url.path,
                                 "base": guard.base, **context})
        return HTMLResponse(html, status_code=status)

    def failure(request: Request, exc: WardianError, **context: Any) -> Response:
        context.setdefault("back", None)
        context.setdefault("field", None)
        context.setdefault("back_label", None)
        return page(request, "error.html.j2", _status(exc), error=exc.render(),
                    title="Error", **context)

    async def form(request: Request) -> FormData:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_FORM_BYTES:
            raise UsageError(f"request body of {length} bytes is over the "
                               f"{MAX_FORM_BYTES}-byte limit (a plan is at most 1 MiB)")
        data = await request.form(max_part_size=MAX_FORM_BYTES, max_files=2, max_fields=50)
        token = data.get("csrf")
        if not guard.csrf_ok(token if isinstance(token, str) else None):
            raise CsrfRefused(
                "refused: the form carries no valid CSRF token",
                hint="reload the page from Garden and submit it again",
            )
        return data

    def handler(fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def wrapped(request: Request) -> Response:
            try:
                result: Response = await fn(request)
                return result
            except WardianError as exc:
                return failure(request, exc)
        return wrapped

    # --- pages -------------------------------------------------------------------------

    async def agents(request: Request) -> Response:
        from wardian.app.garden import agents_overview, review_queue

        rows = await run_in_threadpool(lambda: agents_overview(open_state_db(), open_memory_db()))
        queues = await run_in_threadpool(lambda: review_queue(open_state_db(), open_memory_db()))
        return page(request, "agents.html.j2", title="Agents", agents=rows,
                    queue={q.agent_id: q for q in queues})

    async def queue(request: Request) -> Response:
        from wardian.app.garden import review_queue

        queues = await run_in_threadpool(lambda: review_queue(open_state_db(), open_memory_db()))
        return page(request, "queue.html.j2", title="Review queue", queues=queues)

    async def memory(request: Request) -> Response:
        from wardian.app.garden import memory_page, record_marks, resolve_owner
        from wardian.app.reviews import list_reviews

        q = request.query_params
        owner, name = await run_in_threadpool(
            lambda: resolve_owner(open_state_db(), open_memory_db(), request.path_params["agent"]))
        reviews = await run_in_threadpool(
            lambda: list_reviews(open_state_db(), open_memory_db(), owner, limit=10))
        try:
            number = int(q.get("page", "1"))
        except ValueError:
            number = 1
        found = await run_in_threadpool(
            lambda: memory_page(open_memory_db(), owner, kind=q.get("kind", ""),
                                scope=q.get("scope", ""), status=q.get("status", "active"),
                                text=q.get("q", ""), page=number))
        filters = {k: v for k, v in found.filters.items() if v}

        def link(number: int) -> str:
            return "?" + urlencode({**filters, "page": number})

        return page(request, "memory.html.j2", title=f"{name} · memory", owner=owner,
                    name=name, found=found, marks={r.id: record_marks(r) for r in found.records},
                    reviews=reviews,
                    prev_link=link(found.page - 1) if found.page > 1 else None,
                    next_link=link(found.page + 1) if found.page < found.pages else None)

    async def record(request: Request) -> Response:
        from wardian.app.garden import (
            KINDS,
            merge_candidates,
            record_history,
            record_marks,
            resolve_owner,
        )

        # record_history, as `garden memory show|history`: a miss names the operator's list.
        rec, revisions = await run_in_threadpool(
            lambda: record_history(open_memory_db(), request.path_params["record"]))
        _, owner_name = await run_in_threadpool(
            lambda: resolve_owner(open_state_db(), open_memory_db(), rec.agent_id))
        targets = (await run_in_threadpool(lambda: merge_candidates(open_memory_db(), rec))
                   if rec.status == "active" else [])
        declined = request.query_params.get("notice") == "declined"
        return page(request, "record.html.j2", title=f"memory {rec.short_id}", record=rec,
                    revisions=revisions, marks=record_marks(rec), kinds=KINDS,
                    owner_name=owner_name,
                    targets=targets,
                    notice="Declined: nothing was changed." if declined else None)

    async def recall(request: Request) -> Response:
        from wardian.app.garden import recall_view, resolve_owner

        q = request.query_params
        owner, name = await run_in_threadpool(
            lambda: resolve_owner(open_state_db(), open_memory_db(), request.path_params["agent"]))
        back = f"{guard.base}/agents/{owner}/recall"
        try:
            view = await run_in_threadpool(lambda: recall_view(
                open_memory_db(), owner, query=q.get("q", ""), workspace=q.get("workspace", "")))
        except WardianError as exc:
            return failure(request, exc, back=back, field=_form_field(exc))
        return page(request, "recall.html.j2", title=f"{name} · recall", owner=owner,
                    name=name, view=view)

    async def loaded(request: Request) -> Response:
        from wardian.app.garden import loaded_events, resolve_owner

        owner, name = await run_in_threadpool(
            lambda: resolve_owner(open_state_db(), open_memory_db(), request.path_params["agent"]))
        events = await run_in_threadpool(lambda: loaded_events(open_memory_db(), owner))
        return page(request, "loaded.html.j2", title=f"{name} · Memory loaded", owner=owner,
                    name=name, events=events)

    async def runs(request: Request) -> Response:
        from wardian.app.garden import runs_overview

        status = request.query_params.get("status", "")
        rows = await run_in_threadpool(
            lambda: runs_overview(open_state_db(), status=status or None))
        return page(request, "runs.html.j2", title="Runs", runs=rows, run_status=status)

    async def run(request: Request) -> Response:
        from wardian.app.garden import run_detail

        found = await run_in_threadpool(
            lambda: run_detail(open_state_db(), request.path_params["run"]))
        return page(request, "run.html.j2", title=f"run {found.id[:8]}", run=found)

    async def invokers(request: Request) -> Response:
        from wardian.app.garden import invokers_overview

        rows = await run_in_threadpool(lambda: invokers_overview(open_state_db()))
        return page(request, "invokers.html.j2", title="Invokers", invokers=rows,
                    notice=request.query_params.get("notice"))

    async def invoker_switch(request: Request) -> Response:
        from wardian.app.garden import set_invoker_enabled

        data = await form(request)
        enabled = data.get("enabled") == "true"
        doc = await run_in_threadpool(lambda: set_invoker_enabled(
            open_state_db(), request.path_params["invoker"], enabled))
        notice = f"{'Enabled' if enabled else 'Disabled'} invoker {doc['name']}."
        return RedirectResponse(f"{guard.base}/invokers?" + urlencode({"notice": notice}),
                                status_code=303)

    # --- maintain memory… --------------------------------------------------------------

    async def _owner(request: Request) -> tuple[str, str]:
        from wardian.app.garden import resolve_owner

        return await run_in_threadpool(lambda: resolve_owner(
            open_state_db(), open_memory_db(), request.path_params["agent"],
            allow_removed=False))

    async def _plan_bytes(data: FormData) -> tuple[bytes, str, str]:
        """(plan bytes, source name for messages, text to carry on) from upload or paste."""
        upload = data.get("plan_file")
        if isinstance(upload, UploadFile) and upload.filename:
            raw = await upload.read()
            text = raw.decode("utf-8", errors="replace")
            return raw, upload.filename, text
        text = str(data.get("plan_text") or "")
        return text.encode("utf-8"), "pasted plan", text

    def maintain_page(request: Request, owner: str, name: str, *, status: int = 200,
                      plan_text: str = "", **context: Any) -> Response:
        context.setdefault("error", None)
        context.setdefault("notice", None)
        context.setdefault("report", None)
        return page(request, "maintain.html.j2", status, title=f"{name} · Maintain memory",
                    owner=owner, name=name, plan_text=plan_text, **context)

    async def maintain(request: Request) -> Response:
        owner, name = await _owner(request)
        return maintain_page(request, owner, name)

    def preview_page(request: Request, owner: str, name: str, doc: dict[str, Any],
                     plan_text: str, record: str | None = None,
                     review: str | None = None) -> Response:
        """The preview of a plan (pasted, uploaded, or built by a record page's control):
        its confirm form carries the plan text on to the one confirm/apply flow."""
        by_op: dict[int, list[dict[str, Any]]] = {}
        for conflict in doc["conflicts"]:
            by_op.setdefault(conflict["operation"], []).append(conflict)
        existing = doc.get("existing_receipt")
        return page(request, "preview.html.j2", title=f"{name} · Maintenance preview",
                    owner=owner, name=name, doc=doc, conflicts_by_op=by_op, plan_text=plan_text,
                    record_id=record, review_id=review,
                    replay=bool(existing and existing["preview_digest"] == doc["preview_digest"]),
                    key_reused=bool(existing
                                    and existing["preview_digest"] != doc["preview_digest"]))

    async def preview(request: Request) -> Response:
        from wardian.app.maintenance import load_bound_bytes, preview_plan

        owner, name = await _owner(request)
        data = await form(request)
        raw, source, text = await _plan_bytes(data)
        try:
            plan = await run_in_threadpool(load_bound_bytes, raw, owner, source=source)
            doc = (await run_in_threadpool(preview_plan, plan, owner)).to_json()
        except WardianError as exc:
            return maintain_page(request, owner, name, status=_status(exc), plan_text=text,
                                 error=exc.render())
        return preview_page(request, owner, name, doc, text, _record_field(data),
                            _review_field(data))

    # --- the record page's controls: a form → a one-record plan → the same preview ---------

    def record_control(build: Callable[[str, FormData], Any]) -> Callable[[Request], Any]:
        """A POST handler for one record control: `build(record_id, form)` returns the
        app layer's `RecordPlan`; its preview goes on to the same confirm and apply."""

        async def control(request: Request) -> Response:
            from wardian.app.garden import resolve_owner
            from wardian.app.maintenance import preview_plan

            data = await form(request)
            ref = request.path_params["record"]
            try:
                built = await run_in_threadpool(build, ref, data)
            except WardianError as exc:
                return failure(request, exc, back=f"{guard.base}/records/{ref}",
                               field=_form_field(exc))
            owner, name = await run_in_threadpool(lambda: resolve_owner(
                open_state_db(), open_memory_db(), built.owner_id, allow_removed=False))
            doc = (await run_in_threadpool(preview_plan, built.plan, owner)).to_json()
            text = json.dumps(built.document, indent=2, ensure_ascii=False)
            return preview_page(request, owner, name, doc, text, built.record_id)

        return control

    def _retire(ref: str, data: FormData) -> Any:
        from wardian.app.garden import retire_from_form

        return retire_from_form(open_memory_db(), ref, revision=_field(data, "revision"),
                                reason=_field(data, "reason"))

    def _revise(ref: str, data: FormData) -> Any:
        from wardian.app.garden import revise_from_form

        return revise_from_form(open_memory_db(), ref, revision=_field(data, "revision"),
                                text=_field(data, "text"), kind=_field(data, "kind"),
                                scope=_field(data, "scope"),
                                workspace_path=_field(data, "workspace_path"))

    def _merge(ref: str, data: FormData) -> Any:
        from wardian.app.garden import merge_from_form

        return merge_from_form(open_memory_db(), ref, revision=_field(data, "revision"),
                               into=_field(data, "into"), reason=_field(data, "reason"))

    async def confirm(request: Request) -> Response:
        from wardian.app.maintenance import confirmation_for, load_bound_bytes

        owner, name = await _owner(request)
        data = await form(request)
        raw, source, text = await _plan_bytes(data)
        plan = await run_in_threadpool(load_bound_bytes, raw, owner, source=source)
        shown = confirmation_for(plan, owner)
        return page(request, "confirm.html.j2", title="Confirm apply", owner=owner, name=name,
                    plan_id=shown.plan_id, operation_count=shown.operation_count,
                    digest_prefix=shown.digest_prefix, plan_text=text,
                    record_id=_record_field(data), review_id=_review_field(data))

    async def apply(request: Request) -> Response:
        from wardian.app.maintenance import (
            ApplyAborted,
            apply_loaded,
            confirmed_as_shown,
            load_bound_bytes,
        )

        owner, name = await _owner(request)
        data = await form(request)
        raw, source, text = await _plan_bytes(data)
        decision = data.get("decision")
        record_id = _record_field(data)
        review_id = _review_field(data)
        # The backend's own check: only what the dialog showed may be applied.
        confirmed = confirmed_as_shown(decision, (
            data.get("confirm_owner"), data.get("confirm_count"), data.get("confirm_digest")))

        try:
            plan = await run_in_threadpool(load_bound_bytes, raw, owner, source=source)
            result = await run_in_threadpool(
                lambda: apply_loaded(plan, owner, confirm=confirmed))
        except ApplyAborted as exc:
            declined = decision == "decline"
            if declined and record_id:  # back where the operator started: the record
                return RedirectResponse(
                    f"{guard.base}/records/{record_id}?" + urlencode({"notice": "declined"}),
                    status_code=303)
            if declined and review_id:  # back to the review, still pending
                return RedirectResponse(
                    f"{guard.base}/agents/{owner}/reviews/{review_id}?"
                    + urlencode({"notice": "declined"}), status_code=303)
            return maintain_page(
                request, owner, name, plan_text=text, status=200 if declined else 409,
                notice=("Declined: nothing was changed. Preview the plan again to apply it."
                        if declined else None),
                error=None if declined else exc.render())
        except WardianError as exc:
            if record_id:  # a record control's plan: the error leads back to the record
                return failure(request, exc, back=f"{guard.base}/records/{record_id}")
            if review_id:
                return failure(request, exc,
                               back=f"{guard.base}/agents/{owner}/reviews/{review_id}",
                               back_label="Back to the review")
            return maintain_page(request, owner, name, status=_status(exc), plan_text=text,
                                 error=exc.render())
        query = {"key": result.receipt.idempotency_key,
                 "outcome": "replayed" if result.replayed else "applied"}
        if record_id:
            query["record"] = record_id
        if review_id:
            query["review"] = review_id
        return RedirectResponse(
            f"{guard.base}/agents/{owner}/maintain/receipt?{urlencode(query)}",
            status_code=303)

    async def receipt(request: Request) -> Response:
        from wardian.app.maintenance import check_receipt

        owner, name = await _owner(request)
        key = request.query_params.get("key", "")
        report = await run_in_threadpool(
            lambda: check_receipt(open_memory_db(), owner, idempotency_key=key))
        return page(request, "receipt.html.j2", title=f"{name} · Receipt", owner=owner,
                    name=name, report=report, outcome=request.query_params.get("outcome"),
                    record_id=_record_field(request.query_params),
                    review_id=_review_field(request.query_params))

    async def check(request: Request) -> Response:
        from wardian.app.maintenance import check_receipt, load_bound_bytes

        owner, name = await _owner(request)
        data = await form(request)
        key = str(data.get("idempotency_key") or "").strip()
        raw, source, text = await _plan_bytes(data)
        try:
            if key:
                report = await run_in_threadpool(
                    lambda: check_receipt(open_memory_db(), owner, idempotency_key=key))
            else:
                plan = await run_in_threadpool(load_bound_bytes, raw, owner, source=source)
                report = await run_in_threadpool(
                    lambda: check_receipt(open_memory_db(), owner, plan=plan))
        except WardianError as exc:
            return maintain_page(request, owner, name, status=_status(exc), plan_text=text,
                                 error=exc.render())
        return maintain_page(request, owner, name, plan_text=text, report=report)

    # --- a memory review: accept or drop each operation, then the same preview ------------

    async def review_page(request: Request) -> Response:
        from wardian.app.reviews import load_review, review_operations

        owner, name = await _owner(request)
        found = await run_in_threadpool(
            lambda: load_review(open_state_db(), open_memory_db(), request.path_params["run"],
                                owner))
        operations = await run_in_threadpool(lambda: review_operations(open_memory_db(), found))
        declined = request.query_params.get("notice") == "declined"
        return page(request, "review.html.j2", title=f"{name} · review {found.run_id[:8]}",
                    owner=owner, name=name, review=found, operations=operations,
                    notice="Declined: nothing was changed." if declined else None)

    async def review_apply(request: Request) -> Response:
        """The accepted operations (field ``accept``, repeated) → `review_subset_plan` →
        the ordinary preview page, whose confirm and apply are the maintain flow's."""
        from wardian.app.maintenance import preview_plan
        from wardian.app.reviews import review_subset_plan

        owner, name = await _owner(request)
        data = await form(request)
        run_ref = request.path_params["run"]
        accepted = [v for v in data.getlist("accept") if isinstance(v, str)]
        try:
            subset = await run_in_threadpool(
                lambda: review_subset_plan(open_state_db(), open_memory_db(), run_ref, owner,
                                           accepted))
        except WardianError as exc:
            return failure(request, exc, back=f"{guard.base}/agents/{owner}/reviews/{run_ref}",
                           back_label="Back to the review", field=_form_field(exc))
        doc = (await run_in_threadpool(preview_plan, subset.plan, owner)).to_json()
        text = json.dumps(subset.document, indent=2, ensure_ascii=False)
        return preview_page(request, owner, name, doc, text, review=subset.review.run_id)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        path = STATIC / name
        if "/" in name or path.suffix not in _STATIC_TYPES or not path.is_file():
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(path.read_bytes(), media_type=_STATIC_TYPES[path.suffix])

    routes = [
        Route("/", handler(agents)),
        Route("/queue", handler(queue)),
        Route("/agents/{agent}", handler(memory)),
        Route("/agents/{agent}/loaded", handler(loaded)),
        Route("/agents/{agent}/recall", handler(recall)),
        Route("/agents/{agent}/maintain", handler(maintain)),
        Route("/agents/{agent}/maintain/preview", handler(preview), methods=["POST"]),
        Route("/agents/{agent}/maintain/confirm", handler(confirm), methods=["POST"]),
        Route("/agents/{agent}/maintain/apply", handler(apply), methods=["POST"]),
        Route("/agents/{agent}/maintain/check-receipt", handler(check), methods=["POST"]),
        Route("/agents/{agent}/maintain/receipt", handler(receipt)),
        Route("/agents/{agent}/reviews/{run}", handler(review_page)),
        Route("/agents/{agent}/reviews/{run}/apply", handler(review_apply), methods=["POST"]),
        Route("/records/{record}", handler(record)),
        Route("/records/{record}/retire", handler(record_control(_retire)), methods=["POST"]),
        Route("/records/{record}/revise", handler(record_control(_revise)), methods=["POST"]),
        Route("/records/{record}/merge", handler(record_control(_merge)), methods=["POST"]),
        Route("/runs", handler(runs)),
        Route("/runs/{run}", handler(run)),
        Route("/invokers", handler(invokers)),
        Route("/invokers/{invoker}/enabled", handler(invoker_switch), methods=["POST"]),
        Route("/static/{name}", static),
    ]
    return GuardMiddleware(Starlette(routes=routes), guard)
