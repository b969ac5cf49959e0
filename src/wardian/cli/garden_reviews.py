"""`wardian garden memory reviews` and `garden memory review show|apply`: the memory
reviews the ``memory-review`` blueprint drafted, pending an operator's review.

Each command resolves the agent, calls `wardian.app.reviews` and renders the result;
``review apply`` goes through the same preview, terminal confirmation and receipt as
``garden maintain apply`` (`wardian.cli.garden_maintain` renders both). A stale review
(a record it names changed since it was drafted) is refused with exit 4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import typer

from wardian.cli._common import JsonOption, emit_json, print_table, require_operator, stdout

__all__ = ["register"]

_FORMATS = ("table", "json")


def _owner(agent: str) -> tuple[str, str]:
    from wardian.app.databases import open_memory_db, open_state_db
    from wardian.app.garden import resolve_owner

    return resolve_owner(open_state_db(), open_memory_db(), agent)


def _as_json(fmt: str, as_json: bool) -> bool:
    from wardian.errors import UsageError

    if fmt not in _FORMATS:
        raise UsageError(f"--format: expected table or json, found {fmt!r}",
                         hint="use --format table (the default) or --format json")
    return as_json or fmt == "json"


def _counts(counts: dict[str, int]) -> str:
    shown = [f"{kind.replace('_', ' ')} {n}" for kind, n in counts.items() if n]
    return ", ".join(shown) or "none"


def _conflict_lines(conflicts: Sequence[Mapping[str, Any]]) -> list[str]:
    return [f"  {c['path']}: {c['kind']}: memory {c['memory_id']}"
            + (f" is at revision {c['current_revision_id']}, the review expects "
               f"{c['expected_revision_id']}" if c["kind"] == "revision_changed" else "")
            for c in conflicts]


def register(memory_app: typer.Typer) -> None:
    """Add ``reviews`` and ``review show|apply`` to the ``garden memory`` group."""
    review_app = typer.Typer(
        help="Show or apply one memory review (a plan the memory-review blueprint drafted).",
        no_args_is_help=True)
    memory_app.add_typer(review_app, name="review")

    @memory_app.command("reviews")
    def reviews(
        agent: str = typer.Option(..., "--agent", help="Agent name, id or unique id prefix."),
        fmt: str = typer.Option("table", "--format", help="table (default) or json."),
        as_json: bool = JsonOption,
    ) -> None:
        """List an agent's memory reviews, newest first, with their state.

        Each row: run id, drafted time, operation counts per finding kind, digest and state (pending, applied, stale: a record changed since it was drafted, empty: nothing to do).
        """  # noqa: E501 (one paragraph: Rich re-wraps help text)
        require_operator()
        from wardian.app.databases import open_memory_db, open_state_db
        from wardian.app.reviews import list_reviews

        want_json = _as_json(fmt, as_json)
        owner, name = _owner(agent)
        found = list_reviews(open_state_db(), open_memory_db(), owner)
        if want_json:
            emit_json({"agent": {"id": owner, "name": name},
                       "reviews": [r.to_json() for r in found]})
            return
        if not found:
            stdout(f"{name} · owner {owner} · no memory reviews. Draft one: `wardian "
                   f"automation run start memory-review --agent {agent} --assignments JSON "
                   "--wait` (or a schedule invoker).")
            return
        print_table(
            ["run", "drafted (UTC)", "ops", "counts", "digest sha256:", "state"],
            [[r.run_id[:8], (r.drafted_at or "")[:19].replace("T", " "), r.operations,
              _counts(r.counts), (r.digest_prefix or "").removeprefix("sha256:"), r.state]
             for r in found],
            title=f"{name} · owner {owner} · memory reviews")
        pending = [r for r in found if r.state == "pending"]
        if pending:
            stdout(f"Review one: wardian garden memory review show {pending[0].run_id[:8]} "
                   f"--agent {agent}")

    @review_app.command("show")
    def show(
        run: str = typer.Argument(..., metavar="RUN", help="The review's run id or prefix."),
        agent: str = typer.Option(..., "--agent", help="Agent name, id or unique id prefix."),
        full: bool = typer.Option(False, "--full", help="Show every text whole."),
        as_json: bool = JsonOption,
    ) -> None:
        """Preview a review as `garden maintain preview` previews a plan; read-only.

        Before/After per operation, conflicts and digest; the preview is remembered so `review apply` may follow.
        """  # noqa: E501 (one paragraph: Rich re-wraps help text)
        require_operator()
        from wardian.app.databases import open_memory_db, open_state_db
        from wardian.app.reviews import load_review, preview_review
        from wardian.cli import garden_maintain

        owner, name = _owner(agent)
        state, memory = open_state_db(), open_memory_db()
        review = load_review(state, memory, run, owner)
        if review.plan is None:
            if as_json:
                emit_json({"review": review.to_json(with_plan=True), "preview": None})
                return
            stdout(f"Review {review.run_id[:8]} found nothing to do (drafted "
                   f"{review.drafted_at}).")
            return
        review, preview = preview_review(state, memory, run, owner)
        doc = preview.to_json()
        if as_json:
            emit_json({"review": review.to_json(with_plan=True), "preview": doc})
            return
        stdout(f"Memory review {review.run_id[:8]} · drafted {review.drafted_at} · "
               f"{_counts(review.counts)} · state {review.state}")
        if review.state == "applied":
            stdout(f"Applied at {(review.receipt or {}).get('applied_at')}.")
        apply_line = (f"To apply (it asks you on this terminal): wardian garden memory review "
                      f"apply {review.run_id[:8]} --agent {agent} (add --confirm "
                      f"{doc['digest_prefix']} to have the digest checked too)")
        redraft = (f"This review is stale: re-draft it (`wardian automation run start "
                   f"memory-review --agent {agent} …`); it cannot be applied.")
        garden_maintain._render_preview(
            doc, name, None, agent, full=full,
            apply_lines=["Conflicts: none.", apply_line] if not preview.conflicts else [],
            conflict_fix=redraft)
        if review.state == "stale" and not preview.conflicts:
            stdout(redraft)

    @review_app.command("apply")
    def apply(
        run: str = typer.Argument(..., metavar="RUN", help="The review's run id or prefix."),
        agent: str = typer.Option(..., "--agent", help="Agent name, id or unique id prefix."),
        confirm: str | None = typer.Option(
            None, "--confirm",
            help="Also check the digest: sha256:<12 hex> exactly as `review show` prints it. "
            "The terminal question is asked all the same."),
        as_json: bool = JsonOption,
    ) -> None:
        """Apply a pending review after confirmation on the terminal; print the receipt.

        The same preview, question and receipt as `garden maintain apply`. A stale review is refused (exit 4); an applied one prints its stored receipt.
        """  # noqa: E501 (one paragraph: Rich re-wraps help text)
        require_operator()
        from wardian.app.databases import open_memory_db, open_state_db
        from wardian.app.reviews import ReviewStale, apply_review_on_terminal
        from wardian.cli import garden_maintain
        from wardian.cli._common import stderr

        owner, _name = _owner(agent)
        try:
            result = apply_review_on_terminal(open_state_db(), open_memory_db(), run, owner,
                                              confirm_digest=confirm)
        except ReviewStale as exc:
            for line in _conflict_lines(exc.conflicts):
                stderr(line)
            raise
        garden_maintain.print_applied(result, as_json=as_json)
