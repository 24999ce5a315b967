"""``workbench providers list|facts``: the memory providers installed and the local provider's facts."""

from __future__ import annotations

from engine.home import Home
from engine.providers import configured_names, configured_note, provider_listing
from engine.providers.facts import list_facts
from engine.textsafety import flat_line

from . import Output, add_command
from .fit import said


def register(subparsers, common) -> None:
    providers = add_command(subparsers, "providers", common)
    sub = providers.add_subparsers(dest="providers_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", parents=[common], help="installed providers and which one is active")
    listing.set_defaults(handler=list_providers, read_only=True)
    facts = sub.add_parser("facts", parents=[common], help="the facts the local provider keeps, with their source")
    facts.set_defaults(handler=show_facts, creates_home=False)


def list_providers(home: Home, args) -> Output:
    rows = provider_listing(home)
    text = "\n".join(f"{'*' if r['active'] else ' '} {r['name']:<16} {r['source']}" for r in rows)
    names, note = configured_names(home), configured_note(home)
    if note:  # (sentences: wrapped to the terminal, as every note is)
        text += "\n" + said(note.text)
    elif not names:
        text += "\n" + said("(none active: set memory.provider in config.yaml)")
    return Output(
        {"providers": rows, "configured": names[0] if names else None, "note": note.text if note else None}, text=text
    )


def show_facts(home: Home, args) -> Output:
    facts = list_facts(home)
    lines = []
    for fact in facts:
        source = fact["source_message"]
        where = (
            f"#{source['id']} {flat_line(source['role'])}: {flat_line(source['text'], 60)}"
            if source
            else fact["origin"]
        )
        lines.append(f"{fact['id']:>4}  {fact['content']}\n      from {where}")
    return Output({"facts": facts, "count": len(facts)}, text="\n".join(lines) or "No facts kept yet.")
