"""The Curator: lifecycle of agent-created skills, archive, ledger, blobs and rollback.

Import the concrete modules (``engine.curator.run`` holds ``Curator``); this package
file stays empty so ``engine.skills`` can use the ledger without an import cycle.
"""
