"""``python manage.py skills check|ingest``: the skill engine on the command line.

``check`` never touches the database (for CI); ``ingest`` stores what ``check`` reads.
See the README section "skills check" for the JSON contract and the exit codes.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from governance.engine.check import (
    CHECK_KINDS,
    DEFAULT_CHECK_AGENT,
    EXIT_CANNOT_RUN,
    EXIT_FINDINGS,
    EXIT_OK,
    CheckUsageError,
    parse_targets,
    run_check,
)
from governance.engine.skillfile import printable_text


class Command(BaseCommand):
    help = "Check skills on disk (no database) or ingest them into the portal."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        check = sub.add_parser(
            "check",
            help="validate, lint, resolve and permission-check skills (exit 0 ok, 1 error findings, 2 could not run)",
        )
        check.add_argument("paths", nargs="+", metavar="[KIND=]PATH")
        check.add_argument("--source", default="project", choices=CHECK_KINDS, help="default source kind")
        check.add_argument("--agent", default=DEFAULT_CHECK_AGENT, help="claude-code, codex, opencode, ...")
        check.add_argument("--managed-settings", metavar="FILE", help="a Claude Code managed-settings.json")
        check.add_argument("--strict", action="store_true", help="the reference checker's rules")
        check.add_argument("--format", default="text", choices=["text", "json"])
        ingest = sub.add_parser("ingest", help="register sources and store their skills")
        ingest.add_argument("paths", nargs="+", metavar="[KIND=]PATH_OR_URL")
        ingest.add_argument("--source", default="project", choices=CHECK_KINDS, help="default source kind")
        ingest.add_argument("--ref", default="", help="git branch, tag or commit (git URLs)")
        ingest.add_argument("--project", default="", help="project slug the sources belong to")
        ingest.add_argument("--format", default="text", choices=["text", "json"])

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        code = self._check(options) if action == "check" else self._ingest(options)
        sys.stdout.flush()
        if code:
            sys.exit(code)

    def _fail(self, message: str) -> int:
        self.stderr.write(f"skills: {message}")
        return EXIT_CANNOT_RUN

    def _check(self, options: dict[str, Any]) -> int:
        try:
            targets = parse_targets(options["paths"], options["source"])
            report = run_check(
                targets,
                agent=options["agent"],
                managed_settings=options["managed_settings"],
                strict=options["strict"],
            )
        except CheckUsageError as exc:
            return self._fail(str(exc))
        self.stdout.write(report.to_json() if options["format"] == "json" else report.to_text())
        return report.exit_code

    def _ingest(self, options: dict[str, Any]) -> int:
        from governance.skills.models import IngestStatus
        from governance.skills.services import IngestRefused, source_ingest_now, source_register
        from portal.accounts.models import Project

        try:
            targets = parse_targets(options["paths"], options["source"])
        except CheckUsageError as exc:
            return self._fail(str(exc))
        project = None
        if options["project"]:
            project = Project.objects.filter(slug=options["project"]).first()
            if project is None:
                return self._fail(f"no project with slug {options['project']!r}")
        reports, code = [], EXIT_OK
        for target in targets:
            try:
                # An existing relative folder is a path here, even when spelled like ``owner/repo``.
                location = os.path.abspath(target.path) if os.path.exists(target.path) else target.path
                source = source_register(
                    kind=target.kind.value, location=location, ref=options["ref"], project=project
                )
            except IngestRefused as exc:
                return self._fail(f"{target.path}: {exc.message}")
            run = source_ingest_now(source=source, requested_by=None)
            reports.append(
                {
                    "source": source.identity,
                    "kind": source.kind,
                    "run": run.pk,
                    "status": run.status,
                    "commit": run.commit,
                    "counts": run.counts,
                    "findings": run.findings,
                    "error": run.error,
                    "duration_ms": run.duration_ms,
                }
            )
            if run.status != IngestStatus.SUCCEEDED:
                code = EXIT_CANNOT_RUN
            elif code == EXIT_OK and any(f.get("severity") == "error" for f in run.findings):
                code = EXIT_FINDINGS
        if options["format"] == "json":
            self.stdout.write(json.dumps({"runs": reports}, indent=2, default=str))
        else:
            for r in reports:
                counts = ", ".join(f"{k} {v}" for k, v in r["counts"].items())
                where = printable_text(f"{r['kind']}:{r['source']}")
                self.stdout.write(f"{r['status']:<9} {where} run {r['run']} {counts}")
                if r["error"]:
                    self.stdout.write(f"    {printable_text(r['error'])}")
        return code
