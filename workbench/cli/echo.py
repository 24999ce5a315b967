"""What a CLI error repeats of the user's own words: long ones cut, commands retyped whole.

An error that quotes a 3,000-character argument back, or suggests a command that drops an
option the user gave (``--target user``, ``--home``), buries or undoes its advice.
"""

from __future__ import annotations

from contextvars import ContextVar

from engine.textsafety import inline, shell_word

ECHO_LIMIT = 200  # characters of one of the user's words an error repeats

typed: ContextVar[tuple[str, ...]] = ContextVar("typed", default=())  # the command line, as main got it


def echoed(words: str) -> str:
    """Words an error repeats: cut, with their length, when long."""
    if len(words) <= ECHO_LIMIT:
        return words
    return f"{words[: ECHO_LIMIT - 40]}… ({len(words):,} characters in all)"


def cut_echoes(message: str) -> str:
    """``message`` with each long word of the command line it repeats cut (``echoed``): as typed, or as a
    message quotes it (``inline``, ``quoted``: a word holding an escape is repeated with its symbols)."""
    for word in sorted({w for w in typed.get() if len(w) > ECHO_LIMIT}, key=len, reverse=True):
        message = message.replace(word, echoed(word)).replace(inline(word), inline(echoed(word)))
    return message


def retyped(program: str, value: str, extras: list[str], words: list[str], takes_value: set[str]) -> str:
    """The command line as typed, with a positional ``value`` and the ``extras`` argparse left
    over replaced by ``words``, every option kept; quoted for a shell (``shell_word``: a word holding
    an invisible or control character, which the error shows as a symbol such as ``<U+202E>`` that
    copied would be typed as text, is written as ``$'...'`` with that character escaped, so the
    command copied runs as shown). ``takes_value``: the options whose next word is their argument
    (never the positional)."""
    tokens = list(typed.get())
    # the value is the last word equal to it that the left-over words follow (`memory add add milk`:
    # not the subcommand's own "add"), and not an option's argument
    at = next(
        (
            i
            for i in reversed(range(len(tokens)))
            if tokens[i] == value and (i == 0 or tokens[i - 1] not in takes_value) and _follow(tokens[i + 1 :], extras)
        ),
        None,
    )
    if at is None:
        return ""
    left, rest = list(extras), []
    for token in tokens[at + 1 :]:
        if left and token == left[0]:
            left.pop(0)
        else:
            rest.append(token)
    return " ".join([program, *map(shell_word, [*tokens[:at], *words, *rest])])


def _follow(tokens: list[str], words: list[str]) -> bool:
    """Whether ``words`` come in ``tokens`` in order (others may lie between)."""
    rest = iter(tokens)
    return all(word in rest for word in words)
