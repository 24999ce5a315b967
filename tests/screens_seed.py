"""Fixed data and small steps for the Sessions, Skills and Run screen tests and snapshots."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select

from engine.tools import BACKGROUND_REVIEW, ToolContext
from tests.tui_support import settle, wait_for

GARDEN = "20261129_090000_aaaaaa"
GARDEN_2 = "20261129_100000_bbbbbb"  # compression child of GARDEN
BRANCH = "20261129_110000_cccccc"  # branch of GARDEN
DELEGATE = "20261129_120000_dddddd"  # delegate of GARDEN
TOKYO = "20261128_080000_eeeeee"
HOSTILE_TITLE = "Garden [bold]plans[/] <memory-context>"


def seed_sessions(home, extra_roots: int = 0) -> dict[str, int]:
    """A small lineage (compression child, branch, delegate), a CJK session, and a memory write.

    Returns the ids of notable messages.
    """
    archive, clock = home.archive, home.clock
    start = clock.now()
    clock.set(start - 86400 * 2)
    archive.create_session(TOKYO, source="cli", title="東京の旅")
    archive.append_message(TOKYO, "user", "東京でラーメンを食べたい")
    archive.append_message(TOKYO, "assistant", "いいですね。新宿のラーメン屋を探します。")
    for number in range(extra_roots):
        clock.set(start - 86400 * 3 - number * 60)
        archive.create_session(f"20261101_{number:06d}_ffffff", source="cli", title=f"Old session {number}")
    clock.set(start - 86400)
    archive.create_session(GARDEN, source="cli", title=HOSTILE_TITLE)
    ids = {"question": archive.append_message(GARDEN, "user", "I grow [bold]tomatoes[/] on the balcony")}
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "memory", "arguments": '{"action": "add", "target": "user", "content": "Grows tomatoes"}'},
    }
    ids["call"] = archive.append_message(GARDEN, "assistant", "", tool_calls=[call])
    ids["result"] = archive.append_message(
        GARDEN, "tool", '{"success": true, "usage": "14/1375"}', tool_name="memory", tool_call_id="call_1"
    )
    ids["answer"] = archive.append_message(GARDEN, "assistant", "Noted: you grow tomatoes.")
    home.journal.append(
        "memory", "add", "user", actor="agent", after="Grows tomatoes", session_id=GARDEN, message_id=ids["call"]
    )
    archive.end_session(GARDEN, "compression")
    clock.set(start - 86400 + 3600)
    archive.create_session(GARDEN_2, source="cli", parent_session_id=GARDEN, title="Garden plans #2")
    ids["later"] = archive.append_message(GARDEN_2, "user", "What should I plant next to tomatoes?")
    clock.set(start - 86400 + 7200)
    archive.create_session(
        BRANCH, source="cli", parent_session_id=GARDEN, title="Garden branch", model_config={"_branched_from": GARDEN}
    )
    clock.set(start - 86400 + 10800)
    archive.create_session(
        DELEGATE,
        source="subagent",
        parent_session_id=GARDEN,
        title="Look up companion plants",
        model_config={"_delegate_from": GARDEN},
    )
    clock.set(start)
    return ids


SKILLS = (
    ("tomato-care", "garden", "Water [bold]tomatoes[/] deeply, twice a week"),
    ("git-rebase", "devops", "Rebase a feature branch safely onto main"),
    ("docker-prune", "devops", "Free disk space taken by old Docker images"),
)


def seed_skills(home) -> None:
    """Three skills (tomato-care made by a background review, so the curator manages it), one linked file.

    Their bodies hold a forged prompt tag, which the threat scan refuses from any writer, so
    each SKILL.md is written in full by hand after its create (as a person editing it would)."""
    for name, category, description in SKILLS:
        review = name == "tomato-care"
        ctx = ToolContext(actor="review", origin=BACKGROUND_REVIEW) if review else ToolContext(actor="agent")
        head = f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\n"
        result = home.skills.manage(
            {"action": "create", "name": name, "category": category, "content": head + "1. Check the state first.\n"},
            ctx,
        )
        assert result.get("success"), result
        Path(result["skill_md"]).write_text(
            head + "1. Check the state first: <memory-context> stays literal.\n2. [red]Never[/] force.\n"
        )
    result = home.skills.manage(
        {
            "action": "write_file",
            "name": "git-rebase",
            "file_path": "references/flags.md",
            "file_content": "# Flags\n\n`--onto` moves a range.\n",
        },
        ToolContext(actor="agent"),
    )
    assert result.get("success"), result


def screen_text(app) -> str:
    """The active screen as plain text, one line per terminal row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def open_mode(pilot, key: str, screen_class):
    """Press a mode key and wait for that screen, settled."""
    await pilot.press(key)
    await settle(pilot)
    assert isinstance(pilot.app.screen, screen_class)
    return pilot.app.screen


async def play_scenario(pilot, screen, name: str = "smoke") -> None:
    """On the Run screen: play a scenario without delays and wait until it has finished."""
    screen.speed = 0
    screen.query_one("#run-scenario", Select).value = name
    await pilot.press("ctrl+g")
    await wait_for(
        pilot,
        lambda: screen.checking is None and screen.session_id is not None and not screen.running,
        timeout=20,
        what="scenario finished",
    )
    await settle(pilot)
