"""``lingdiag score <suite>`` for suites whose answers are labels: an outside answer file →
the suite's own metrics and table (and optionally a run directory for reports).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from lingdiag.cli.options import DEFAULT_DATASET, dataset_option, json_option, out_option
from lingdiag.engine.finish import finish_imported
from lingdiag.errors import DatasetError
from lingdiag.io.importing import IMPORTED, import_labels
from lingdiag.io.paths import sha256_file
from lingdiag.io.terminal import plain_lines
from lingdiag.records import ResultRow, dumps
from lingdiag.rundir import write_imported
from lingdiag.suite import Suite


def label_score_command(suite: Suite) -> Callable[..., None]:
    """The score command of ``suite`` (which has ``parse_answer``)."""
    parse = suite.parse_answer
    assert parse is not None

    def score(
        scores: Annotated[Path, typer.Option("--scores", help="CSV/TSV/JSONL: an id column and an answer column.")],
        score_col: Annotated[str, typer.Option(help="Column holding the answer (raw text or a label).")] = "answer",
        id_col: Annotated[str, typer.Option(help="Column holding the dataset item id.")] = "id",
        dataset: Annotated[str | None, dataset_option(f"The dataset the answers refer to "
                                                      f"{DEFAULT_DATASET}.")] = None,
        out: Annotated[Path | None, out_option("Also write a run directory (for report).")] = None,
        as_json: Annotated[bool, json_option("Print metrics and unmatched rows as JSON.")] = False,
    ) -> None:
        """Metrics of answers produced elsewhere, parsed and scored exactly as a run's."""
        dataset = dataset or suite.default_dataset
        items = suite.load(dataset).items
        result = import_labels(scores, items, score_col=score_col, parse=parse, id_col=id_col)
        if not result.records:
            raise DatasetError(f"no row matched an item of dataset {dataset!r} ({len(result.unmatched)} unmatched "
                               f"rows; is --id-col {id_col!r} right?); nothing to score", path=scores)
        m = suite.condition_metrics(result.records) if result.records else {}
        if out is not None and result.records:
            write_imported(out, suite=suite.name, model=scores.stem, dataset=dataset, records=result.records,
                           provenance={"file": str(scores), "sha256": sha256_file(scores), "score_col": score_col,
                                       "id_col": id_col}, source=suite.source)
        if as_json:
            print(dumps({"metrics": m, "matched_items": len(result.records), "unmatched": result.unmatched,
                              "missing_items": result.missing, "repeated_rows": result.repeated},
                             indent=2, sort_keys=True, default=str))
            return
        if result.records:
            print(plain_lines(suite.table([ResultRow(scores.stem, IMPORTED, dict(result.records[0].axes), m)])))
        print(f"matched items: {len(result.records)} of {len(items)}; unmatched rows: {len(result.unmatched)}; "
              f"repeated rows ignored: {result.repeated}", file=sys.stderr)

    return score


def finishing(suite: Suite, command: Callable[..., None]) -> Callable[..., None]:
    """A score command (a suite's own or :func:`label_score_command`), then, where it wrote a run
    directory (``--out``), that run's end as every run ends (``lingdiag.engine.finish``): the one place an
    imported run is ended, here since suites may not import ``lingdiag.engine.finish`` (import contracts).
    """

    @functools.wraps(command)  # typer reads the options from the wrapped signature
    def score(**options: Any) -> None:
        command(**options)
        if options.get("out") is not None:
            finish_imported(options["out"], suite)

    return score
