"""Configuration as code: settings, groups, backends and pools as one YAML file, out and back in.

`export_text` writes the declared state; `import_text` applies a file in one transaction through
the same serializers and services as the admin API, so a file can never store what the API
would refuse. Each object is written in a savepoint that is undone when it changed nothing, so
importing an export writes nothing at all. Refusals name the file's line and column:

    ConfigRefused            the file was not applied; `.errors` lists every refusal found
      ConfigProblem          one refusal: where (line, column, YAML path) and why
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Final

import yaml
from django.db import transaction
from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError

from accounts import services as account_services
from accounts.allowances import as_json
from accounts.api_errors import ApiError
from accounts.models import GatewayGroup
from accounts.serializers import GroupIn
from aiplane.catalog import (
    CATALOG,
    SPECS,
    SettingError,
    all_settings,
    coerce,
    settings_update,
)
from gateway.admin import services as admin_services
from gateway.admin.crypto import decrypt
from gateway.admin.serializers.topology import BackendIn, PoolIn
from gateway.admin.shapes import backend_settings, pool_state
from gateway.models import Backend, Pool

FORMAT_VERSION: Final = 1
SECTIONS: Final = ("settings", "groups", "backends", "pools")
# A masked key keeps the key stored for that backend; it is never a key itself.
MASK: Final = "********"
ENV_REFERENCE: Final = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_NODES: Final = 100_000  # aliases can make a small file expand without bound
IMPORT_ACTOR: Final = "manage.py config import"

# The fields of each entry, in the order an export writes them: the admin API's own (a
# backend's pools are written as the pools' members).
GROUP_FIELDS: Final = ("name", "description", "is_admin", "is_default", "priority", "allowance")
BACKEND_FIELDS: Final = tuple(name for name in BackendIn().get_fields() if name != "pools")
POOL_FIELDS: Final = tuple(PoolIn().get_fields())
FIELDS: Final = {"groups": GROUP_FIELDS, "backends": BACKEND_FIELDS, "pools": POOL_FIELDS}

Path = tuple[str | int, ...]


# ----- the state, as the file describes it ---------------------------------------------------


def _key_fingerprint(backend: Any) -> str | None:
    """Tells keys apart without holding one: what the diff compares, never what it prints."""
    if not backend.api_key_encrypted:
        return None
    # A key the installation secret no longer opens is still a key (and stays one if kept).
    plain = decrypt(backend.api_key_encrypted) or backend.api_key_encrypted
    return hashlib.sha256(plain.encode()).hexdigest()


def _defaults(section: str) -> dict[str, Any]:
    """What a field left out of an entry means: the value of a new object, as the API makes it."""
    if section == "groups":
        entry = account_services.group_settings(GatewayGroup())
    elif section == "backends":
        entry = {**backend_settings(Backend()), "api_key": ""}
        del entry["base_url"]  # has none: every backend names its own
    else:
        entry = pool_state(Pool())
    del entry["name"]
    return entry


@dataclass
class State:
    """Everything the file covers, by section and name; a backend's key as a fingerprint."""

    settings: dict[str, Any]
    groups: dict[str, dict[str, Any]]
    backends: dict[str, dict[str, Any]]
    pools: dict[str, dict[str, Any]]

    def section(self, name: str) -> dict[str, Any]:
        return dict(getattr(self, name))


def _one(section: str, name: str) -> dict[str, Any] | None:
    """One object's entry as stored now (None when there is none)."""
    if section == "groups":
        group = GatewayGroup.objects.filter(name=name).first()
        return None if group is None else account_services.group_settings(group)
    if section == "backends":
        backend = Backend.objects.filter(name=name).first()
        if backend is None:
            return None
        return {**backend_settings(backend), "api_key": _key_fingerprint(backend)}
    pool = Pool.objects.select_related("fallback").filter(name=name).first()
    return None if pool is None else pool_state(pool)


