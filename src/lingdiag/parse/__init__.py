"""Answer text → what a suite scores; anything not clearly one answer is ``UNPARSED``.

The answer reader (``reader``: one pipeline of named stages for labels and choice letters, in every
language) and its stages: ``normalise`` (wrapping off), ``scan`` (label mentions, letters and the
language's words), ``echo`` (echoed lists, invented next items), ``locate`` (where the answer
commits, by rule), ``refuse`` (what takes it back, by reason); ``language`` (the words of each
language, built in or declared). On top: ``labels`` (free text or JSON → a label of the suite's
vocabulary), ``choice`` (the option letter of a multiple-choice answer), ``judge`` (the question a
judge model is asked and how its reply is read), ``rating`` (a numeric rating), ``thinking`` (a
reasoning model's trace split from its answer), ``revise`` (an answer that revises itself read from its
last revision), ``weigh`` (a final answer after a discussion of
the labels that commits to nothing else). Parsers see the answer text only, never a model's thinking.
"""
