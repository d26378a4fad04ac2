"""The page's figures: what each shows, drawn once, escaped, deterministic; the SVG canvas.

No timings here: ``benchmarks/bench_render.py`` measures how long a report takes to render.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normtest.audit.report import Report
from normtest.errors import NormtestError
from normtest.render import canvas, fits, plots
from normtest.render.formats import render
from normtest.stats.correlation import correlation
from normtest.stats.growth import linear_growth
from normtest.verdict.result import Result, Verdict

DATA_URI = re.compile(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"')
SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parents[1]


def figures(page: str) -> list[tuple[str, str]]:
    """(alt text, SVG document) of every figure of a page, in page order."""
    return [(alt, base64.b64decode(uri).decode("utf-8")) for uri, alt in DATA_URI.findall(page)]


def texts(svg: str) -> list[str]:
    """The text of every ``<text>`` element of an SVG, as a reader sees it."""
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def rich_report(label: str = "raw") -> Report:
    """Words (a raw and a whitened transform, one- and multi-token words), sentences, and the
    prefix curves of a linear and a saturating composition, with their rows."""
    rng = np.random.default_rng(3)
    ic = rng.uniform(4, 16, 300)
    raw = 2 * ic + rng.normal(0, 1, 300)
    whitened = np.exp(0.4 * ic + rng.normal(0, 0.3, 300))
    counts = (ic > 12).astype(int) + 1
    rows = [replace(correlation(ic, raw, n_resamples=100, seed=0), claim="word.norm_ic",
                    variant={"transform": label}, role="confirmatory", expected=Verdict.PASS),
            replace(correlation(ic, whitened, n_resamples=100, seed=0), claim="word.norm_ic",
                    variant={"transform": "whiten_zipf"}, role="exploratory")]
    surprisal = rng.uniform(20, 200, 80)
    sentences = 0.1 * surprisal + rng.normal(0, 2, 80)
    rows.append(replace(correlation(surprisal, sentences, n_resamples=100, seed=0),
                        claim="text.norm_surprisal", variant={"composition": "sqrt_n"},
                        role="confirmatory"))
    lengths = np.tile(np.array([16.0, 32.0, 48.0, 64.0, 80.0]), 12)
    docs = np.repeat(np.arange(12), 5)
    curves = {"linear": 3 * lengths + rng.normal(0, 2, lengths.size),
              "mean": 10 * (1 - np.exp(-lengths / 12)) + rng.normal(0, 0.1, lengths.size)}
    data_curves = {}
    for name, values in curves.items():
        rows.append(replace(linear_growth(lengths, values, docs, n_resamples=100, seed=0),
                            claim="cer.linear", variant={"composition": name},
                            role="confirmatory"))
        data_curves[f"composition={name}"] = {"lengths": lengths.astype(int).tolist(),
                                              "squared_norms": values.tolist(),
                                              "document": docs.tolist()}
    data = {"words": {"words": [f"w{i}" for i in range(300)], "information": ic.tolist(),
                      "token_counts": counts.tolist(),
                      "squared_norms": {f"transform={label}": raw.tolist(),
                                        "transform=whiten_zipf": whitened.tolist()}},
            "texts": {"information": surprisal.tolist(), "document": [0] * 80,
                      "squared_norms": {"composition=sqrt_n": sentences.tolist()}},
            "prefixes": {"documents": [f"d{i}" for i in range(12)], "curves": data_curves}}
    return Report(results=rows, model={"name": "m", "dim": 8}, data=data)


# -- the page's figures --------------------------------------------------------------------------
def test_every_figure_is_drawn_once_and_each_curve_fitted_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter[str] = Counter()

    def counted(module: Any, name: str) -> None:
        original = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("forest_plot", "scatter_plot", "cer_plot"):
        counted(plots, name)
    for name in ("saturating", "mean_curve", "ols"):
        counted(fits, name)
    page = render(rich_report(), "html")
    drawn = figures(page)
    families = 3  # word.norm_ic, text.norm_surprisal, cer.linear
    assert calls["forest_plot"] == families
    assert calls["scatter_plot"] == 3 and calls["cer_plot"] == 2
    assert len(drawn) == families + 3 + 2  # each figure drawn once, and each on the page once
    assert len({svg for _, svg in drawn}) == len(drawn)
    # the caption and the plot share one fit: a mean curve and a saturating fit per CER plot,
    # and one least-squares line per scatter and per CER mean curve
    assert calls["saturating"] == 2 and calls["mean_curve"] == 2
    assert calls["ols"] == 3 + 2


@pytest.mark.slow
def test_the_same_report_gives_the_same_bytes_in_any_process(tmp_path: Path) -> None:
    report = rich_report()
    page = render(report, "html")
    assert render(report, "html") == page
    stored = report.write(tmp_path / "report.json")
    code = ("import sys; from normtest.audit.report import Report; "
            "from normtest.render.formats import render; "
            "sys.stdout.buffer.write(render(Report.read(sys.argv[1]), 'html').encode())")
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code, str(stored)], capture_output=True,
                             check=True, env={"PYTHONHASHSEED": seed, "PATH": ""})
        assert out.stdout.decode("utf-8") == render(Report.read(stored), "html")


def test_text_in_the_figures_is_escaped_text() -> None:
    label = "raw<i>&amp;\"q\"'\x07</i>"
    page = render(rich_report(label), "html")
    forest = next(svg for alt, svg in figures(page) if alt == "forest plot of word.norm_ic")
    assert "<i>" not in forest and "&amp;amp;" in forest and "\x07" not in forest
    shown = texts(forest)  # parses: the label is text, with U+FFFD for what XML forbids
    assert "transform=raw<i>&amp;\"q\"'\ufffd</i>" in shown
    for _, svg in figures(page):
        root = ET.fromstring(svg)
        assert root.get("font-family", "").startswith("'DejaVu Sans'")
        assert not any(e.tag.endswith("script") or e.tag.endswith("foreignObject")
                       for e in root.iter())
        for e in root.iter():  # the only links: embedded PNGs and the clip path
            for key, value in e.attrib.items():
                if key.endswith("href"):
                    assert value.startswith("data:image/png;base64,"), value
    assert canvas.xml("a<b>&\"'\x00\x1f\ud800") == "a&lt;b&gt;&amp;&quot;&#x27;\ufffd\ufffd\ufffd"


def test_the_forest_plot_shows_every_row_its_verdict_and_the_threshold() -> None:
    report = rich_report()
    rows = [r for r in report.results if r.claim == "cer.linear"]
    svg = plots.forest_plot(rows, "late_early_ratio")
    shown = texts(svg)
    assert "composition=linear" in shown and "composition=mean" in shown
    for r in rows:
        assert r.verdict.value in " ".join(shown)
    assert any(t.startswith("late_early_ratio") for t in shown)
    root = ET.fromstring(svg)
    bold = [t.text for t in root.iter(f"{SVG}text") if t.get("font-weight") == "bold"]
    assert sorted(bold) == ["composition=linear", "composition=mean"]  # confirmatory rows
    assert 'stroke-dasharray' in svg  # the equivalence margin's edges
    assert svg.count("<circle") == len(rows)  # one estimate each
    wide = replace(rows[0], variant={"composition": "x" * 400})
    assert float(ET.fromstring(plots.forest_plot([wide])).get("width", "0pt")[:-2]) > 576
    assert rows[0].measurement is not None
    missing = replace(rows[0], measurement=replace(rows[0].measurement, estimate=float("nan")))
    with pytest.raises(NormtestError, match="at least one result"):
        plots.forest_plot([missing])


def test_a_scatter_shows_its_points_line_and_correlation() -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    rng = np.random.default_rng(0)
    x = rng.uniform(4, 16, 5000)
    y = 10 * np.exp(0.4 * x + rng.normal(0, 0.3, 5000))  # about 50 to 6,000
    counts = (x > 12).astype(int) + 1
    drawn = plots.scatter_plot(x, y, rho=0.81, verdict="PASS", token_counts=counts,
                               ylabel="‖e(w)‖², Zipf-whitened (log scale)", log_y=True)
    assert drawn.n == 5000 and drawn.shown == plots.MAX_POINTS and drawn.line is not None
    shown = texts(drawn.svg)
    assert "Spearman ρ = 0.81   PASS" in shown  # spaces kept (xml:space)
    assert {"IC(w) (nats)", "‖e(w)‖², Zipf-whitened (log scale)", "one token",
            "several tokens"} <= set(shown)
    assert "100" in shown and "1,000" in shown  # plain labels on the logarithmic axis
    png = re.findall(r'href="data:image/png;base64,([^"]+)"', drawn.svg)
    assert len(png) == 1  # the points: one image
    image = Image.open(io.BytesIO(base64.b64decode(png[0])))
    assert image.mode == "RGBA"
    colours = {tuple(c[:3]) for _, c in image.getcolors(1 << 20) or [] if c[3] > 200}
    assert any(abs(r - 0x4c) + abs(g - 0x72) + abs(b - 0xb0) < 12 for r, g, b in colours)
    assert any(abs(r - 0xdd) + abs(g - 0x84) + abs(b - 0x52) < 12 for r, g, b in colours)
    plain = plots.scatter_plot(x[:50], 2 * x[:50], rho=1.0)
    assert "one token" not in texts(plain.svg)  # one colour, no legend
    with pytest.raises(NormtestError, match="every value positive"):
        plots.scatter_plot(x, -y, rho=0.0, log_y=True)


def test_a_cer_plot_shows_documents_mean_fits_and_a_plateau() -> None:
    report = rich_report()
    curve = report.data["prefixes"]["curves"]["composition=mean"]
    lengths = np.asarray(curve["lengths"], dtype=float)
    values = np.asarray(curve["squared_norms"])
    docs = np.asarray(curve["document"])
    ratio = next(r for r in report.results if r.variant == {"composition": "mean"})
    drawn = plots.cer_plot(lengths, values, docs, ratio=ratio)
    shown = texts(drawn.svg)
    assert {"mean over documents", "linear fit", "saturating fit", "its plateau"} <= set(shown)
    assert any(t.startswith("late/early slope ratio") for t in shown)
    assert f"cer.linear: {ratio.verdict.value}" in shown
    assert drawn.documents == 12 and drawn.saturating is not None
    assert drawn.saturating.tau < drawn.max_length / 2  # levels off: the plateau is drawn
    assert drawn.svg.count('stroke="#8c959f"') == 12  # one faint line per document


def test_the_benchmark_counts_every_figure_by_kind() -> None:
    spec = importlib.util.spec_from_file_location("bench_render",
                                                  ROOT / "benchmarks" / "bench_render.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec.loader.exec_module(bench)
        found = bench.render_figures(rich_report())
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    kinds = found["figure_kinds"]
    assert {k: v["count"] for k, v in kinds.items()} == {"forest": 3, "scatter": 3, "cer": 2,
                                                         "layers": 0}
    assert found["figures"] == found["images_on_page"] == 8
    assert set(found["formats_s"]) == {"json", "md", "html"}
    assert plots.forest_plot.__name__ == "forest_plot"  # the wrappers are gone afterwards


# -- the canvas ----------------------------------------------------------------------------------
def test_ticks_are_round_and_labelled_with_the_digits_they_need() -> None:
    ticks = canvas.linear_ticks(0.18, 0.57, 400)
    assert canvas.tick_labels(ticks) == ["0.20", "0.25", "0.30", "0.35", "0.40", "0.45", "0.50",
                                         "0.55"]
    assert canvas.tick_labels(canvas.linear_ticks(-4.3, 3.1, 200)) == ["−4", "−2", "0", "2"]
    assert canvas.tick_labels([0.0, 2.5, 5.0]) == ["0.0", "2.5", "5.0"]
    assert canvas.tick_labels(canvas.linear_ticks(0, 161_000, 150, vertical=True))[-1] == \
        "160,000"
    major, minor = canvas.log_ticks(80, 12_000)
    assert major == [100, 1000, 10_000] and 200 in minor
    assert [canvas.log_label(v) for v in major] == ["100", "1,000", "10,000"]
    assert canvas.log_ticks(15, 60)[0] == [20, 50]  # no power of ten inside: 2 and 5 times
    assert canvas.log_ticks(30, 90)[0] == [30, 40, 50, 60, 70, 80, 90]  # then every multiple
    assert canvas.log_ticks(31, 38)[0] == list(range(31, 39))  # then round steps
    assert canvas.log_label(32.5) == "32.5"
    assert canvas.linear_ticks(1.0, 1.0, 100) == [1.0]


def test_the_point_cloud_composites_like_points_drawn_one_by_one() -> None:
    pytest.importorskip("PIL")
    from PIL import Image

    picture = canvas.Canvas(100, 100)
    ax = canvas.Axes(picture, (0, 0, 100, 100), (0, 10), (0, 10))
    # one point alone, two on top of each other (blue), then an orange one on a blue one
    ax.cloud(np.array([2.0, 5.0, 5.0, 8.0, 8.0]), np.array([5.0, 5.0, 5.0, 5.0, 5.0]),
             np.array([0, 0, 0, 0, 1]), ("#0000ff", "#ff8000"), diameter=4.0)
    png = re.findall(r'href="data:image/png;base64,([^"]+)"', picture.svg())[0]
    image = Image.open(io.BytesIO(base64.b64decode(png)))

    def at(x: float) -> Any:
        return image.getpixel((round(x * 20), 100))

    assert at(2) == (0, 0, 255, round(0.55 * 255))
    assert at(5) == (0, 0, 255, round((1 - 0.45 ** 2) * 255))
    r, _, b, a = at(8)  # orange over blue: mostly orange, as opaque as two points
    assert a == round((1 - 0.45 ** 2) * 255) and r > 150 and b < 100
    assert image.getpixel((0, 0))[3] == 0  # transparent where no point reaches


def test_text_widths_follow_the_font() -> None:
    assert canvas.text_width("iiii", 10) < canvas.text_width("MMMM", 10)
    assert canvas.text_width("PASS", 10, bold=True) > canvas.text_width("PASS", 10)
    assert canvas.text_width("ρ‖²", 8) > 0 and canvas.text_width("日本", 10) == 20.0


def test_a_result_without_a_criterion_still_draws() -> None:
    measured = rich_report().results[0]
    row = Result(Verdict.INCONCLUSIVE, "why", measurement=measured.measurement, claim="c")
    svg = plots.forest_plot([row])
    assert "INCONCLUSIVE" in texts(svg) and "stroke-dasharray" not in svg


def test_a_legend_goes_where_it_hides_the_least() -> None:
    picture = canvas.Canvas(200, 200)
    ax = canvas.Axes(picture, (20, 20, 180, 180), (0, 10), (0, 10))
    ax.line(np.linspace(0, 10, 30), np.linspace(0, 10, 30), "#000000")  # lower left to upper right
    ax.legend([canvas.Entry("the line", "#000000")])
    label = next(t for t in ET.fromstring(picture.svg()).iter(f"{SVG}text"))
    assert label.text == "the line"
    assert float(label.get("x", "0")) < 100 and float(label.get("y", "0")) < 100  # upper left


def test_the_beyond_plot_shows_each_stratum_the_pooled_reading_and_its_threshold() -> None:
    svg = plots.strata_plot(["1", "2", "3"], [0.31, 0.05, None], pooled=0.19,
                            interval=(0.17, 0.21), threshold=0.202, verdict="INCONCLUSIVE",
                            xlabel="token count stratum")
    shown = texts(svg)
    assert "beyond: ρ = 0.19   INCONCLUSIVE" in shown
    assert {"threshold it is held to", "ρ within one stratum", "token count stratum", "1", "2",
            "3"} <= set(shown)
    assert svg.count("<circle") == 3  # two strata (one without a ρ), the legend's mark
    with pytest.raises(NormtestError, match="at least one stratum"):
        plots.strata_plot([], [], pooled=0.0, interval=(0.0, 0.0), threshold=None)


def test_the_power_curve_marks_this_sample_and_the_rerun() -> None:
    sizes = np.linspace(200, 20_000, 40)
    powers = 1 - np.exp(-sizes / 6_000)
    shown = texts(plots.power_plot(sizes, powers, now=819, chosen=15_560, setting="sentences"))
    assert {"power against --sentences", "this audit: 819", "the rerun: 15,560", "power 0.9",
            "--sentences"} <= set(shown)
    with pytest.raises(NormtestError, match="as many powers as sizes"):
        plots.power_plot(sizes, powers[:3], now=819, chosen=None, setting="sentences")


def test_each_line_section_opens_with_the_plot_that_decides_it() -> None:
    """The rich report's rows made confirmatory rows of their lines: the word line's section
    opens with the scatter of its deciding row, the text line's (undecided, with the sample
    that would decide it) with its scatter and then its power curve; the galleries below are
    folded."""
    report = rich_report()
    lines = {"word.norm_ic": "word_level", "text.norm_surprisal": "text_level",
             "cer.linear": "cer_growth"}
    power = {"factor": 4.0, "alpha": 0.05, "power": 0.9, "setting": "sentences", "now": 80,
             "needed": 320, "capacity": 20_411, "out_of_reach": False}
    rows = []
    for r in report.results:
        if not r.confirmatory:
            rows.append(r)
            continue
        undecided = r.claim == "text.norm_surprisal"
        rows.append(replace(r, hypothesis=lines[r.claim], expected=Verdict.PASS,
                            verdict=Verdict.INCONCLUSIVE if undecided else r.verdict,
                            details={**r.details, "power": power} if undecided else r.details))
    page = render(replace(report, results=rows,
                          provenance={"sentences": 80, "words": 300, "documents": 12}), "html")
    section = page.split('<section id="line-text_level"', 1)[1].split("</section>", 1)[0]
    alts = [alt for alt, _ in figures(section)]
    assert alts[0].startswith("‖e(t)‖²") and "against IC(t)" in alts[0]
    assert "power against --sentences" in alts
    assert section.find("<img ") < section.find("<table")
    word = page.split('<section id="line-word_level"', 1)[1].split("</section>", 1)[0]
    first = figures(word)[0][0]
    assert first.startswith("‖e(w)‖²") and "against IC(w)" in first
    assert "each line's section above shows the ones that decide it" in page