def current_state() -> State:
    pools = Pool.objects.select_related("fallback").prefetch_related("backends")
    return State(
        settings=all_settings(),
        groups={
            g.name: account_services.group_settings(g)
            for g in GatewayGroup.objects.order_by("name")
        },
        backends={
            b.name: {**backend_settings(b), "api_key": _key_fingerprint(b)}
            for b in Backend.objects.order_by("name")
        },
        pools={p.name: pool_state(p) for p in pools.order_by("name")},
    )


# ----- export --------------------------------------------------------------------------------


def env_name(backend: str) -> str:
    """The variable an export names for a backend's key: gpu-1 -> GPU_1_KEY."""
    stem = re.sub(r"[^A-Z0-9]", "_", backend.upper())
    return f"{'_' if stem[:1].isdigit() else ''}{stem}_KEY"


@dataclass
class Export:
    text: str
    variables: dict[str, str] = field(default_factory=dict)  # variable -> backend it keys


def export_text(*, keys: str = "mask") -> Export:
    """The declared state as YAML; keys masked ("mask") or as ${VARIABLE} references ("env")."""
    if keys not in ("mask", "env"):
        raise ValueError(f"keys must be mask or env, not {keys!r}")
    state = current_state()
    variables: dict[str, str] = {}
    backends = []
    for name, stored in state.backends.items():
        entry = {f: stored[f] for f in BACKEND_FIELDS if f != "api_key" and f in stored}
        if stored["api_key"] is not None:
            if keys == "env":
                variable, n = env_name(name), 1
                while variable in variables:  # gpu-1 and gpu.1 both make GPU_1_KEY
                    n += 1
                    variable = f"{env_name(name)[: -len('_KEY')]}_{n}_KEY"
                variables[variable] = name
                value = f"${{{variable}}}"
            else:
                value = MASK
            entry = {"name": name, "base_url": entry["base_url"], "api_key": value, **entry}
        backends.append(entry)
    document = {
        "version": FORMAT_VERSION,
        "settings": state.settings,
        "groups": list(state.groups.values()),
        "backends": backends,
        "pools": list(state.pools.values()),
    }
    header = (
        "# aiplane configuration (manage.py config export); apply with manage.py config import.\n"
        f'# api_key: "{MASK}" keeps the stored key, ${{NAME}} reads it from the environment.\n'
    )
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    return Export(text=header + body, variables=variables)


# ----- reading a file, with where each value stands -------------------------------------------


@dataclass(frozen=True)
class ConfigProblem:
    line: int  # 1-based, as editors count
    column: int
    path: Path
    message: str

    def render(self, source: str) -> str:
        where = _dotted(self.path)
        return f"{source}:{self.line}:{self.column}: {where + ': ' if where else ''}{self.message}"


class ConfigRefused(Exception):
    """The file was not applied; nothing changed."""

    def __init__(self, errors: list[ConfigProblem]) -> None:
        super().__init__(f"{len(errors)} error(s)")
        self.errors = errors


def _dotted(path: Path) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


