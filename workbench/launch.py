"""The ``workbench`` command's entry point, kept free of imports: ctrl+c while the command line's
modules load (most of a short command's first half second) must end the command quietly, as it
does once the command runs, never with a traceback."""

import os
import sys


def run() -> None:
    try:
        from workbench.cli import main

        code = main()
    except KeyboardInterrupt:
        code = 130  # (what a shell reports for ctrl+c; the terminal already shows ^C)
    except BrokenPipeError:  # stdout's reader went away (`| head`): no one is left to tell
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (the exit's flush would raise again)
        code = 141  # (what a shell reports for a program whose reader left: 128 + SIGPIPE)
    sys.exit(code)
