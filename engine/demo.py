"""A small, realistic demo home: a backend engineer's memory, past sessions and skills.

``seed_demo_home`` fills an empty home (or tops up a partly seeded one) with curated
memory entries, three past sessions (one in Chinese, so CJK search has something to
find), two skills, and two overlapping skills a past review made, which the Curator
has proposed to merge (one consolidation plan waiting in Approvals). It is idempotent:
anything already there is left alone, so ``workbench demo`` can reuse its home run after run.
"""

from __future__ import annotations

import time
from typing import Any

from .clock import FixedClock
from .scenarios import run_scenario
from .tools import BACKGROUND_REVIEW, ToolContext

__all__ = [
    "holds_other_data",
    "run_scenario",
    "seed_demo_home",
]  # run_scenario here too: the demo is seeding plus the demo scenario

USER_CTX = ToolContext(actor="user")
DAY = 86400.0

MEMORY = [
    "Ledger (the billing service) is Python 3.12 + FastAPI on Postgres 16 (db-billing-01); migrations are Alembic "
    "files in ledger/migrations.",
    "Staging deploys run `make deploy-staging`; production needs a tagged release plus sign-off in #release.",
    "CI is GitHub Actions; tests/test_invoices.py::test_rounding is quarantined as flaky, do not re-enable it "
    "without the Decimal fix.",
    "Local dev: `docker compose up db redis`, then scripts/seed_dev.py (about 2 minutes).",
    "Team convention: conventional commits (feat:, fix:, chore:), squash-merge, PR titles under 72 characters.",
    "On-call pages only for /charge p95 latency above 800 ms for 10 minutes; everything else is a ticket.",
    "Money is always Decimal, never float; exports round with ROUND_HALF_UP to 2 places.",
    "The analytics replica (db-analytics-02) lags up to 5 minutes; never read balances from it.",
]

USER = [
    "User is a backend engineer on the payments team (Berlin, CET).",
    "User prefers concise answers: code first, explanation after.",
    "User works in Neovim with the fish shell and runs tests with pytest -x -q.",
]

# (session id as on 2026-11-30, title, days ago, [(role, text)]): seeded on another day, the id's date moves
SESSIONS: list[tuple[str, str, int, list[tuple[str, str]]]] = [
    (
        "20261109_091500_de0001",
        "Postgres 16 upgrade plan",
        21,
        [
            ("user", "We need to move db-billing-01 from Postgres 14 to 16. What's the safest path?"),
            (
                "assistant",
                "Use logical replication: stand up a 16 replica, replicate from 14, verify row counts and "
                "sequences, then switch the connection string during a short write freeze. Keep 14 as a "
                "fallback for a week.",
            ),
            ("user", "Sequences are the part I always forget."),
            (
                "assistant",
                "Logical replication does not copy sequence values. Run a script that sets each sequence on "
                "16 to max(id)+1000 right before the switch.",
            ),
        ],
    ),
    (
        "20261116_143000_de0002",
        "发票导出金额问题",
        14,
        [
            ("user", "发票导出的时候金额四舍五入不对，应该怎么排查？"),
            (
                "assistant",
                "先检查导出脚本是否用了 float。金额应该全程使用 Decimal，并在最后用 quantize(Decimal('0.01'), "
                "ROUND_HALF_UP) 处理。",
            ),
            ("user", "确实用了 float，改成 Decimal 之后导出正常了。"),
            ("assistant", "很好。建议给导出加一个金额合计的对账测试，防止以后再出现。"),
        ],
    ),
    (
        "20261123_101000_de0003",
        "Flaky rounding test",
        7,
        [
            ("user", "test_rounding failed again on CI but passes locally."),
            (
                "assistant",
                "It depends on float rounding of 2.675. Quarantine it with a skip marker that links the "
                "Decimal fix, and track the fix separately.",
            ),
        ],
    ),
]

SKILLS: list[dict[str, Any]] = [
    {
        "name": "deploy-staging",
        "category": "devops",
        "content": (
            "---\nname: deploy-staging\ndescription: Deploy the ledger service to staging and verify it\n---\n"
            "# Deploy ledger to staging\n\n## Steps\n1. Make sure main is green on GitHub Actions.\n"
            "2. Run `make deploy-staging` from a clean checkout.\n3. Watch the rollout with `kubectl -n ledger rollout "
            "status deploy/ledger`.\n4. Smoke test: `curl -fsS https://staging.ledger.internal/healthz`.\n"
        ),
    },
    {
        "name": "write-release-notes",
        "content": (
            "---\nname: write-release-notes\ndescription: Write release notes for a ledger release\n---\n"
            "# Release notes\n\n## Steps\n1. List merged PRs since the last tag: `git log --oneline v2.7.0..HEAD`.\n"
            "2. Group them by conventional-commit type (feat, fix, chore).\n"
            "3. Lead with anything that changes invoices or money amounts.\n"
        ),
    },
]


