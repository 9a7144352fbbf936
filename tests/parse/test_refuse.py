"""Each refusal of the reader's last stage, by name: whatever in the whole answer takes the
committed label back (its clause, the clause after it, a later mention, the whole answer).
"""

import pytest

from lingdiag.parse.labels import parse_label
from lingdiag.parse.language import ENGLISH, language
from lingdiag.parse.reader import REASONS, read
from lingdiag.parse.scan import Vocabulary
from lingdiag.records import UNPARSED

NLI = Vocabulary.of_labels(("True", "False", "Unknown"), {"wahr": "True", "falsch": "False", "对": "True",
                                                          "错": "False", "不确定": "Unknown"})
ABCD = Vocabulary.of_options({"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"})

REFUSED = [
    ("", "empty"),
    ("The premise describes a process.", "no-answer"),
    ("True / False / Unknown", "echoed-list"),
    ("Answer: True or False", "several-labels"),
    ("Unknown. Either True or Unknown could hold.", "several-labels"),  # a later list naming the answer
    ("Answer: True\n\nAnswer: False", "several-answers"),
    ("True: No\nFalse: No\nUnknown: Yes", "verdicts"),
    ("True, but I'm not sure.", "doubted"),
    ("It depends on the premise.", "doubted"),
    ("I don't believe the answer is True here.", "negated"),
    ("True, not really.", "negated"),
    ("Wahr: nein.", "verdicts"),
    ("True? No.", "questioned"),
    ("I'm asking whether the answer is True", "questioned"),
    ("Probably True.", "hedged"),
    ("The answer is True only if he finished.", "conditional"),
    ("If he finished, the answer is True.", "conditional"),
    ("True, but only partially.", "contrasted"),
    ("True. However, it might not hold.", "contrasted"),
    ("True seems unlikely here.", "hedged"),
    ("True is incorrect.", "judged"),
    ("True is what the premise suggests.", "judged"),  # a copula after the label, no affirmation
    ("True. That is wrong, though.", "judged"),
    ("True — or rather, not necessarily.", "retracted"),
    ("The answer is False. Wait, the premise says he finished.", "retracted"),
    ("The answer is False. Wait, it is True? No.", "questioned"),  # a questioned revision commits to nothing
    ("The answer is False. Actually, hmm.", "retracted"),  # a revision committing to nothing
    ("对；不对。", "retracted"),
    ("False. True is also defensible.", "another-label"),
    ("True, not quite False.", "another-label"),  # in the answer's own sentence another label refuses,
    # unless struck out in a clause of its own (test_labels: True, not False)
    ("Answer: True. Is that right?", "questioned"),
]


@pytest.mark.parametrize(("text", "reason"), REFUSED)
def test_refusals_are_named(text: str, reason: str) -> None:
    reading = read(text, NLI, language("zh") if any("\u4e00" <= c <= "\u9fff" for c in text) else ENGLISH)
    assert (reading.label, reading.reason) == (UNPARSED, reason)


def test_every_reason_is_documented_and_reached() -> None:
    assert {reason for _, reason in REFUSED} == set(REASONS)


@pytest.mark.parametrize(("text", "label"), [
    # Denied, judged or questioned mentions of other labels agree with the answer.
    ("False. It is not true that he finished.", "False"),
    ("B. (A) is incorrect.", "B"),
    ("B\n\nA is wrong because it needs an endpoint.", "B"),
    ("The answer is B; A and C are wrong.", "B"),
    ("Unknown. It could be true or false.", "Unknown"),  # a list of other labels is reasoning
    # A label before the answer is reasoning: it may be questioned or mentioned.
    ("Is the hypothesis true? The premise only says he was building. Answer: Unknown", "Unknown"),
    ("The hypothesis says \"True\" but the answer is Unknown.", "Unknown"),
    # A reason's clause is not the label's: its negations and hedges explain it.
    ("False because he might not have finished.", "False"),
    ("Unknown, since it is unclear if he finished.", "Unknown"),
    ("True, no doubt.", "True"),
])
def test_what_agrees_with_the_answer_is_kept(text: str, label: str) -> None:
    vocab = ABCD if label in "ABCD" else NLI
    assert read(text, vocab).label == label


@pytest.mark.parametrize(("first", "other"), [(a, b) for a in ("True", "False", "Unknown")
                                              for b in ("True", "False", "Unknown") if a != b])
def test_another_label_struck_out_keeps_the_answer(first: str, other: str) -> None:
    """``X, not Y.`` and ``X (not Y)`` give X; ``X, not quite Y`` and ``X and not Y`` give nothing."""
    labels = ("True", "False", "Unknown")
    for text in (f"{first}, not {other}.", f"Answer: {first} (not {other})", f"The answer is {first}, not {other}."):
        assert parse_label(text, labels, lang=ENGLISH)[0] == first, text
    for text in (f"{first}, not quite {other}.", f"{first}, not {other}?", f"{first}, {other}."):
        assert parse_label(text, labels, lang=ENGLISH)[0] == "unparsed", text


@pytest.mark.parametrize(("text", "code", "label"), [
    ("It's neither True nor False: Unknown.", "en", "Unknown"),  # the negation's labels are True and False
    ("I cannot say True or False, so: Unknown", "en", "Unknown"),
    ("Ce n'est ni vrai ni faux : inconnu.", "fr", "Unknown"),
    ("Weder wahr noch falsch: unbekannt.", "de", "Unknown"),
    ("Not Unknown: Unknown", "en", UNPARSED),  # a negation of the label itself still denies it
    ("It is not: True", "en", UNPARSED),
    ("It could be: True", "en", UNPARSED),
])
def test_a_negation_spent_on_other_labels_leaves_the_answer(text: str, code: str, label: str) -> None:
    aliases = {"fr": {"vrai": "True", "faux": "False", "inconnu": "Unknown"},
               "de": {"wahr": "True", "falsch": "False", "unbekannt": "Unknown"}}.get(code)
    assert parse_label(text, ("True", "False", "Unknown"), aliases=aliases, lang=language(code))[0] == label


@pytest.mark.parametrize(("text", "label"), [
    ("I choose B because A is wrong.", "B"),  # another option denied in the reason given for the answer
    ("B, since A is not telic.", "B"),
    ("B because A is also possible.", UNPARSED),  # offered there, not denied
    ("B because A is wrong and C is right.", UNPARSED),
    ("B because A is incorrect, or maybe C.", UNPARSED),
])
def test_another_option_denied_in_the_answers_reason_keeps_it(text: str, label: str) -> None:
    options = {"A": "in an hour", "B": "for an hour", "C": "at noon", "D": "by tomorrow"}
    assert read(text, Vocabulary.of_options(options), ENGLISH).label == label