@dataclass
class Document:
    data: dict[str, Any]
    marks: dict[Path, tuple[int, int]]  # a value's position
    key_marks: dict[Path, tuple[int, int]]  # the position of the key that holds it

    def where(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """The position of the deepest node of `path` the file has (a default has none)."""
        if key and path in self.key_marks:
            return self.key_marks[path]
        for n in range(len(path), -1, -1):
            if path[:n] in self.marks:
                return self.marks[path[:n]]
        return (1, 1)

    def problem(self, path: Path, message: str, *, key: bool = False) -> ConfigProblem:
        line, column = self.where(path, key=key)
        return ConfigProblem(line, column, path, message)


class _Reader:
    """Builds plain Python data from YAML nodes, noting each node's position."""

    def __init__(self) -> None:
        self.constructor = yaml.SafeLoader("")  # its scalar rules (bool, int, null, ...)
        self.marks: dict[Path, tuple[int, int]] = {}
        self.key_marks: dict[Path, tuple[int, int]] = {}
        self.nodes = 0

    @staticmethod
    def _mark(node: yaml.Node) -> tuple[int, int]:
        return (node.start_mark.line + 1, node.start_mark.column + 1)

    def _refuse(self, node: yaml.Node, path: Path, message: str) -> ConfigRefused:
        line, column = self._mark(node)
        return ConfigRefused([ConfigProblem(line, column, path, message)])

    def read(self, node: yaml.Node, path: Path, ancestors: frozenset[int] = frozenset()) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self._refuse(node, path, f"The file has more than {MAX_NODES} values.")
        if id(node) in ancestors:
            raise self._refuse(node, path, "An alias may not contain itself.")
        self.marks[path] = self._mark(node)
        inner = ancestors | {id(node)}
        if isinstance(node, yaml.MappingNode):
            own = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
            self.constructor.flatten_mapping(node)  # merge keys (<<: *defaults) come first
            merged = len(node.value) - own
            out: dict[Any, Any] = {}
            written: set[Any] = set()  # keys the mapping itself gives (a merged one may be redone)
            for n, (key_node, value_node) in enumerate(node.value):
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self._refuse(key_node, path, "A key must be a plain value.")
                key = self.constructor.construct_object(key_node)
                if n >= merged:
                    if key in written:
                        raise self._refuse(key_node, path, f"{key!r} appears twice.")
                    written.add(key)
                self.key_marks[(*path, key)] = self._mark(key_node)
                out[key] = self.read(value_node, (*path, key), inner)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.read(item, (*path, i), inner) for i, item in enumerate(node.value)]
        return self.constructor.construct_object(node)


def parse(text: str) -> Document:
    """The file's data and positions; syntax errors and duplicate keys are refusals."""
    reader = _Reader()
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = {} if root is None else reader.read(root, ())
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = " ".join(p for p in (err.context, err.problem) if p) or str(err)
        raise ConfigRefused([ConfigProblem(line, column, (), f"YAML: {problem}.")]) from None
    except yaml.YAMLError as err:
        raise ConfigRefused([ConfigProblem(1, 1, (), f"YAML: {err}.")]) from None
    document = Document(data=data, marks=reader.marks, key_marks=reader.key_marks)
    if not isinstance(data, dict):
        raise ConfigRefused(
            [
                document.problem(
                    (), "The file must be a mapping of settings, groups, backends, pools."
                )
            ]
        )
    return document


# ----- the diff --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """What an import did (or, dry, would do) to one object."""

    status: str  # created | changed | unchanged | deleted | left
    section: str
    name: str
    details: tuple[str, ...] = ()

    def render(self) -> str:
        what = {"settings": "setting", "groups": "group", "backends": "backend", "pools": "pool"}
        line = f"{self.status:<10} {what[self.section]} {self.name}"
        return line + (": " + "; ".join(self.details) if self.details else "")


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _field_changes(section: str, old: Any, new: Any) -> tuple[str, ...]:
    if section == "settings":
        return () if _json(old) == _json(new) else (f"{_json(old)} -> {_json(new)}",)
    out = []
    for name in new:
        if _json(old.get(name)) == _json(new.get(name)):
            continue
        if name == "api_key":  # never a key, nor a fingerprint of one
            word = (
                "set" if old.get(name) is None else "cleared" if new[name] is None else "replaced"
            )
            out.append(f"api_key {word}")
        else:
            out.append(f"{name} {_json(old.get(name))} -> {_json(new[name])}")
    return tuple(out)


