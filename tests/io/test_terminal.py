"""Untrusted text on the terminal: control characters escaped, rich markup shown literally."""

from rich.console import Console

from lingdiag.io.terminal import markup_safe, plain, plain_lines


def test_plain_escapes_every_control_character_and_lone_surrogate() -> None:
    assert plain("a\nb\r\tc\x1b[2J\x7f\x85\u2028\ud800") == "a\\nb\\r\\tc\\x1b[2J\\x7f\\x85\\u2028\\ud800"
    assert plain("Ünïcödé → fine") == "Ünïcödé → fine"
    assert plain_lines("| a\x1b |\n| b |") == "| a\\x1b |\n| b |"


def test_markup_safe_prints_markup_literally() -> None:
    console = Console(record=True, width=200, color_system=None)
    console.print(f"rater {markup_safe('[link=http://evil.example]click[/link][bold]x')}")
    assert console.export_text().strip() == "rater [link=http://evil.example]click[/link][bold]x"
