"""Renderings of the one report object: Markdown, a self-contained HTML page, JSON, and the
terminal view.

``formats`` (the formats and writing a report's files), ``locking`` (a folder's files written as
one set under its writer lock), ``thresholds`` (a stored report re-judged under other
thresholds), ``markdown``, ``html`` and ``html_figures``, ``terminal`` (the answer printed in the
terminal), ``comparison`` and ``gate`` (two reports; the gate's decision), ``plots``, ``canvas``,
``fits``, ``layers`` and ``specification`` (the figures), ``labels`` (words shared by all).

Every renderer reads :class:`normtest.audit.report.Report` and nothing else, so a stored audit
re-renders (and re-judges under other thresholds) without the model. Plots need matplotlib
(the ``models`` or ``report`` extra); without it the HTML page says so and shows the rest. Every
string that comes from data or the user (words, model names, paths, reasons, claim ids) is
escaped: HTML-escaped in the page, Markdown-escaped in the summary. What each part of the page
shows: ``docs/reports.md``.
"""
