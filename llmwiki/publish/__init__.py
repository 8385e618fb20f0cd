"""The last step of the write side: page texts -> files, store, git commit and snapshot, as one unit.

``wiki`` is the one write path (``publish``, and ingest + generation as one unit a rerun finishes);
``journal`` makes each write crash-safe (and ``recover`` finishes one a crash cut short); ``snapshots``
copies the store at each commit and restores it; ``history`` is the workspace's git repository.
"""
