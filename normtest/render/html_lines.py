"""The top of the HTML page: the answer at a glance, then each line's evidence first.

Split from :mod:`normtest.render.html` (which assembles the page):

- **at a glance** (``#scorecard``): one row per hypothesis of the paper — its status, its id
  (``*``: a criterion normtest reconstructed), a few words naming it, the effect of the row that
  decides it against its threshold, its robustness in words and, for an undecided line, what
  would decide it — then the one command that decides every undecided line the data can
  decide (:mod:`normtest.audit.next_steps`);
- **one section per tested line** (``#line-KEY``), each opening with the plot that decides it:
  ‖e(w)‖² against IC for the word lines (the deciding composition, and the plain mean beside it
  for the composition line), ⟨e(x), e(y)⟩ against PMI for the conditions, s(L) for growth and
  fixed points, ‖e(t)‖² against surprisal for texts; then the reason, the deciding rows, the
  reading beyond the baseline stratum by stratum, the robustness and the controls, and for an
  undecided line its power curve against the size the rerun command picks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cached_property, partial
from typing import Any

import numpy as np

from normtest.audit.next_steps import NextSteps, next_steps
from normtest.render import plots
from normtest.render.html_figures import Figures, Section, badge, esc, floats, parse_variant
from normtest.render.labels import deciding_label
from normtest.scorecard.lines import Line, deciding_row, deciding_rows
from normtest.scorecard.power import line_levels, power_at
from normtest.verdict.formatting import interval as _interval
from normtest.verdict.formatting import number as _number
from normtest.verdict.formatting import threshold as _threshold
from normtest.verdict.result import Result, variant_key

__all__ = ["LineSections"]


def effect_text(r: Result | None) -> str:
    """``0.46 [0.445, 0.476] > 0.3`` of a row (— for none)."""
    if r is None:
        return "—"
    return f"{_number(r.estimate)} {_interval(r)} {_threshold(r)}"


#: The word claims whose deciding row is drawn as ‖e(w)‖² against IC(w) at its composition (a
#: claim of another quantity, such as 2·KL, has no scatter of its own here: its forest plot is
#: in the gallery).
WORD_SCATTERED = ("word.norm_ic", "word.norm_ic.contrast", "word.norm_ic.multitoken")


class LineSections(Figures):
    """The glance and the line sections; mixed into the page."""

    rows_table: Any  # the page's table of rows (render.html)
    prose: Any  # escaped text with the ids it quotes as code (render.html)

    # -- at a glance -----------------------------------------------------------------------------
    @cached_property
    def plan(self) -> NextSteps:
        """What the report says to do next, made once for the glance and the line sections."""
        return next_steps(self.report)

    def glance(self) -> Section:
        plan = self.plan
        steps = {s.line: s for s in plan.steps}
        out = ['<section id="scorecard"><h2>Does the model behave as the paper says?</h2>',
               '<table class="glance"><thead><tr><th>status</th><th>line</th><th>hypothesis'
               "</th><th>the row that decides it</th><th>robustness</th><th>next</th></tr>"
               "</thead><tbody>"]
        for line in self.report.scorecard:
            status = esc(line.status)
            star = "*" if line.basis == "reconstructed" else ""
            key = f"<code>{esc(line.key)}</code>{star}"
            if line.status != "not tested":
                key = f'<a href="#line-{esc(line.key)}">{key}</a>'
            r = deciding_row(line)
            label = "" if r is None else deciding_label(r, (x.claim for x in line.rows)) or r.id
            decides = ("" if r is None else
                       f"<code>{esc(label)}</code> {esc(effect_text(r))} "
                       f"{badge(r.verdict.value)}")
            if line.verdict != line.status:  # its other readings where they differ
                decides += f"<br><small>{esc(line.verdict)}</small>"
            robust = self.report.robustness_of(line.key)
            advice = esc(robust.advice) if robust is not None else ""
            if robust is not None and robust.heterogeneity_advice:
                advice += f"<br><small>{esc(robust.heterogeneity_advice)}</small>"
            checked = self.report.controls_of(line.key)
            if checked is not None and not checked.valid and line.status == "invalid":
                advice += f"<br><small>invalid: {esc(checked.reason())}</small>"
            step = steps.get(line.key)
            out.append(f'<tr><td><span class="status {status.replace(" ", "-")}">{status}'
                       f"</span></td><td>{key}</td><td>{esc(line.short or line.title)}</td>"
                       f"<td>{decides}</td><td>{advice}</td>"
                       f"<td>{esc(step.clause()) if step is not None else ''}</td></tr>")
        out.append("</tbody></table>")
        out.append(self._next(plan))
        marked = any(line.basis == "reconstructed" for line in self.report.scorecard)
        out.append('<p class="note">Each line is a hypothesis of the paper, decided by its '
                   "confirmatory rows (the variants where the paper states a verdict): "
                   "<b>replicated</b> when every one agrees, <b>contradicted</b> when one is "
                   "decided against the paper, <b>undecided</b> when the sample cannot decide "
                   "one (not a fault of the model), <b>invalid</b> when one of its controls "
                   "misbehaves."
                   + (" * marks a criterion normtest reconstructed from the authors' earlier "
                      "work (the paper's full text was not available)." if marked else "")
                   + "</p></section>")
        return Section("scorecard", "At a glance", "".join(out))

    @staticmethod
    def _next(plan: NextSteps) -> str:
        if not plan.steps:
            return ""
        out = ['<div class="next"><b>Next:</b> ']
        if plan.command is not None:
            when = plan.time_text()
            out.append(f"<code>{esc(plan.command)}</code> decides "
                       f"{esc(', '.join(plan.decides))}" + (f" ({esc(when)})" if when else "")
                       + " — sized for power 0.9 per row, each estimate taken as the truth. ")
        far = plan.out_of_reach
        if far:
            out.append("Out of reach: " + "; ".join(f"<code>{esc(s.line)}</code> "
                                                     f"{esc(s.clause())}" for s in far) + ".")
        return "".join(out) + "</div>"

    # -- one section per line --------------------------------------------------------------------
    def line_sections(self) -> list[Section]:
        plan = self.plan
        return [self._line_section(line, plan) for line in self.report.scorecard
                if line.status != "not tested"]

    def _line_section(self, line: Line, plan: NextSteps) -> Section:
        key, status = line.key, esc(line.status)
        star = "*" if line.basis == "reconstructed" else ""
        out = [f'<section id="line-{esc(key)}" class="line"><h2><span class="status '
               f'{status.replace(" ", "-")}">{status}</span> <code>{esc(key)}</code>{star} — '
               f"{esc(line.title)}</h2>"]
        figures = self._deciding_figures(line) if self.can_plot else []
        if figures:
            out.append(f'<div class="grid">{"".join(figures)}</div>')
        out.append(f'<p><b>Why:</b> <span class="muted">{self.prose(line.reason)}</span></p>')
        if line.rows:  # every confirmatory row of the line, each reading's
            out.append(self.rows_table(list(line.rows)))
        step = next((s for s in plan.steps if s.line == key), None)
        if step is not None:
            out.append(f'<p><b>What would decide it:</b> {esc(step.clause())}'
                       + (f'; <code>{esc(plan.command)}</code>' if key in plan.decides
                          and plan.command else "") + ".</p>")
            if self.can_plot:
                out.append(self._power_figure(line, plan))
        out.append(self.robustness_block(key))
        out.append(self.controls_block(key))
        out.append("</section>")
        return Section(f"line-{key}", f"{key}{star}", "".join(out))

    # -- the plots that decide a line ------------------------------------------------------------
    def _deciding_figures(self, line: Line) -> list[str]:
        """The plot of the row that decides the line, then what it is read against: the plain
        mean (composition), the reading beyond the baseline (a row that declares one)."""
        r = deciding_row(line)
        if r is None:
            return []
        out: list[str] = []
        data = self.report.data if isinstance(self.report.data, Mapping) else {}
        claim = r.claim or ""
        variant = dict(r.variant)
        if claim in WORD_SCATTERED:
            words = data.get("words")
            series = words.get("squared_norms") if isinstance(words, Mapping) else None
            if isinstance(words, Mapping) and isinstance(series, Mapping):
                keys = [_matching(series, variant)]
                if "versus" in variant:  # the plain mean beside the composition it is held to
                    keys.append(_matching(series, {**variant, "composition": variant["versus"]}))
                for i, k in enumerate(keys):
                    if k is not None:
                        out.append(self._word_figure(
                            words, k, r if i == 0 and claim == "word.norm_ic" else None))
        elif claim.startswith("cond."):
            out += self._pairs_figures(line, data.get("words"))
        elif claim.startswith("cer."):
            prefixes = data.get("prefixes")
            curves = prefixes.get("curves") if isinstance(prefixes, Mapping) else None
            k = _matching(curves, variant) if isinstance(curves, Mapping) else None
            if isinstance(curves, Mapping) and k is not None:
                out.append(self.cer_figure(k, curves[k]))
        elif claim.startswith("text."):
            texts = data.get("texts")
            series = texts.get("squared_norms") if isinstance(texts, Mapping) else None
            k = _matching(series, variant) if isinstance(series, Mapping) else None
            if isinstance(texts, Mapping) and isinstance(series, Mapping) and k is not None:
                out.append(self.scatter_figure(
                    series[k], k, floats(texts.get("information", [])), "text.norm_surprisal",
                    None, None, "IC(t) (nats)", "‖e(t)‖²"))
        beyond = self._beyond_figure(r)
        if beyond:
            out.append(beyond)
        return out

    def _word_figure(self, words: Mapping[str, Any], key: str, result: Result | None) -> str:
        labels = [str(w) for w in words.get("words", [])]
        x = floats(words.get("information", []))
        counts_raw = words.get("token_counts")
        counts = None if not counts_raw else np.asarray(counts_raw, dtype=np.intp)
        return self.scatter_figure(words["squared_norms"][key], key, x, "word.norm_ic",
                                   labels if len(labels) == x.size else None, counts,
                                   "IC(w) (nats)", "‖e(w)‖²", result)

    def _pairs_figures(self, line: Line, words: Any) -> list[str]:
        """⟨e(x), e(y)⟩ against PMI(x, y) over the pairs of one-token words, per variant of the
        line's C1 rows (condition C1; its diagonal, C2, is ‖e(w)‖² against IC)."""
        pairs = words.get("pairs") if isinstance(words, Mapping) else None
        if not isinstance(pairs, Mapping) or not pairs.get("inner_products"):
            return ['<p class="note">This report holds no pairs to plot (it predates them, or '
                    "PMI could not be measured).</p>"]
        pmi = floats(pairs.get("pmi", []))
        out = []
        for r in deciding_rows(line):
            key = variant_key(dict(r.variant))
            values = pairs["inner_products"].get(key)
            if values is None:
                continue
            inner = floats(values)
            n = min(pmi.size, inner.size)
            keep = np.isfinite(pmi[:n]) & np.isfinite(inner[:n])
            caption = (f"<b>{esc(r.id)}</b> · {n:,} pairs of one-token words · ρ = "
                       f"{esc(_number(r.estimate))} {esc(_interval(r))} "
                       f"{badge(r.verdict.value)} (threshold {esc(_threshold(r))})"
                       '<br><span class="axes">x: PMI(x, y) in the reference corpus, nats; y: '
                       "⟨e(x), e(y)⟩ under the row's geometry. Condition C1 holds when the "
                       "inner product tracks PMI.</span>")
            out.append(self.figure(
                partial(plots.scatter_plot, pmi[:n][keep], inner[:n][keep], rho=r.estimate,
                        verdict=r.verdict.value, xlabel="PMI(x, y) (nats)",
                        ylabel="⟨e(x), e(y)⟩"),
                f"inner product against PMI, {key}", caption))
        return out

    def _beyond_figure(self, r: Result) -> str:
        """The reading beyond the row's baseline, stratum by stratum."""
        m = r.measurement
        beyond = None if m is None else m.components.get("beyond")
        judged = r.details.get("beyond")
        if beyond is None or beyond.sampling is None or not isinstance(judged, Mapping):
            return ""
        settings = beyond.settings if isinstance(beyond.settings, Mapping) else {}
        strata = settings.get("strata")
        if not isinstance(strata, list) or len(strata) < 2:
            return ""
        labels = [str(s.get("baseline")) for s in strata if isinstance(s, Mapping)]
        rhos = [s.get("rho") for s in strata if isinstance(s, Mapping)]
        held = judged.get("threshold")
        low, high = beyond.interval(1 - 2 * (r.criterion.alpha if r.criterion else 0.05))
        name = str(judged.get("baseline") or "baseline")
        caption = (f"<b>{esc(r.id)}</b> beyond its {esc(name)}: ρ within each stratum of the "
                   f"{esc(name)} (dots), pooled {esc(_number(beyond.estimate))} "
                   f"[{esc(_number(low))}, {esc(_number(high))}] "
                   f"{badge(str(judged.get('verdict') or ''))}, held to the attenuated threshold "
                   f"{esc(_number(held))} (dashed: what a norm carrying the information alone at "
                   "the claim's own threshold would show here)."
                   '<br><span class="axes">x: the strata; y: Spearman ρ of norm and information '
                   "within the stratum.</span>")
        return self.figure(
            partial(plots.strata_plot, labels, rhos, pooled=beyond.estimate,
                    interval=(low, high), threshold=held if isinstance(held, int | float)
                    else None, verdict=str(judged.get("verdict") or "") or None,
                    xlabel=f"{name} stratum"),
            f"beyond the {name}, stratum by stratum", caption)

    def _power_figure(self, line: Line, plan: NextSteps) -> str:
        """The power curve of the undecided row that needs the largest sample."""
        r = deciding_row(line)
        power = r.details.get("power") if r is not None else None
        if r is None or not isinstance(power, Mapping) or not power.get("setting") \
                or not power.get("now"):
            return ""
        setting, now = str(power["setting"]), int(power["now"])
        alpha, fail_alpha = line_levels(r, self.report.results)
        chosen = plan.sizes.get(setting) if line.key in plan.decides else None
        top = max(int(power.get("needed") or now), chosen or now, now) * 1.3
        sizes = np.linspace(now * 0.25, top, 60)
        powers = np.array([power_at(r, alpha, float(n) / now, fail_alpha) or math.nan
                           for n in sizes])
        caption = (f"<b>{esc(r.id)}</b>: the chance that a sample of each size decides it at its "
                   f"line's level, its estimate taken as the truth (power 0.9 needs about "
                   f"--{esc(setting)} {int(power.get('needed') or 0):,}).")
        return self.figure(partial(plots.power_plot, sizes, powers, now=now, chosen=chosen,
                                   setting=setting),
                           f"power against --{setting}", caption)


def _matching(series: Mapping[str, Any] | None, variant: Mapping[str, str]) -> str | None:
    """The key of ``series`` (``composition=sum,transform=raw``) whose every axis the row's
    ``variant`` has at the same value (the data keep only the axes that shape them)."""
    if not series:
        return None
    return next((k for k in series if all(variant.get(a) == v
                                          for a, v in parse_variant(k).items())), None)
