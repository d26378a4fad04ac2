"""The geometry stage: composing token vectors into one vector (:mod:`.compose`) and the
transforms fitted on a word sample before norms are read (:mod:`.transforms`)."""
