"""Memory Workbench: the Textual app, its screens, the CLI and the file-watch bridge."""
