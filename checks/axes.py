"""Variant axes shared by the claim declarations (docs/theory.md §4, §5, §7)."""

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