def diff(before: State, after: State, declared: dict[str, list[str]]) -> list[Change]:
    """Per object: created, changed or unchanged when the file names it; deleted or left else."""
    changes: list[Change] = []
    for section in SECTIONS:
        old, new = before.section(section), after.section(section)
        named = declared.get(section, [])
        for name in named:
            if name not in old:
                changes.append(Change("created", section, name))
            elif details := _field_changes(section, old[name], new[name]):
                changes.append(Change("changed", section, name, details))
            else:
                changes.append(Change("unchanged", section, name))
        for name in sorted(set(old) - set(named)):
            if name not in new:
                changes.append(Change("deleted", section, name))
            elif details := _field_changes(section, old[name], new[name]):
                changes.append(Change("changed", section, name, details))  # reset by --prune
            else:
                changes.append(Change("left", section, name))
    return changes


# ----- import --------------------------------------------------------------------------------


class _Unchanged(Exception):
    """Undoes a write that changed nothing (its savepoint, and the hooks it registered)."""


def _flatten(detail: Any, path: Path) -> Iterator[tuple[Path, str]]:
    """DRF's error detail as (path, message) pairs; non_field_errors belong to the entry."""
    if isinstance(detail, Mapping):
        for key, inner in detail.items():
            step: Path = () if key in ("non_field_errors", "detail") else (str(key),)
            yield from _flatten(inner, path + step)
    elif isinstance(detail, list):
        for inner in detail:
            yield from _flatten(inner, path)
    else:
        yield path, str(detail)


