"""Variant axes shared by the claim declarations (docs/theory.md §4, §5, §7)."""

from normtest.claims import MODEL_STATES, declare_line

#: Compositions of subword or text tokens that claims expand over (docs/theory.md §4).
COMPOSITIONS = ("sum", "mean", "sqrt_n", "f_ind", "f_joint", "f_inf", "f_avg", "first", "last")
#: Compositions plus the model's own states, for text and prefix claims.
POOLINGS = (*COMPOSITIONS, *MODEL_STATES)
#: Representations: the input embedding rows, or the last hidden layer.
REPRESENTATIONS = ("input", "last")
#: Geometry transforms fitted on the word sample (docs/theory.md §5).
TRANSFORMS = ("raw", "center_uniform", "center_zipf", "whiten_uniform", "whiten_zipf")

PAPER = "Amigó et al., Findings of EMNLP 2025"

#: The paper's abstract, in the words each scorecard line rests on.
ABSTRACT_WORD_LEVEL = ("At the word embedding level, models satisfy the sufficient conditions and "
                       "show a strong correspondence when certain subword composition functions "
                       "are applied.")
ABSTRACT_CONDITIONS = ("We formally derive two sufficient theoretical conditions for this "
                       "correspondence to hold in embedding models. […] models satisfy the "
                       "sufficient conditions")
ABSTRACT_GROWTH = ("we explore whether embedding mechanisms exhibit a linearly monotonic increase "
                   "in information content as text length increases. […] Only scaled embedding "
                   "averages proposed in this paper and certain information-theoretic "
                   "composition functions preserve the correspondence.")
ABSTRACT_FIXED_POINTS = ("Some non-compositional representations—such as the CLS token in BERT or "
                         "the EOS token in LLaMA—tend to converge toward a fixed point. The CLS "
                         "token in ModernBERT, however, exhibits behavior that aligns more "
                         "closely with the CER hypothesis.")
ABSTRACT_TEXTS = ("the correspondence between the squared norm of an embedding and the "
                  "information content of the text it represents […] Only scaled embedding "
                  "averages proposed in this paper and certain information-theoretic composition "
                  "functions preserve the correspondence.")

#: The reading a line with two readings is decided under, and its other reading: the paper
#: speaks of the models' own geometry; the framework it builds on (Oyama et al.) centres it
#: (Zipfian centring: ``transform=center_zipf``).
RAW_GEOMETRY = "in raw geometry"
ZIPF_CENTRED = "after centring"

# The scorecard: one line per hypothesis of the paper, in the paper's order. A claim's
# confirmatory rows (its ``expected`` variants) decide the line it names.
WORD_LEVEL = declare_line(
    "word_level", "Word level: ‖e(w)‖² tracks IC(w) with suitable subword composition "
    "(static vectors after Zipfian whitening)", f"{PAPER} (abstract); Oyama et al., EMNLP 2023",
    words=ABSTRACT_WORD_LEVEL, short="Word level")
CONDITIONS = declare_line(
    "conditions", "The sufficient conditions hold in the model's own geometry: inner products "
    "track PMI (C1) and carry over to the diagonal (C2)", f"{PAPER} (two sufficient conditions)",
    words=ABSTRACT_CONDITIONS, short="Conditions (C1, C2)", reference=RAW_GEOMETRY)
COMPOSITION = declare_line(
    "composition", "Composition decides the correspondence: suitable compositions (sqrt_n, "
    "f_ind) keep it where the plain mean loses it, over all words and over words of several "
    "subword tokens", f"{PAPER} (certain subword composition functions)",
    words=ABSTRACT_WORD_LEVEL, short="Composition decides")
CER_GROWTH = declare_line(
    "cer_growth", "Information grows linearly with length (CER): sqrt_n and f_ind grow "
    "linearly and monotonically, sum and mean do not", f"{PAPER}; Genzel & Charniak, ACL 2002",
    words=ABSTRACT_GROWTH, short="Linear growth (CER)")
FIXED_POINTS = declare_line(
    "fixed_points", "Non-compositional states converge to a fixed point: BERT's CLS and a "
    "decoder's EOS", f"{PAPER} (BERT CLS and LLaMA EOS)", words=ABSTRACT_FIXED_POINTS,
    short="Fixed points")
TEXT_LEVEL = declare_line(
    "text_level", "Text level: ‖e(t)‖² tracks the text's surprisal under compositional pooling",
    f"{PAPER} (information content of texts)", words=ABSTRACT_TEXTS, short="Text level")
