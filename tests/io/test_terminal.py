"""Untrusted text on the terminal: control characters escaped, rich markup shown literally."""

from rich.console import Console

from lingdiag.io.terminal import markup_safe, plain, plain_lines, progress_line


def test_plain_escapes_every_control_character_and_lone_surrogate() -> None:
    assert plain("a\nb\r\tc\x1b[2J\x7f\x85\u2028\ud800") == "a\\nb\\r\\tc\\x1b[2J\\x7f\\x85\\u2028\\ud800"
    assert plain("Ünïcödé → fine") == "Ünïcödé → fine"
    assert plain_lines("| a\x1b |\n| b |") == "| a\\x1b |\n| b |"


def test_markup_safe_prints_markup_literally() -> None:
    console = Console(record=True, width=200, color_system=None)
    console.print(f"rater {markup_safe('[link=http://evil.example]click[/link][bold]x')}")
    assert console.export_text().strip() == "rater [link=http://evil.example]click[/link][bold]x"


def test_progress_line_has_one_wording_for_runs_and_training() -> None:
    assert progress_line("zero-shot", 10, 100, 2.0, "items") == "zero-shot: 10/100 items, 2.00 items/s, ETA 0:00:45"
    assert progress_line("lora", 1, 7201, 1.0) == "lora: 1/7201, 1.00/s, ETA 2:00:00"
    assert progress_line("x", 0, 5, 0.0) == "x: 0/5, 0.00/s, ETA 0:00:00"