# Two skills an earlier background review made for one task: the Curator's consolidation plan merges them.
REVIEW_SKILLS: list[dict[str, Any]] = [
    {
        "name": "rerender-invoice-pdf",
        "category": "billing",
        "content": (
            "---\nname: rerender-invoice-pdf\ndescription: Re-render one invoice PDF after a template fix\n---\n"
            "# Re-render an invoice PDF\n\n## Steps\n1. Find the invoice number in the admin console.\n"
            "2. Delete its cached PDF in S3 (bucket ledger-invoices, key = invoice number).\n"
            "3. Call `POST /internal/invoices/{number}/render` on docs-renderer.\n"
        ),
    },
    {
        "name": "rerender-invoice-pdfs",
        "category": "billing",
        "content": (
            "---\nname: rerender-invoice-pdfs\ndescription: Re-render many invoice PDFs after a template fix\n---\n"
            "# Re-render invoice PDFs in bulk\n\n## Steps\n1. Export the affected invoice numbers to a file.\n"
            "2. Delete their cached PDFs in S3 (bucket ledger-invoices).\n"
            "3. Run `scripts/rerender.py numbers.txt` (50 per minute, docs-renderer rate limit).\n"
        ),
        "files": {
            "scripts/rerender.py": (
                "import sys\n\nfor number in open(sys.argv[1]):\n    print('render', number.strip())\n"
            )
        },
    },
]
REVIEW_CTX = ToolContext(actor="review", origin=BACKGROUND_REVIEW)


def _seed_consolidation(home, existing: set[str]) -> int:
    """The review-made skills, then one consolidation plan waiting in Approvals (1 when staged now)."""
    if any(skill["name"] in existing for skill in REVIEW_SKILLS):
        return 0
    for skill in REVIEW_SKILLS:
        home.skills.manage(
            {"action": "create", "name": skill["name"], "category": skill["category"], "content": skill["content"]},
            REVIEW_CTX,
        )
        for path, text in skill.get("files", {}).items():
            home.skills.manage(
                {"action": "write_file", "name": skill["name"], "file_path": path, "file_content": text}, REVIEW_CTX
            )
    return int(bool(home.curator.consolidation.propose().get("staged")))


def holds_other_data(home) -> bool:
    """True for a home with memory, sessions or skills that the demo did not seed (a real install,
    even a new one that holds only the skills Hermes installs)."""
    entries = set(home.memory.entries("memory")) | set(home.memory.entries("user"))
    if entries and not entries & (set(MEMORY) | set(USER)):
        return True
    scanner = home.skills.scanner  # names only: no SKILL.md parsed for usage or provenance
    skills = {found.name for found in (*scanner.active(), *scanner.archived())}
    if skills and not skills & {skill["name"] for skill in SKILLS}:
        return True
    archive = home.archive
    return archive.session_count() > 0 and not any(_seeded(archive, sid) for sid, *_ in SESSIONS)


def _seeded(archive, example_id: str) -> bool:
    """Whether the demo session ``example_id`` stands for is in the archive, seeded on whatever day (``_dated``)."""
    found = archive.conn().execute("SELECT 1 FROM sessions WHERE substr(id, -7) = ?", (example_id[-7:],))
    return found.fetchone() is not None


def _dated(example_id: str, day: float) -> tuple[float, str]:
    """(start, id) of a demo session ``day``'s date at its example id's time of day, the id spelled from
    the start as Hermes spells it (YYYYMMDD_HHMMSS_suffix): an id and a start that disagree mislead."""
    clock = example_id[9:15]
    date = time.localtime(day)[:3]  # (local, as Hermes spells its ids)
    started = time.mktime((*date, int(clock[:2]), int(clock[2:4]), int(clock[4:]), 0, 0, -1))
    return started, time.strftime("%Y%m%d_%H%M%S", time.localtime(started)) + example_id[15:]


def seed_demo_home(home) -> dict[str, int]:
    """Add whatever of the demo content is missing; returns how many items were added."""
    added = {"memory": 0, "sessions": 0, "skills": 0}
    for target, entries in (("memory", MEMORY), ("user", USER)):
        present = home.memory.entries(target)
        for entry in entries:
            if entry not in present and home.memory.add(target, entry, USER_CTX).get("success"):
                added["memory"] += 1
    archive, real_clock = home.archive, home.archive.clock
    now = real_clock.now()
    try:
        for example_id, title, days_ago, turns in SESSIONS:
            started, session_id = _dated(example_id, now - days_ago * DAY)
            if _seeded(archive, example_id):
                continue  # (seeded on an earlier day, under that day's id)
            archive.clock = FixedClock(started)  # the archive stamps rows with its clock: date them in the past
            archive.create_session(session_id, source="cli", model="offline", title=title, actor="user")
            archive.append_messages(
                session_id,
                [
                    {"role": role, "content": text, "timestamp": started + 60 * n}
                    for n, (role, text) in enumerate(turns)
                ],
            )
            archive.clock = FixedClock(started + 60 * len(turns))
            archive.end_session(session_id, "user_exit", actor="user")
            added["sessions"] += 1
    finally:
        archive.clock = real_clock
    existing = {info.name for info in home.skills.list(include_archived=True)}
    for skill in SKILLS:
        if skill["name"] not in existing:
            result = home.skills.manage({"action": "create", **skill}, USER_CTX)
            added["skills"] += bool(result.get("success"))
    added["consolidation"] = _seed_consolidation(home, existing)
    return added
