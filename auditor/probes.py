"""The decision probes `verify --probe` names: one row per mode, with what it probes.

The CLI's `--probe` choices and help list are made from these rows (auditor.cli.choices); the
decoder's probe (auditor.decoder.orderprobe) reads the same names. Pure data: the CLI reads it at
start-up without loading the decoder.
"""

from __future__ import annotations

# name → what it probes (for the help list), in the order the help shows them; repeatable
# (`--probe order --probe scope`); auto and off stand alone
PROBES: dict[str, str] = {
    "auto": "the option order of choice questions with 3 or more options",
    "order": "the option order of every choice question",
    "scope": "the request asked with an empty and with an off-topic state",
    "criteria": "a noul's descriptions swapped, a choice's removed",
    "names": "option names replaced by neutral ids, descriptions kept",
    "off": "nothing",
}
DEFAULT_PROBE = "auto"
MODES = ("auto", "off")  # not probes themselves: which probes run
# what `eval --perturb` takes: every probe, each run on every row (scope once per request)
PERTURBATIONS = tuple(name for name in PROBES if name not in MODES)
