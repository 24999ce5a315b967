"""Procedural memory: the skill library under ``<home>/skills`` (Hermes's layout).

Import the concrete modules (``engine.skills.library``, ``engine.skills.manage``);
this package file stays empty so the Curator and the library can import each other's
parts without cycles.
"""
