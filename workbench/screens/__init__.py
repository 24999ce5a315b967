"""The workbench's screens: one module per mode, plus shared dialogs and the help screen."""
