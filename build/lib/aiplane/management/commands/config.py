"""`manage.py config export [FILE]` and `manage.py config import FILE [--dry-run] [--prune]`."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from aiplane.config_file import ConfigRefused, export_text, import_text

STATUSES = ("created", "changed", "deleted", "unchanged", "left")


class Command(BaseCommand):
    help = (
        "Configuration as code: export settings, groups, backends and pools as YAML, or apply "
        "such a file in one transaction (see the README, Configuration as code)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        out = actions.add_parser("export", help="write the configuration as YAML")
        out.add_argument("file", nargs="?", default="-", help="where to write (- or none: stdout)")
        out.add_argument(
            "--keys",
            choices=("mask", "env"),
            default="mask",
            help='backend API keys as "********" (keeps the stored key on import) or as '
            "${NAME_KEY} environment variable references",
        )
        into = actions.add_parser("import", help="apply a YAML file in one transaction")
        into.add_argument("file", help="the YAML file (- reads stdin)")
        into.add_argument(
            "--dry-run", action="store_true", help="check and print the diff; change nothing"
        )
        into.add_argument(
            "--prune",
            action="store_true",
            help="delete the groups, backends and pools of each section the file does not "
            "name, and reset the settings it does not name to their defaults",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "export":
            self.export(options["file"], options["keys"])
        else:
            self.import_(options["file"], dry_run=options["dry_run"], prune=options["prune"])

    def export(self, file: str, keys: str) -> None:
        exported = export_text(keys=keys)
        if file == "-":
            self.stdout.write(exported.text, ending="")
        else:
            Path(file).write_text(exported.text, encoding="utf-8")
            self.stderr.write(f"wrote {file}")
        for variable, backend in exported.variables.items():
            self.stderr.write(f"import needs {variable}: the API key of backend {backend}")

    def import_(self, file: str, *, dry_run: bool, prune: bool) -> None:
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise CommandError(f"cannot read {file}: {err}") from None
        source = "<stdin>" if file == "-" else file
        try:
            changes = import_text(text, dry_run=dry_run, prune=prune)
        except ConfigRefused as refused:
            for problem in refused.errors:
                self.stderr.write(problem.render(source))
            n = len(refused.errors)
            raise CommandError(
                f"{source}: {n} error{'s' if n != 1 else ''}; nothing was changed."
            ) from None
        for change in changes:
            self.stdout.write(change.render())
        counts = Counter(change.status for change in changes)
        summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
        if dry_run:
            self.stdout.write(f"Dry run, nothing was changed: {summary}.")
        else:
            self.stdout.write(
                f"Applied: {summary}. A gateway running in another process takes it within "
                "10 seconds."
            )
