"""Markdown and HTML renderings of a report, escaping, re-judging, and the ``report`` command."""

from __future__ import annotations

import base64
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from normtest.audit.report import Report
from normtest.cli.common import EXIT_OK, EXIT_USAGE
from normtest.cli.main import main
from normtest.errors import NormtestError
from normtest.render import fits, plots
from normtest.render.formats import FORMATS, render, write_renderings
from normtest.render.markdown import md_code, md_text
from normtest.render.thresholds import parse_threshold, with_thresholds
from normtest.stats.correlation import correlation
from normtest.stats.growth import linear_growth
from normtest.verdict.result import Result, Verdict, variant_key

SCRIPT = "<script>alert(1)</script>"
DATA_URI = re.compile(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')


@pytest.fixture(scope="module")
def glove_report() -> Report:
    """A real audit: GloVe-50d on word.norm_ic, 600 words (the fewest at which its positive
    control has power 0.8 at the margin), 200 resamples (a few seconds)."""
    import normtest
    from normtest.audit.run import AuditSettings, run_audit

    return run_audit(normtest.load("glove-6b-50d"), claim_ids=["word.norm_ic"],
                     settings=AuditSettings(words=600, resamples=200))


@pytest.fixture(scope="module")
def demo_report() -> Report:
    from normtest.audit.demo import run_demo

    return run_demo(seed=0, n_words=300)


def svgs(page: str) -> list[str]:
    """The SVG documents embedded in a page."""
    return [base64.b64decode(m).decode("utf-8") for m in DATA_URI.findall(page)]


def crafted_report() -> Report:
    """A report whose every string slot holds markup: words, model, paths, variants, reasons."""
    rng = np.random.default_rng(0)
    ic = rng.uniform(4, 16, 120)
    norms = 2 * ic + rng.normal(0, 1, 120)
    norms[7] += 60  # the script word lies far above the line: it is listed under the plot
    base = correlation(ic, norms, n_resamples=200, seed=0)
    variant = {"transform": "raw<i>$x$</i>"}
    word = replace(base, claim="word.norm_ic", variant=variant, expected=Verdict.FAIL,
                   reason=f"because {SCRIPT} & <b>so</b>", role="confirmatory",
                   hypothesis=f"line{SCRIPT}")
    lengths = np.tile(np.array([16.0, 32.0, 48.0, 64.0]), 10)
    docs = np.repeat(np.arange(10), 4)
    values = 10 * (1 - np.exp(-lengths / 12)) + rng.normal(0, 0.2, lengths.size)
    growth = replace(linear_growth(lengths, values, docs, n_resamples=200, seed=0),
                     claim="cer.linear", variant={"composition": "mean<script>"})
    skipped = Result(Verdict.SKIPPED, f"lacks {SCRIPT}", claim="my.<claim>|id")
    words = [f"w{i}" for i in range(120)]
    words[7] = SCRIPT
    words[8] = "pipe|back`tick"
    data = {
        "words": {"words": words, "information": ic.tolist(), "token_counts": [1] * 120,
                  "squared_norms": {"transform=raw<i>$x$</i>": norms.tolist()}},
        "prefixes": {"documents": [f"doc<{i}>" for i in range(10)],
                     "curves": {"composition=mean<script>": {
                         "lengths": lengths.astype(int).tolist(), "squared_norms": values.tolist(),
                         "document": docs.tolist()}}},
    }
    return Report(results=[word, growth, skipped],
                  model={"name": "<b>evil</b> model", "revision": "rev\"'><script>",
                         "family": "encoder"},
                  provenance={"corpus": ["/tmp/<img src=x onerror=alert(1)>.txt"], "seed": 0},
                  data=data)


# -- Markdown ----------------------------------------------------------------------------------
#: Tags the Markdown rendering writes itself (the folds); any other tag would come from data.
OWN_TAGS = re.compile(r"</?(details|summary)>")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def prose(text: str) -> str:
    """The Markdown with code spans and its own fold tags taken out: what a reader sees as text."""
    return OWN_TAGS.sub("", CODE_SPAN.sub("", text))


def commonmark(text: str) -> str:
    """The Markdown rendered as GitHub would (CommonMark with GFM tables and strikethrough)."""
    markdown_it = pytest.importorskip("markdown_it")
    return str(markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
               .render(text))


@pytest.mark.slow
def test_markdown_reads_in_the_page_order(glove_report: Report) -> None:
    text = render(glove_report, "md")
    assert text.startswith("## normtest audit of `glove-6b-50d` (static, 50 dimensions)")
    order = [text.index(mark) for mark in (
        "**Does the model behave as the paper says?**", "| **replicated** |", "### Claims",
        "| claim | statement |", "### Confirmatory rows", "<details><summary>The ",
        "<details><summary>Provenance</summary>")]
    assert order == sorted(order)
    opened, _, folded = text.partition("<details>")
    # still fits a PR comment: the scorecard's table, the next command and one line of reason
    # per line of the paper, then the claims
    assert len(opened.splitlines()) < 55 and len(opened) < 5000
    for r in glove_report.results:  # confirmatory rows open, every other row folded
        assert f"| `{r.id}` |" in (opened if r.confirmatory else folded), r.id
    assert "exploratory rows" in folded.splitlines()[0]
    # raw GloVe norms fall with IC: an exploratory FAIL, listed with its reason in the fold
    assert "- `word.norm_ic[transform=raw]` (FAIL): spearman_rho upper" in folded
    assert "- resamples: 200" in folded


def test_markdown_of_a_real_report_reads_cleanly_raw_and_rendered(glove_report: Report) -> None:
    text = render(glove_report, "md")
    assert not re.search(r"[A-Za-z0-9]\\_[A-Za-z0-9]", text)  # late_early_ratio, as written
    assert not re.search(r"&(lt|gt|amp);", text)  # a literal < reads as <
    assert "spearman_rho upper 95% bound" in text and "< threshold 0.3" in text
    assert "\\[" not in text and "\\]" not in text  # brackets that cannot form a link
    page = commonmark(text)
    assert "<em>" not in page and "<a " not in page and "\\" not in page
    assert set(re.findall(r"<(\w+)", page)) <= {
        "h2", "h3", "p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td", "ul",
        "li", "details", "summary"}


def test_markdown_escapes_only_what_would_be_read_as_markup() -> None:
    assert md_text("a|b\nc") == r"a\|b c"
    assert md_text("late_early_ratio p_pass=1") == "late_early_ratio p_pass=1"
    assert md_text("`x` *y* _z_ ~w~ $m$") == r"\`x\` \*y\* \_z_ \~w\~ \$m\$"
    assert md_text("__init__") == r"\_\_init_\_"
    assert md_text("bound 0.2 < threshold 0.3 & c > d") == "bound 0.2 < threshold 0.3 & c > d"
    assert md_text("<b>x</b> <!-- c --> <?p?>") == r"\<b>x\</b> \<!-- c --> \<?p?>"
    assert md_text("&lt; &#60; & ;") == r"\&lt; \&#60; & ;"
    assert md_text("[0.1, 0.2] [x](javascript:y) [a][b]") == \
        r"[0.1, 0.2] [x\](javascript:y) [a\][b]"
    assert md_text("C:\\dir\\") == "C:\\dir\\\\" and md_text("a\\*") == r"a\\\*"
    assert md_code("word.norm_ic[transform=raw]") == "`word.norm_ic[transform=raw]`"
    assert md_code("t_<i & <b>") == "`t_<i & <b>`"  # nothing but backticks matters in code
    assert md_code("a|b") == r"a\|b"  # a | would split a table cell even inside code
    assert md_code("x`y") == "``x`y``" and md_code("`x") == "`` `x ``"
    assert md_code("a\nb") == "`a b`" and md_code("") == ""


def test_markdown_of_a_crafted_report_holds_no_raw_markup() -> None:
    text = render(crafted_report(), "md")
    seen = prose(text)
    assert not re.search(r"(?<!\\)<[A-Za-z/!?]", seen), seen  # every tag-like < escaped
    assert not re.search(r"(?<!\\)\$", seen)  # no GitHub math
    assert "## normtest audit of `<b>evil</b> model`" in text  # literal inside code
    assert r"lacks \<script>alert(1)\</script>" in text
    for line in text.splitlines():  # every table row keeps its column count
        if line.startswith("| ") and "---" not in line:
            cells = re.split(r"(?<!\\)\|", line)
            assert len(cells) - 2 in (4, 5, 6, 7, 9), line
    page = commonmark(text)
    assert set(re.findall(r"<(\w+)", page)) <= {
        "h2", "h3", "p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td", "ul",
        "li", "details", "summary"}, page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown, as text
    assert "<td>my.&lt;claim&gt;|id</td>" in page  # the | stays inside its cell


def test_markdown_keeps_a_model_name_with_a_pipe_in_its_place() -> None:
    report = replace(crafted_report(), model={"name": "a|b <script>x</script>"})
    heading = render(report, "md").splitlines()[0]
    assert heading == r"## normtest audit of a\|b \<script>x\</script>"


# -- HTML --------------------------------------------------------------------------------------
class _Outline(HTMLParser):
    """What a test needs of the page's structure: ids, links, folds, table rows, captions."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.folds: list[bool] = []  # per <details>: whether it is open
        self.depth = 0  # how many <details> enclose the current point
        self.rows: list[tuple[str, bool]] = []  # (first cell's text, inside a <details>)
        self.captions: list[str] = []
        self._row: list[str] | None = None
        self._caption: list[str] | None = None
        self._family = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        if tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        if tag == "details":
            self.folds.append("open" in a)
            self.depth += 1
        if tag == "tr":
            self._family = a.get("class") == "family"
            self._row = []
        if tag == "figcaption":
            self._caption = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self.depth -= 1
        if tag == "tr" and self._row is not None:
            if not self._family:
                self.rows.append(("".join(self._row), self.depth > 0))
            self._row = None
        if tag == "td" and self._row is not None:
            self._row.append("\t")
        if tag == "figcaption" and self._caption is not None:
            self.captions.append("".join(self._caption))
            self._caption = None

    def handle_data(self, data: str) -> None:
        if self._row is not None:
            self._row.append(data)
        if self._caption is not None:
            self._caption.append(data)


def outline(page: str) -> _Outline:
    parsed = _Outline()
    parsed.feed(page)
    return parsed


def test_html_page_is_self_contained_with_every_section(glove_report: Report) -> None:
    page = render(glove_report, "html")
    assert page.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script" not in page.lower()
    assert not re.search(r"(src|href)=\"(?!data:|#)", page)  # nothing loaded from anywhere
    assert "http://" not in page and "https://" not in page
    tested = [line.key for line in glove_report.scorecard if line.status != "not tested"]
    for section in ("scorecard", "contents", *(f"line-{k}" for k in tested),
                    *(f"robustness-{k}" for k in tested), *(f"controls-{k}" for k in tested),
                    "summary", "effects", "words", "cer", "exploratory", "provenance"):
        assert f'id="{section}"' in page
    images = svgs(page)
    variants = glove_report.data["words"]["squared_norms"]
    curves = [r for r in glove_report.robustness if r.specifications]
    # one specification curve per assessed line, one forest plot, one scatter per transform
    # in the gallery, and each tested line's own plots (its deciding plot at least)
    assert curves and len(images) >= len(curves) + 1 + len(variants) + len(tested)
    for svg in images:
        root = ET.fromstring(svg)  # well-formed
        assert root.tag.endswith("svg")
        assert "<script" not in svg
        assert "<text" in svg and "font-family=\"'DejaVu Sans'" in svg  # text, in a named font
        for link in re.findall(r'href="([^"]*)"', svg):
            assert link.startswith(("#", "data:image/png;base64,")), link
    assert "farthest above the line" in page
    assert "no prefix curves" in page  # GloVe has no prefixes: said, not drawn
    assert len(page) < 5_000_000


def test_html_opens_with_the_scorecard_then_contents_then_plots_then_tables(
        glove_report: Report) -> None:
    page = render(glove_report, "html")
    marks = ["<header>", 'class="answer"', 'id="scorecard"', 'class="glance"', 'id="contents"',
             'id="line-word_level"', "<img ", '<table class="claims"',
             'id="robustness-word_level"', 'id="controls-word_level"', 'id="summary"',
             'id="effects"', 'id="words"', 'id="cer"', 'id="exploratory"', 'id="provenance"']
    at = [page.index(mark) for mark in marks]
    assert at == sorted(at), dict(zip(marks, at, strict=True))
    assert "Of the paper's 6 hypotheses: <b>1 replicated" in page  # the one-line answer
    parsed = outline(page)
    contents = [link for link in parsed.links if link.startswith("#")]
    # the glance links each tested line to its section, then the table of contents
    tested = [line.key for line in glove_report.scorecard if line.status != "not tested"]
    lines = [f"#line-{k}" for k in tested]
    assert contents == [*lines, "#scorecard", *lines, "#summary", "#effects", "#words", "#cer",
                        "#exploratory", "#provenance"]
    assert all(link[1:] in parsed.ids for link in contents)  # every anchor resolves
    assert len(parsed.ids) == len(set(parsed.ids))  # once each


def test_html_folds_the_exploratory_rows(glove_report: Report) -> None:
    page = render(glove_report, "html")
    parsed = outline(page)
    confirmatory = [r for r in glove_report.results if r.confirmatory]
    others = [r for r in glove_report.results if not r.confirmatory]
    table = [(cells, folded) for cells, folded in parsed.rows if "\t" in cells]
    closing = table[-len(others):]  # the exploratory rows close the page, folded
    assert all(folded for _, folded in closing) and len(closing) == len(others)
    assert parsed.folds and not any(parsed.folds)  # every fold starts closed
    exploratory = page[page.index('id="exploratory"'):page.index('id="provenance"')]
    assert f"Show the {sum(r.role == 'exploratory' for r in others)} exploratory rows" in \
        exploratory and "<details" in exploratory
    # each confirmatory row is in its line's section, open, with the paper's expectation
    for r in confirmatory:
        section = page.split(f'<section id="line-{r.hypothesis}"', 1)[1].split("</section>")[0]
        rows = section.split("<table", 1)[1].split("</table>")[0]
        assert "<details" not in rows and "<th>paper</th>" in rows
    assert 'id="confirmatory"' not in page  # no second copy of them


def test_html_explains_every_axis_and_why_whitened_norms_are_large(
        glove_report: Report) -> None:
    page = render(glove_report, "html")
    parsed = outline(page)
    assert parsed.captions and all(
        "x:" in c or "y:" in c for c in parsed.captions), parsed.captions
    assert "inverse square root of its frequency-weighted variance" in page
    assert "reach 10⁴–10⁶" in page and "logarithmic axis" in page
    assert "d (here 50)" in page  # the model's dimension, from the report
    # the whitened scatter: in the word line's section (it decides the line) and the gallery
    whitened = [c for c in parsed.captions if c.startswith("whiten_zipf")]
    assert len(whitened) == 2 and whitened[0] == whitened[1]
    assert "Zipf-whitened (log scale), here" in whitened[0]
    assert "units of each direction's frequency-weighted variance" in whitened[0]
    raw = next(c for c in parsed.captions if c.startswith("raw"))
    assert "y: ‖e(w)‖², raw, here" in raw and "log" not in raw


def test_html_is_deterministic(glove_report: Report) -> None:
    assert render(glove_report, "html") == render(glove_report, "html")


def test_html_escapes_every_string_from_data() -> None:
    page = render(crafted_report(), "html")
    assert SCRIPT not in page and "<script" not in page.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the word, listed under its plot
    assert "<b>evil</b>" not in page and "&lt;b&gt;evil&lt;/b&gt; model" in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "raw<i>" not in page and "raw&lt;i&gt;$x$&lt;/i&gt;" in page
    assert "doc&lt;0&gt;" in page and "my.&lt;claim&gt;|id" in page
    assert "rev&quot;&#x27;&gt;&lt;script&gt;" in page
    # ids quoted by the scorecard become code, still escaped; a hypothesis named with markup
    assert "<code>word.norm_ic[transform=raw&lt;i&gt;$x$&lt;/i&gt;]</code> PASS" in page
    assert "line&lt;script&gt;alert(1)&lt;/script&gt;" in page
    images = svgs(page)
    # the line's deciding scatter, then the galleries: two forest plots, one scatter, one CER
    # plot — folded, since the line's section shows the one that decides, and still escaped
    assert len(images) == 5
    assert page.count("<details") == 4 and "each line's section above shows" in page
    pipe = render(replace(crafted_report(), model={"name": "a|b <script>x</script>"}), "html")
    assert "<script" not in pipe.lower()
    assert '<h1>normtest audit of <span class="id">a|b &lt;script&gt;x&lt;/script&gt;' in pipe
    for svg in images:
        ET.fromstring(svg)
        assert "<script" not in svg.lower() and "<i>" not in svg


def test_html_draws_sentence_level_data_when_present() -> None:
    rng = np.random.default_rng(1)
    ic = rng.uniform(20, 200, 60)
    norms = 0.1 * ic + rng.normal(0, 2, 60)
    result = replace(correlation(ic, norms, n_resamples=200, seed=0), claim="text.norm_surprisal",
                     variant={"composition": "sqrt_n", "representation": "last"})
    report = Report(results=[result], model={"name": "m"}, data={"texts": {
        "information": ic.tolist(), "document": [i % 6 for i in range(60)],
        "squared_norms": {"composition=sqrt_n,representation=last": norms.tolist()}}})
    page = render(report, "html")
    assert 'id="texts"' in page and "Sentence level" in page
    assert len(svgs(page)) == 2  # the forest plot and one scatter
    assert f"ρ = {result.estimate:.3g}" in page


def test_html_without_plot_data_renders_the_rest(demo_report: Report) -> None:
    page = render(demo_report, "html")
    assert "no word-level data" in page and "no prefix curves" in page
    assert "<details" not in page and "<h2>All rows (" in page  # no roles: nothing to fold
    assert "### All rows (" in render(demo_report, "md")
    assert len(svgs(page)) == len({r.claim for r in demo_report.results})  # forest plots only
    for r in demo_report.results:
        assert r.claim is not None and r.claim in page


def test_html_without_matplotlib_says_so(glove_report: Report,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plots, "available", lambda: False)
    page = render(glove_report, "html")
    assert "matplotlib, which is not installed" in page
    assert not svgs(page) and "<img" not in page


@pytest.mark.slow
def test_importing_the_renderers_leaves_matplotlib_alone() -> None:
    import subprocess
    import sys

    code = ("import sys, normtest.render, normtest.render.html, normtest.render.markdown; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# -- fits --------------------------------------------------------------------------------------
def test_saturating_fit_finds_the_plateau_and_the_line_the_slope() -> None:
    lengths = np.array([8.0, 16, 32, 48, 64, 96, 128])
    curve = fits.saturating(lengths, 3 + 10 * (1 - np.exp(-lengths / 20)))
    assert curve is not None
    assert math.isclose(curve.tau, 20, rel_tol=1e-3) and math.isclose(curve.plateau, 13,
                                                                       rel_tol=1e-3)
    line = fits.ols(lengths, 2 + 0.5 * lengths)
    assert line is not None and math.isclose(line.slope, 0.5) and math.isclose(line.intercept, 2)
    assert fits.saturating(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])) is None


def test_mean_curve_drops_lengths_few_documents_reach() -> None:
    lengths = np.array([16, 32, 48, 16, 32, 16, 32, 16], dtype=float)
    docs = np.array([0, 0, 0, 1, 1, 2, 2, 3])
    values = np.arange(8, dtype=float)
    grid, mean, count = fits.mean_curve(lengths, values, docs)
    assert grid.tolist() == [16, 32] and count.tolist() == [4, 3]
    assert mean.tolist() == [pytest.approx((0 + 3 + 5 + 7) / 4), pytest.approx((1 + 4 + 6) / 3)]


def test_outliers_are_the_largest_residuals() -> None:
    x = np.arange(20, dtype=float)
    y = x.copy()
    y[3] += 10
    y[15] -= 10
    above, below = fits.outliers(x, y, k=1)
    assert above == [3] and below == [15]


# -- re-judging --------------------------------------------------------------------------------
def test_thresholds_rejudge_and_readjust(glove_report: Report) -> None:
    before = {r.id: r.verdict for r in glove_report.results}
    assert before["word.norm_ic[transform=whiten_zipf]"] is Verdict.PASS
    strict = with_thresholds(glove_report, ["word.norm_ic=0.99"])
    after = {r.id: r for r in strict.results}
    assert after["word.norm_ic[transform=whiten_zipf]"].verdict is Verdict.FAIL
    assert all(r.p_adjusted is not None for r in after.values())  # Holm again
    assert strict.provenance["rejudged"] == {"word.norm_ic": 0.99}
    page = render(strict, "md")
    assert "**Re-judged:** re-judged at word.norm_ic=0.99" in page
    if strict.robustness or strict.controls:  # computed at the audit's thresholds, and said so
        assert "are the audit's, computed at its own thresholds" in page
    assert all(r.verdict is before[r.id] for r in with_thresholds(glove_report, []).results)


def test_margins_rejudge_equivalence_claims(demo_report: Report) -> None:
    wide = with_thresholds(demo_report, ["demo.cer_linear=-100:100"])
    linear = [r for r in wide.results if r.claim == "demo.cer_linear"]
    assert linear and all(r.threshold == (-100.0, 100.0) for r in linear)
    by_process = {r.variant["process"]: r for r in linear}
    assert by_process["linear"].verdict is Verdict.PASS
    assert "inside the margin [-100, 100]" in by_process["linear"].reason
    # the headline now passes for the saturating process too; its curvature still fails it
    assert by_process["saturating"].verdict is Verdict.FAIL
    assert by_process["saturating"].reason.startswith("curvature")


@pytest.mark.parametrize(("spec", "message"), [
    ("word.norm_ic", "CLAIM=VALUE"),
    ("word.norm_ic=abc", "not a finite number"),
    ("word.norm_ic=2:1", "LOW < HIGH"),
    ("word.norm_ic=nan", "not a finite number"),
])
def test_threshold_syntax_errors(spec: str, message: str) -> None:
    with pytest.raises(NormtestError, match=message):
        parse_threshold(spec)


def test_threshold_errors_say_what_to_write(glove_report: Report, demo_report: Report) -> None:
    with pytest.raises(NormtestError, match=r"did you mean 'word\.norm_ic'"):
        with_thresholds(glove_report, ["word.norm_icc=0.5"])
    with pytest.raises(NormtestError, match="judged against one threshold"):
        with_thresholds(glove_report, ["word.norm_ic=0.1:0.5"])
    with pytest.raises(NormtestError, match="LOW:HIGH"):
        with_thresholds(demo_report, ["demo.cer_linear=0.5"])
    assert parse_threshold("cer.linear=0.8:1.25") == ("cer.linear", (0.8, 1.25))


# -- files and the command line ----------------------------------------------------------------
def test_write_renderings_writes_the_chosen_formats(glove_report: Report,
                                                    tmp_path: Path) -> None:
    written = write_renderings(glove_report, tmp_path / "out")
    assert [p.name for p in written] == ["report.json", "report.md", "report.html"]
    assert Report.read(tmp_path / "out" / "report.json").summary == glove_report.summary
    only = write_renderings(glove_report, tmp_path / "md", ["md"])
    assert [p.name for p in only] == ["report.md"]
    assert FORMATS == ("json", "md", "html", "csv", "metrics")  # the tables: on request
    tables = write_renderings(glove_report, tmp_path / "t", ["json", "csv", "metrics"])
    assert [p.name for p in tables] == ["report.json", "report.csv", "report.metrics.jsonl"]
    with pytest.raises(NormtestError, match="unknown report format"):
        write_renderings(glove_report, tmp_path, ["pdf"])


def test_report_command_renders_and_rejudges(glove_report: Report, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    stored = glove_report.write(tmp_path / "report.json")
    assert main(["report", str(stored)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("## normtest audit of `glove-6b-50d`")
    page = tmp_path / "page" / "report.html"
    assert main(["report", str(stored), "--format", "html", "--out", str(page),
                 "--threshold", "word.norm_ic=0.99"]) == EXIT_OK
    text = page.read_text(encoding="utf-8")
    assert "Re-judged from the stored measurements" in text and "<script" not in text
    assert f"html report written to {page}" in capsys.readouterr().out
    assert main(["report", str(stored), "--format", "json", "--threshold",
                 "word.norm_ic=0.99"]) == EXIT_OK
    rejudged = Report.from_json(capsys.readouterr().out)
    assert rejudged.summary["PASS"] < glove_report.summary["PASS"]


def test_report_command_usage_errors(tmp_path: Path, glove_report: Report,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    stored = glove_report.write(tmp_path / "report.json")
    assert main(["report", str(tmp_path / "missing.json")]) == EXIT_USAGE
    assert "cannot read the report" in capsys.readouterr().err
    assert main(["report", str(stored), "--threshold", "nope=1"]) == EXIT_USAGE
    assert "has no claim 'nope'" in capsys.readouterr().err
    assert main(["report", str(stored), "--format", "pdf"]) == EXIT_USAGE


@pytest.mark.slow
def test_audit_writes_every_format_by_default(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--model", "glove-6b-50d", "--claims", "word.norm_ic", "--words", "200",
                 "--resamples", "100", "--out", str(tmp_path)]) == EXIT_OK
    out = capsys.readouterr().out
    for name in ("report.json", "report.md", "report.html"):
        assert (tmp_path / name).is_file() and name in out
    # the word line's deciding scatter and its specification curve; the gallery's forest plot
    # and three scatter plots
    assert (tmp_path / "report.html").read_text(encoding="utf-8").count("<img ") == 6


@pytest.mark.slow
def test_the_conditions_section_opens_with_inner_products_against_pmi() -> None:
    """C1 plotted: the report keeps the one-token pairs (each pair's PMI and inner product per
    variant), and the conditions line's section opens with ⟨e(x), e(y)⟩ against PMI for each
    of its C1 rows."""
    import normtest
    from normtest.audit.run import AuditSettings, run_audit

    report = run_audit(normtest.load("glove-6b-50d"), claim_ids=["conditions"],
                       settings=AuditSettings(words=600, resamples=200, robustness=False,
                                              controls=False))
    pairs = report.data["words"]["pairs"]
    rows = [r for r in report.results if r.claim == "cond.inner_pmi"]
    assert len(pairs["pmi"]) > 100
    assert all(len(v) == len(pairs["pmi"]) for v in pairs["inner_products"].values())
    assert set(pairs["inner_products"]) == {variant_key(r.variant) for r in rows}
    again = Report.from_json(report.to_json())  # stored and read back, schema-checked
    assert again.data["words"]["pairs"]["pmi"] == pairs["pmi"]
    page = render(report, "html")
    section = page.split('<section id="line-conditions"', 1)[1].split("</section>", 1)[0]
    assert section.find('alt="inner product against PMI') < section.find("<table")
    assert "Condition C1 holds when the inner product tracks PMI" in section
