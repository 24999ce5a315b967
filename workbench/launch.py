"""The ``workbench`` command's entry point, kept free of imports: ctrl+c while the command line's
modules load (most of a short command's first half second) must end the command quietly, as it
does once the command runs, never with a traceback."""

import sys


def run() -> None:
    try:
        from workbench.cli import main

        code = main()
    except KeyboardInterrupt:
        code = 130  # (what a shell reports for ctrl+c; the terminal already shows ^C)
    sys.exit(code)
