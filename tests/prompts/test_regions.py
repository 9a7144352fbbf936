"""Region surprisal: SyntaxGym's joining and token-to-region rule, and the whitespace correction."""

from __future__ import annotations

import math

import pytest

from lingdiag.prompts.regions import assign, join, surprisals

LN2 = math.log(2)


def test_join_skips_empty_regions() -> None:
    j = join(["The cat", "", "sat", "down ."])
    assert j.text == "The cat sat down ."
    assert j.spans == ((0, 7), (7, 7), (8, 11), (12, 18))


def test_tokens_go_to_the_region_of_their_first_non_space_character() -> None:
    j = join(["The cat", "sat", "down"])
    # "The", " cat", " s", "at", " ", "down": a token of spaces goes with the next character.
    spans = [(0, 3), (3, 7), (7, 9), (9, 11), (11, 12), (12, 16)]
    assert assign(j, spans) == [0, 0, 1, 1, 2, 2]
    bits = surprisals(j, spans, [-LN2, -2 * LN2, -LN2, -LN2, -LN2, -3 * LN2])
    assert bits == pytest.approx([3.0, 2.0, 4.0])


def test_a_space_put_before_the_text_belongs_to_the_first_region() -> None:
    j = join(["A", "b"])
    assert assign(j, [(-1, 1), (1, 3)]) == [0, 1]


def test_whitespace_correction() -> None:
    j = join(["The cat", "sat"])
    spans = [(0, 3), (3, 7), (7, 11)]
    lps = [-1.0, -2.0, -0.5]
    ws = [-0.1, -0.2, -0.3, -0.4]  # log P(next token starts a word) before each token, and after the last
    plain = surprisals(j, spans, lps)
    corrected = surprisals(j, spans, lps, ws)
    # Region 0 starts the text (no leading space to refund) and pays for the word end after "cat";
    # region 1 gets back the word start its " sat" carried and pays for the end after it.
    assert corrected[0] == pytest.approx(plain[0] + 0.3 / LN2)
    assert corrected[1] == pytest.approx(plain[1] + (-0.3 + 0.4) / LN2)
    with pytest.raises(ValueError, match="need one more"):
        surprisals(j, spans, lps, ws[:3])
