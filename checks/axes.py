"""Variant axes shared by the claim declarations (docs/theory.md §4, §5, §7)."""

from normtest.catalogue import hypothesis
from normtest.geometry.compose import MODEL_STATES

#: Compositions of subword or text tokens that claims expand over (docs/theory.md §4).
COMPOSITIONS = ("sum", "mean", "sqrt_n", "f_ind", "f_joint", "f_inf", "f_avg", "first", "last")
#: Compositions plus the model's own states, for text and prefix claims.
POOLINGS = (*COMPOSITIONS, *MODEL_STATES)
#: Representations: the input embedding rows, or the last hidden layer.
REPRESENTATIONS = ("input", "last")
#: Geometry transforms fitted on the word sample (docs/theory.md §5).
TRANSFORMS = ("raw", "center_uniform", "center_zipf", "whiten_uniform", "whiten_zipf")

PAPER = "Amigó et al., Findings of EMNLP 2025"

# The scorecard: one line per hypothesis of the paper, in the paper's order. A claim's
# confirmatory rows (its ``expected`` variants) decide the line it names.
WORD_LEVEL = hypothesis(
    "word_level", "Word level: ‖e(w)‖² tracks IC(w) with suitable subword composition "
    "(static vectors after Zipfian whitening)", f"{PAPER} (abstract); Oyama et al., EMNLP 2023")
CONDITIONS = hypothesis(
    "conditions", "The sufficient conditions hold in the model's own geometry: inner products "
    "track PMI (C1) and carry over to the diagonal (C2)", f"{PAPER} (two sufficient conditions)")
COMPOSITION = hypothesis(
    "composition", "Composition decides the correspondence: it holds for words of several "
    "subword tokens under sqrt_n and f_ind", f"{PAPER} (suitable composition functions)")
CER_GROWTH = hypothesis(
    "cer_growth", "Information grows linearly with length (CER): sqrt_n and f_ind grow "
    "linearly and monotonically, sum and mean do not", f"{PAPER}; Genzel & Charniak, ACL 2002")
FIXED_POINTS = hypothesis(
    "fixed_points", "Non-compositional states converge to a fixed point: BERT's CLS and a "
    "decoder's EOS", f"{PAPER} (BERT CLS and LLaMA EOS)")
TEXT_LEVEL = hypothesis(
    "text_level", "Text level: ‖e(t)‖² tracks the text's surprisal under compositional pooling",
    f"{PAPER} (information content of texts)")
