"""The ``-o`` options of ExpliCa."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lingdiag.suites.explica.prompts import AUTHORS_MAX_NEW_TOKENS, AUTHORS_MODEL, MAX_NEW_TOKENS
from lingdiag.suites.explica.rules import MissingRatings, Ties


class Options(BaseModel):
    """``-o`` options of ExpliCa."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_source: Literal["authors", "paper"] = "authors"
    """``authors``: the prompts as the authors ran them (their result files' ``prompt`` column,
    replayed per row where available, else the same template shuffled by the run seed);
    ``paper``: lingdiag's variants of ``prompts.yaml`` (the default when one is chosen)."""
    authors_prompts: str | None = None
    """A directory in the layout of ``explica_results/`` whose prompts are replayed (default: the
    copy fetched by ``lingdiag data fetch explica --results``, if any)."""
    authors_model: str = AUTHORS_MODEL
    """Whose published prompts are replayed (the model part of the result file names)."""
    prompts: str | None = None
    """A YAML file of more prompt variants (layout of ``prompts.yaml``)."""
    prompt_rating: str | None = None
    """The rating prompt variant (default: the file's ``default``)."""
    prompt_cloze: str | None = None
    prompt_mc: str | None = None
    max_new_tokens: int | None = Field(default=None, ge=1)
    """Default: 5 under ``authors`` (the authors' local models; pass 50 for an API model, as they
    did for GPT), else 8."""
    format: Literal["chat", "raw"] | None = None
    """``chat``: one user turn through the chat template; ``raw``: the prompt text as is
    (default: ``raw`` under ``authors``, as the authors ran the open models, else ``chat``)."""
    ties: Ties = "alphabetical"
    """Rating ties: ``alphabetical`` (the authors'), ``gold-order`` or ``miss`` (see ``rules.py``)."""
    constrained_sampling: Literal["greedy", "sampled"] = "greedy"
    """Constrained decoding picks the best valid token (``greedy``, ours) or samples among the valid
    tokens, seeded by the run seed (``sampled``: what outlines 0.0.46 did, unseeded, for the
    authors' open models; their GPT runs were greedy)."""
    missing_ratings: MissingRatings = "keep"
    """Unreadable ratings (-1): ``keep`` them in the argmax (the authors') or ``drop`` them."""

    @model_validator(mode="before")
    @classmethod
    def _variants_imply_paper(cls, data: Any) -> Any:
        chosen = isinstance(data, dict) and any(data.get(k) for k in ("prompts", "prompt_rating", "prompt_cloze",
                                                                     "prompt_mc"))
        if chosen and "prompt_source" not in data:
            return {**data, "prompt_source": "paper"}
        if chosen and data["prompt_source"] == "authors":
            raise ValueError("prompt variants (prompts, prompt_<task>) apply to prompt_source=paper")
        return data

    @property
    def authors(self) -> bool:
        """Whether the prompts are the authors' as run."""
        return self.prompt_source == "authors"

    def new_tokens(self) -> int:
        """``max_new_tokens``, or its default for the prompt source."""
        return self.max_new_tokens or (AUTHORS_MAX_NEW_TOKENS if self.authors else MAX_NEW_TOKENS)

    def chat(self) -> bool:
        """Whether prompts go through the chat template (``format``, or its default)."""
        return (self.format or ("raw" if self.authors else "chat")) == "chat"

    def variant(self, task: str) -> str | None:
        """The chosen prompt variant of ``task``, if any."""
        return {"rating": self.prompt_rating, "cloze": self.prompt_cloze, "mc": self.prompt_mc}[task]
