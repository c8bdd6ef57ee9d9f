"""The request classes and llama-swap's bands: the one definition of low, medium and high."""

from __future__ import annotations

LOW, MEDIUM, HIGH = 0, 1, 2

CLASS_NAMES = ("low", "medium", "high")

BAND_NAMES = ("batch", "normal", "interactive")

# The llama-swap anchors: 100 apart so an in-band offset (|offset| < 50) never crosses a band.
BAND_ANCHORS = (-100, 0, 100)

NAMED = {"low": LOW, "medium": MEDIUM, "high": HIGH}
