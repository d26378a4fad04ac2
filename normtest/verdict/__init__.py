"""From a measurement to a verdict: ``sampling`` (how a sample was drawn, and the effective
sample size), ``measurement`` (an estimate with its interval and the numbers behind it),
``result`` (criteria, verdicts and a claim's result) and ``formatting`` (how numbers and
verdicts are written).
"""