class _Import:
    """One pass over a parsed file inside the caller's transaction; refusals are collected."""

    def __init__(self, document: Document, environ: Mapping[str, str], prune: bool) -> None:
        self.doc = document
        self.environ = environ
        self.prune = prune
        self.errors: list[ConfigProblem] = []
        self.declared: dict[str, list[str]] = {}
        self.entries: dict[str, list[tuple[int, dict[str, Any]]]] = {}

    def refuse(self, path: Path, message: str, *, key: bool = False) -> None:
        self.errors.append(self.doc.problem(path, message, key=key))

    def refuse_error(self, path: Path, err: Exception) -> None:
        if isinstance(err, ValidationError):
            for where, message in _flatten(err.detail, path):
                self.refuse(where, message)
        elif isinstance(err, ApiError):
            self.refuse(path + ((err.param,) if err.param else ()), err.message)
        elif isinstance(err, SettingError):
            self.refuse(path, str(err))
        else:  # pragma: no cover - _write catches only the kinds above
            raise err

    # -- the file's shape ---------------------------------------------------------------------

    def check_shape(self) -> None:
        data = self.doc.data
        for key in data:
            if key != "version" and key not in SECTIONS:
                self.refuse(
                    (key,),
                    f"Unknown section {key!r}; there are version, {', '.join(SECTIONS)}.",
                    key=True,
                )
        if "version" in data and data["version"] != FORMAT_VERSION:
            self.refuse(("version",), f"This aiplane reads version {FORMAT_VERSION} files.")
        if "settings" in data:
            settings = data["settings"] = data["settings"] or {}  # `settings:` alone: none
            if not isinstance(settings, dict):
                self.refuse(("settings",), "settings must be a mapping of key: value.")
            else:
                self.declared["settings"] = [str(k) for k in settings]
        for section in ("groups", "backends", "pools"):
            if section in data:
                self.entries[section] = self.check_entries(section, data[section])
                self.declared[section] = [e["name"] for _, e in self.entries[section]]

    def check_entries(self, section: str, items: Any) -> list[tuple[int, dict[str, Any]]]:
        if items is None:
            items = []
        if not isinstance(items, list):
            self.refuse((section,), f"{section} must be a list of entries, each with a name.")
            return []
        seen: set[str] = set()
        good = []
        for i, entry in enumerate(items):
            path: Path = (section, i)
            if not isinstance(entry, dict):
                self.refuse(path, "An entry must be a mapping of field: value.")
                continue
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                self.refuse(
                    (*path, "name") if "name" in entry else path, "Every entry needs a name."
                )
                continue
            if name in seen:
                self.refuse((*path, "name"), f"{name!r} appears twice in {section}.")
                continue
            seen.add(name)
            unknown = [k for k in entry if k not in FIELDS[section]]
            for k in unknown:
                self.refuse(
                    (*path, k),
                    f"Unknown field {k!r}; there are {', '.join(FIELDS[section])}.",
                    key=True,
                )
            if section == "backends" and "base_url" not in entry:
                self.refuse(path, "Every backend needs a base_url.")
                continue
            if not unknown:
                good.append((i, entry))
        return good

    # -- writes -------------------------------------------------------------------------------

    def write(
        self, path: Path, section: str, name: str, action: Callable[[], Any], doing: str = ""
    ) -> bool:
        """Run one service call in a savepoint, undone when the object's entry did not change."""
        try:
            with transaction.atomic():
                before = _one(section, name)
                action()
                if _json(before) == _json(_one(section, name)):
                    raise _Unchanged
        except _Unchanged:
            pass
        except (ValidationError, ApiError, SettingError) as err:
            found = len(self.errors)
            self.refuse_error(path, err)
            if doing:
                self.errors[found:] = [
                    ConfigProblem(p.line, p.column, p.path, f"{doing}: {p.message}")
                    for p in self.errors[found:]
                ]
            return False
        return True

    def apply(self) -> None:
        self.check_shape()  # a misshapen entry is skipped; the others are still checked
        self.apply_settings()
        self.apply_groups()
        self.apply_backends()
        self.apply_pools()

    def apply_settings(self) -> None:
        given = self.doc.data.get("settings")
        if not isinstance(given, dict):
            return  # absent, or refused by check_shape
        wanted = dict(given)
        if self.prune:  # a declared state: every setting the file leaves out is its default
            for declared in CATALOG:
                wanted.setdefault(declared.key, declared.default)
        current = all_settings()
        changed = {}
        for key, value in wanted.items():
            path: Path = ("settings", key)
            spec = SPECS.get(key) if isinstance(key, str) else None
            if spec is None:
                self.refuse(path, f"Unknown setting {key}.", key=True)
                continue
            try:
                coerce(spec, value)  # the check settings_update makes, here one key at a time
            except SettingError as err:
                self.refuse(path, str(err))
                continue
            if _json(value) != _json(current[key]):
                changed[key] = value
        if changed and not self.errors:
            try:
                with transaction.atomic():
                    settings_update(values=changed, actor=IMPORT_ACTOR)
            except SettingError as err:  # pragma: no cover - each value was checked above
                self.refuse(("settings", err.key), str(err))

    def apply_groups(self) -> None:
        defaults = _defaults("groups")
        for i, entry in self.entries.get("groups", []):
            data = {**defaults, **entry}

            def put(data: dict[str, Any] = data) -> None:
                fields = admin_services.validated(GroupIn, data)
                if "allowance" in fields:
                    fields["allowance"] = as_json(fields["allowance"])
                account_services.group_put(
                    name=fields.pop("name"), fields=fields, actor=IMPORT_ACTOR
                )

            self.write(("groups", i), "groups", entry["name"], put)
        self.delete_undeclared(
            "groups",
            GatewayGroup.objects.all(),
            lambda group: account_services.group_delete(group=group, actor=IMPORT_ACTOR),
        )

    def delete_undeclared(
        self, section: str, objects: QuerySet[Any], delete: Callable[[Any], None]
    ) -> None:
        """With prune, delete each of `objects` (the section's) that the file does not name; a
        section the file leaves out is not managed."""
        if not self.prune or section not in self.entries:
            return
        what = section.removesuffix("s")
        for found in objects.exclude(name__in=set(self.declared[section])).order_by("name"):
            self.write(
                (section,),
                section,
                found.name,
                partial(delete, found),
                doing=f"deleting {what} {found.name} (not in the file)",
            )

    def backend_key(self, path: Path, name: str, entry: dict[str, Any]) -> tuple[bool, Any]:
        """The api_key to store: "" for none, None to keep the stored one; (False, _) refused."""
        value = entry.get("api_key")
        if value is None or value == "":
            return True, ""
        if value == MASK:
            if not Backend.objects.filter(name=name).exists():
                self.refuse(
                    path,
                    f'"{MASK}" keeps a stored key, and backend {name} has none '
                    "yet: give the key as ${VARIABLE}.",
                )
                return False, None
            return True, None
        if isinstance(value, str) and (ref := ENV_REFERENCE.fullmatch(value)):
            resolved = self.environ.get(ref.group(1), "")
            if not resolved:
                self.refuse(
                    path,
                    f"api_key refers to ${{{ref.group(1)}}}, which is not set in the environment.",
                )
                return False, None
            return True, resolved
        return True, value  # a literal key; the serializer checks it like any other

    def apply_backends(self) -> None:
        defaults = _defaults("backends")
        for i, entry in self.entries.get("backends", []):
            name = entry["name"]
            ok, key = self.backend_key(("backends", i, "api_key"), name, entry)
            if not ok:
                continue
            data = {**defaults, **entry, "api_key": key}

            def put(data: dict[str, Any] = data) -> None:
                admin_services.backend_put(
                    fields=admin_services.validated(BackendIn, data), actor=IMPORT_ACTOR
                )

            self.write(("backends", i), "backends", name, put)
        self.delete_undeclared(
            "backends",
            Backend.objects.all(),
            lambda backend: admin_services.backend_delete(name=backend.name, actor=IMPORT_ACTOR),
        )

    def apply_pools(self) -> None:
        defaults = _defaults("pools")
        known = set(GatewayGroup.objects.values_list("name", flat=True))
        written = []
        # Fallbacks last: a pool may fall back to one that comes later in the file, or is new.
        for i, entry in self.entries.get("pools", []):
            data = {k: v for k, v in {**defaults, **entry}.items() if k != "fallback"}
            if "everyone" not in entry:
                # A file is a declared state: a pool it names without groups and without a
                # word on `everyone` is for everyone, as a new pool through the API is.
                data["everyone"] = not data.get("allowed_groups")

            def put(data: dict[str, Any] = data) -> None:
                admin_services.pool_put(
                    fields=admin_services.validated(PoolIn, data, known_groups=known),
                    actor=IMPORT_ACTOR,
                )

            if self.write(("pools", i), "pools", entry["name"], put):
                written.append((i, entry))
        self.delete_undeclared(
            "pools",
            Pool.objects.all(),
            lambda pool: admin_services.pool_delete(name=pool.name, actor=IMPORT_ACTOR),
        )
        for i, entry in written:
            data = {"name": entry["name"], "fallback": entry.get("fallback")}

            def link(data: dict[str, Any] = data) -> None:
                admin_services.pool_put(
                    fields=admin_services.validated(PoolIn, data, known_groups=known),
                    actor=IMPORT_ACTOR,
                )

            self.write(("pools", i), "pools", entry["name"], link)


def import_text(
    text: str,
    *,
    dry_run: bool = False,
    prune: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[Change]:
    """Apply a file in one transaction and answer what changed; on any refusal, nothing does.

    Without `prune`, objects the file does not name are left as they are; with it, each section
    the file has is the whole truth (a missing section is not managed): the groups, backends and
    pools it does not name are deleted and the settings it does not name return to their defaults.
    A dry run makes every check and write the real one makes, then rolls them back.
    """
    document = parse(text)
    run = _Import(document, os.environ if environ is None else environ, prune)
    with transaction.atomic():
        before = current_state()
        run.apply()
        if run.errors:
            raise ConfigRefused(sorted(run.errors, key=lambda p: (p.line, p.column)))
        changes = diff(before, current_state(), run.declared)
        if dry_run:
            transaction.set_rollback(True)  # the after-commit hooks go with it
    return changes
