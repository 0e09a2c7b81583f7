"""The bodies of the static-vs-live boundary tables (llm2jev's and vLLM's): a choice of n
options, a score of n levels, a request of n nouls."""

from __future__ import annotations


def choice(n: int) -> dict:
    return {
        "state": "Pick one.",
        "questions": {"pick": {"type": "choice", "criteria": {f"o{i}": None for i in range(n)}}},
    }


def score(n: int) -> dict:
    return {
        "state": "Rate it.",
        "questions": {"rate": {"type": "score", "criteria": [f"level {i}" for i in range(n)]}},
    }


def questions(n: int) -> dict:
    return {"state": "x", "questions": {f"q{i}": {"type": "noul"} for i in range(n)}}
