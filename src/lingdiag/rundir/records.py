"""What a record keeps of each request and response: ``prompts`` as ``items.jsonl`` holds them and
``outputs`` in their typed form (``lingdiag.records.Output``), the one place either is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lingdiag.records import (
    ChatMessage,
    FailedOutput,
    Generation,
    LoglikelihoodRequest,
    Output,
    Request,
    Response,
    ScoreOutput,
    TextOutput,
)
from lingdiag.scoring import LINGDIAG


def _messages_json(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def prompt_json(r: Request) -> Any:
    """A request as its record's ``prompts`` holds it: chat turns, raw text, or a scored continuation."""
    if isinstance(r, LoglikelihoodRequest):
        if r.messages:
            chat: dict[str, Any] = {"messages": _messages_json(r.messages), "continuation": r.continuation}
            if r.assistant_prefix:  # the replayed thinking the continuation was scored after
                chat["assistant_prefix"] = r.assistant_prefix
            return chat
        prompt = {"context": r.context, "continuation": r.continuation}
        if r.policy != LINGDIAG:  # records of the default policy stay as they were before policies
            prompt["policy"] = r.policy.name
        return prompt
    if r.messages:
        return _messages_json(r.messages)
    return r.prompt


def output_of(r: Response, per_token: bool = False) -> Output:
    """A response as its record's ``outputs`` holds it (with ``per_token``, ``--per-token``: a
    log-likelihood's per-token log-probs and their character spans too).
    """
    if isinstance(r, Generation):
        if r.error is not None:
            return FailedOutput(r.error)
        # A prompt not rendered by the chat template as given says so beside its answer, and a
        # model that thought keeps its thinking beside it; other answers stay plain text.
        return TextOutput(r.text, rendering=r.rendering, reasoning=r.reasoning, reasoning_tokens=r.reasoning_tokens,
                          unfinished=r.unfinished or None, rendered_prompt=r.rendered_prompt)
    if per_token and r.token_logprobs is not None and r.token_spans is not None:
        return ScoreOutput(r.logprob, r.n_tokens, r.is_greedy, tuple(r.token_logprobs),
                           tuple((int(a), int(b)) for a, b in r.token_spans))
    return ScoreOutput(r.logprob, r.n_tokens, r.is_greedy)
