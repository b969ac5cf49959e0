"""The blueprint libraries: shipped samples (package data) and the user's editable library.

Layout of either library: ``<library>/<name>/<anything>.yaml`` (a folder per blueprint, with
its prompt templates next to it) or ``<library>/<name>.yaml``. The blueprint's id is its
``blueprint.id``; a user copy with the same id shadows the shipped one (both are listed, with
a note). Broken files are listed with their first problem, never dropped.

`init_library` copies the shipped samples into the user library without overwriting files
the user edited: ``.wardian-manifest.json`` in the user library records the sha256 of each
file as last copied, so an unedited copy can be refreshed and an edited one is kept.

`list_library` and `find_blueprint` check ``action:`` names against the ``known_actions``
their caller passes (``wardian.engine.actions.known_actions()``); None = not checked (see
`wardian.blueprints.validate`).

Spec: docs/blueprint-guide.md (library).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wardian.blueprints.errors import nearest
from wardian.blueprints.validate import (
    FileReport,
    LoadedBlueprint,
    load_blueprint,
    validate_file,
)
from wardian.errors import NotFoundError, UsageError

__all__ = [
    "MANIFEST_NAME",
    "LibraryEntry",
    "find_blueprint",
    "init_library",
    "list_library",
    "shipped_library_dir",
]

MANIFEST_NAME = ".wardian-manifest.json"
_SKIP = {"__init__.py", "__pycache__", MANIFEST_NAME}


def shipped_library_dir() -> Path:
    """The folder of shipped samples inside the installed package (``wardian/library``)."""
    return Path(__file__).resolve().parents[1] / "library"


def _user_dir(user_dir: Path | None) -> Path:
    if user_dir is not None:
        return user_dir
    from wardian.config import user_library_dir

    return user_library_dir()


@dataclass
class LibraryEntry:
    """One blueprint file in a library.

    Attributes:
        id: ``blueprint.id`` (for a broken file: its folder or file stem).
        source: ``"user"`` or ``"shipped"``.
        path: the YAML file.
        report: the validation outcome (`report.loaded` is set when valid).
        active: False when another entry with the same id takes precedence.
        note: e.g. ``"shadows the shipped copy"``, or None.
    """

    id: str
    source: str
    path: Path
    report: FileReport
    active: bool = True
    note: str | None = None

    @property
    def ok(self) -> bool:
        """True when the file is a valid blueprint."""
        return self.report.ok

    @property
    def error(self) -> str | None:
        """The first problem's message, or None."""
        return self.report.problems[0].render() if self.report.problems else None

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary (id, source, path, ok, active, note, name, version, problems)."""
        loaded = self.report.loaded
        return {
            "id": self.id,
            "source": self.source,
            "path": str(self.path),
            "ok": self.ok,
            "active": self.active,
            "note": self.note,
            "name": loaded.blueprint.blueprint.name if loaded else None,
            "version": loaded.blueprint.blueprint.version if loaded else None,
            "hash": loaded.source_hash if loaded else None,
            "problems": [p.render() for p in self.report.problems],
        }


def _yaml_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml")]
    for sub in folder.iterdir():
        if sub.is_dir() and sub.name not in _SKIP and not sub.name.startswith("."):
            found.extend(p for p in sub.iterdir()
                         if p.is_file() and p.suffix in (".yaml", ".yml"))
    return sorted(found)


def _claimed_id(path: Path, folder: Path) -> str:
    """The id a library file claims: its ``blueprint.id`` when that can be read, else its
    folder name (``<library>/<name>/x.yaml``) or file stem (``<library>/<name>.yaml``).

    Cheap: reads YAML events only up to ``blueprint.id`` (no validation), so finding one
    blueprint does not validate the whole library. Read-only.
    """
    fallback = path.parent.name if path.parent != folder else path.stem
    from wardian._fs import read_regular_file
    from wardian.blueprints.loader import MAX_BLUEPRINT_BYTES, check_yaml_bounds

    try:
        text = read_regular_file(path, MAX_BLUEPRINT_BYTES).decode("utf-8")
    except (OSError, ValueError):  # too large, not a file, not UTF-8: validation says why
        return fallback
    import yaml

    try:
        ident = _meta_id(text)
        if ident is None and check_yaml_bounds(text, str(path)) is not None:
            return fallback
        if ident is None:  # unusual YAML (anchors, merge keys, …): read it all
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            meta = data.get("blueprint") if isinstance(data, dict) else None
            ident = meta.get("id") if isinstance(meta, dict) else None
    except (yaml.YAMLError, StopIteration):
        return fallback
    return ident if isinstance(ident, str) and ident else fallback


def _meta_id(text: str) -> str | None:
    """``blueprint.id`` from the YAML event stream, stopping as soon as it is seen; None
    when the document is not shaped plainly (the caller then loads it whole).

    Raises:
        yaml.YAMLError: the YAML breaks before the id.
    """
    import yaml

    events = iter(yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)

    def skip(first: Any) -> None:  # consume the rest of the node that starts with `first`
        depth = 1 if isinstance(first, opening) else 0
        while depth:
            event = next(events)
            depth += 1 if isinstance(event, opening) else -1 if isinstance(event, closing) else 0

    def items() -> Any:  # (scalar key or None, first event of the value); caller consumes it
        while not isinstance(key := next(events), yaml.MappingEndEvent):
            if not isinstance(key, yaml.ScalarEvent):
                skip(key)
                return
            yield key.value, next(events)

    for event in events:
        if isinstance(event, yaml.MappingStartEvent):
            break
        if not isinstance(event, yaml.StreamStartEvent | yaml.DocumentStartEvent):
            return None
    else:
        return None
    for key, value in items():
        if key == "blueprint" and isinstance(value, yaml.MappingStartEvent):
            for inner, first in items():
                if inner == "id" and isinstance(first, yaml.ScalarEvent):
                    return str(first.value)
                skip(first)
            return None
        skip(value)
    return None


def _scan(folder: Path, source: str, known_actions: Collection[str] | None
          ) -> list[LibraryEntry]:
    """Validate every file of one library; the first file (path order) claiming an id is
    active, later ones get a note."""
    entries: list[LibraryEntry] = []
    seen: dict[str, Path] = {}
    for path in _yaml_files(folder):
        report = validate_file(path, known_actions=known_actions)
        ident = report.loaded.id if report.loaded is not None else _claimed_id(path, folder)
        entry = LibraryEntry(ident, source, path, report)
        if ident in seen:
            entry.active = False
            entry.note = f"duplicate id {ident!r}: {seen[ident]} takes precedence"
        else:
            seen[ident] = path
        entries.append(entry)
    return entries


def list_library(*, shipped_dir: Path | None = None, user_dir: Path | None = None,
                 known_actions: Collection[str] | None = None) -> list[LibraryEntry]:
    """Every blueprint in the user and shipped libraries, broken ones included (read-only).

    Args:
        shipped_dir / user_dir: the libraries (default: the package's samples and
            ``config.user_library_dir()``).
        known_actions: the registered action names (the engine's ``known_actions()``);
            None = action names are not checked.

    A user file claiming a shipped blueprint's id shadows it, even when the user copy is
    broken (runs then fail with the user copy's problems rather than silently using the
    shipped one); both are returned, the shipped one with ``active=False`` and a note.
    Sorted by id, user copies first.
    """
    user = _scan(_user_dir(user_dir), "user", known_actions)
    shipped = _scan(shipped_dir or shipped_library_dir(), "shipped", known_actions)
    user_ids = {e.id: e for e in user if e.active}
    for entry in shipped:
        other = user_ids.get(entry.id)
        if other is not None and entry.active:
            entry.active = False
            entry.note = f"shadowed by the user copy {other.path}" + (
                "" if other.ok else " (broken: fix it or remove it)")
            other.note = other.note or "shadows the shipped copy"
    order = {"user": 0, "shipped": 1}
    return sorted(user + shipped, key=lambda e: (e.id, order[e.source], str(e.path)))


def find_blueprint(ref: str, *, shipped_dir: Path | None = None, user_dir: Path | None = None,
                   known_actions: Collection[str] | None = None) -> LoadedBlueprint:
    """Load a blueprint by id (user library first, then shipped) or by file path.

    By id, only the ``blueprint.id`` of each library file is read (`_claimed_id`); just
    the first file claiming `ref` (the one `list_library` marks active) is validated.
    `known_actions`: the registered action names (the engine's ``known_actions()``);
    None = action names are not checked.

    Raises:
        NotFoundError: no blueprint with that id (names the nearest id).
        UsageError (exit 2): `ref` names a ``.yaml`` file that does not exist.
        BlueprintError: the blueprint exists but is broken (all its problems attached).
    """
    path = Path(ref).expanduser()
    if ref.endswith((".yaml", ".yml")) or path.is_file():
        if not path.is_file():
            raise UsageError(f"blueprint file not found: {ref}",
                                hint="pass an existing .yaml file, or a blueprint id")
        return load_blueprint(path, known_actions=known_actions)
    claimed: list[str] = []
    for folder in (_user_dir(user_dir), shipped_dir or shipped_library_dir()):
        for file in _yaml_files(folder):
            ident = _claimed_id(file, folder)
            if ident == ref:
                return load_blueprint(file, known_actions=known_actions)
            claimed.append(ident)
    guess = nearest(ref, claimed)
    raise NotFoundError(
        f"no blueprint with id {ref!r}" + (f" (did you mean {guess!r}?)" if guess else ""),
        hint="see `wardian blueprint list`, or pass a path to a .yaml file",
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def init_library(*, shipped_dir: Path | None = None, user_dir: Path | None = None
                 ) -> list[tuple[str, str]]:
    """Copy the shipped samples into the user library, never overwriting edited files.

    For each shipped file: missing → ``copied``; identical → ``unchanged``; unedited since
    the last init (hash equals the manifest's) but the shipped file changed → ``updated``;
    otherwise the user edited it → ``kept (edited)``.

    Returns:
        ``(relative path, action)`` per shipped file, sorted by path.

    Raises:
        StoreError: the user library cannot be written (names the file and the reason).
    """
    source = shipped_dir or shipped_library_dir()
    target = _user_dir(user_dir)
    try:
        return _copy_samples(source, target)
    except OSError as exc:
        from wardian.errors import StoreError

        where = exc.filename or target
        raise StoreError(f"cannot write the user library at {where}: "
                         f"{exc.strerror or exc}",
                         hint="check the folder's permissions, or point WARDIAN_HOME "
                              "at a writable data dir") from exc


def _copy_samples(source: Path, target: Path) -> list[tuple[str, str]]:
    """`init_library`'s copy loop; raises OSError."""
    from wardian._fs import make_private, private_dir, write_private

    private_dir(target)
    manifest_path = target / MANIFEST_NAME
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError):
        manifest = {}
    results: list[tuple[str, str]] = []
    for file in sorted(source.rglob("*")):
        rel_parts = file.relative_to(source).parts
        if not file.is_file() or any(p in _SKIP or p.endswith(".pyc") for p in rel_parts):
            continue
        rel = "/".join(rel_parts)
        dest = target.joinpath(*rel_parts)
        shipped_hash = _sha(file)
        if not dest.exists():
            private_dir(dest.parent)
            shutil.copyfile(file, dest)
            make_private(dest)
            action = "copied"
        else:
            current = _sha(dest)
            if current == shipped_hash:
                action = "unchanged"
            elif manifest.get(rel) == current:
                shutil.copyfile(file, dest)
                make_private(dest)
                action = "updated"
            else:
                results.append((rel, "kept (edited)"))
                continue
        manifest[rel] = shipped_hash
        results.append((rel, action))
    write_private(manifest_path, json.dumps({"files": manifest}, indent=2, sort_keys=True)
                  + "\n")
    return results

