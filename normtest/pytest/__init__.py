"""normtest's pytest plugin (the ``normtest`` ``pytest11`` entry point, :mod:`.plugin`): the
claim catalogue as test items (:mod:`.items`), the session's state and fixtures
(:mod:`.state`)."""
