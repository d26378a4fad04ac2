"""The ``normtest`` command line: ``main`` (the parser, exit codes and signals) and one module per
subcommand (``audit``, ``catalogue``, ``compare``, ``demo``, ``gate``, ``models``, ``plan``,
``report``), with ``common`` (options several share) and ``streams`` (stdout and stderr that may
close under it)."""
