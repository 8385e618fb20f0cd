"""The answer's readings: named, pure functions from a prepared case to a decision, tried in the order of one registry.

Every answer names the reading that decided it and the readings tried before it (``Answer.decided_by``,
``Answer.steps``; ``llmwiki ask --why``). The lists are in ``registry``; the case they read in ``case``; the kinds of
reading in ``refusals``, ``comparisons``, ``statements`` and ``model``, each with its examples in
``tests/test_readings.py``. A new reading lands only with its figures from ``bench/readings.py`` on at least two
corpora other than the one that suggested it, and a test whose example fails without it beside a control.
"""

from llmwiki.read.readings.core import Decision, Reading, Recorded, Step, decide, recording

__all__ = ["Decision", "Reading", "Recorded", "Step", "decide", "recording"]
