"""The scorecard: a report's rows read as one line per claim.

``lines`` (the lines and their status, ``build``), ``power`` (what a line could detect),
``robustness`` (the line over analyses and samples) and ``controls`` (the line's planted
controls, judged).
"""
