"""The files here are MPI worker scripts run by tests/distributed/test_distributed.py through the
launcher; pytest must not import them (they call init_process_group at import)."""

collect_ignore_glob = ["*.py"]
