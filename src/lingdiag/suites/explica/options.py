"""The ``-o`` options of ExpliCa."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lingdiag.suites.explica.prompts import MAX_NEW_TOKENS


class Options(BaseModel):
    """``-o`` options of ExpliCa."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompts: str | None = None
    """A YAML file of more prompt variants (layout of ``prompts.yaml``)."""
    prompt_rating: str | None = None
    """The rating prompt variant (default: the file's ``default``)."""
    prompt_cloze: str | None = None
    prompt_mc: str | None = None
    max_new_tokens: int = Field(default=MAX_NEW_TOKENS, ge=1)
    format: Literal["chat", "raw"] = "chat"
    """``chat``: one user turn through the chat template; ``raw``: the prompt text as is."""
    ties: Literal["order", "miss"] = "order"
    """Rating ties: broken in the gold order, or counted as the label ``tie`` (a miss)."""

    def variant(self, task: str) -> str | None:
        """The chosen prompt variant of ``task``, if any."""
        return {"rating": self.prompt_rating, "cloze": self.prompt_cloze, "mc": self.prompt_mc}[task]
