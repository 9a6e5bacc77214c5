"""Shipped prompt sets: short prompts whose content type is known (METHOD §5: with
speculative decoding on, code and prose run at different speeds, so a figure names its content).
"""

from __future__ import annotations

from reporter.errors import UsageError
from reporter.ingest.limits import read_bytes

PROMPT_SETS: dict[str, tuple[str, ...]] = {
    "code": (
        "Write a Python function that parses an ISO 8601 date string and returns a datetime.",
        "Write a Python class for a least-recently-used cache with get and put methods.",
        "Write a Python function that merges two sorted lists into one sorted list.",
        "Write a Python function that reads a CSV file and returns the sum of one column.",
    ),
    "prose": (
        "Explain in plain prose how the attention mechanism of a transformer works.",
        "Describe a walk along a river on an autumn morning, in a few paragraphs.",
        "Write a short essay on why measurements should be repeated before they are trusted.",
        "Tell the story of a lighthouse keeper who finds a message in a bottle.",
    ),
}
DEFAULT_PROMPT = PROMPT_SETS["prose"][0]


def load_prompts(
    prompt: str | None, prompt_file: str | None, prompt_set: str | None
) -> tuple[tuple[str, ...], str]:
    """The prompts to cycle through, and the content label they imply."""
    given = [x for x in (prompt, prompt_file, prompt_set) if x is not None]
    if len(given) > 1:
        raise UsageError(
            "--prompt, --prompt-file and --prompt-set exclude each other; expected one of them"
        )
    if prompt is not None:
        if not prompt.strip():
            raise UsageError("--prompt is empty; expected some text")
        return (prompt,), "unknown"
    if prompt_file is not None:
        try:
            text = read_bytes(prompt_file, "prompt file").decode("utf-8")
        except OSError as exc:
            raise UsageError(
                f"{prompt_file}: cannot read the prompt file: {exc.strerror}"
            ) from None
        except UnicodeDecodeError:
            raise UsageError(f"{prompt_file}: not UTF-8 text; expected a text file") from None
        # blank-line separated prompts; a file without blank lines is one prompt
        parts = tuple(p.strip() for p in text.split("\n\n") if p.strip())
        if not parts:
            raise UsageError(f"{prompt_file}: no prompt in the file; expected text")
        return parts, "unknown"
    if prompt_set is not None:
        if prompt_set not in PROMPT_SETS:
            raise UsageError(
                f"unknown prompt set {prompt_set!r}; expected one of {', '.join(PROMPT_SETS)}"
            )
        return PROMPT_SETS[prompt_set], prompt_set
    return PROMPT_SETS["prose"], "prose"
