"""Answer text → what a suite scores; anything not clearly one answer is ``UNPARSED``.

``labels`` (free text or JSON → a label of the suite's vocabulary), ``choice`` (the option
letter of a multiple-choice answer), ``rating`` (a numeric rating). Parsers see the answer text
only, never a model's thinking.
"""
