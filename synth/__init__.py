"""synth: terminal tasks in three stages (draft -> implement -> verify), task families,
Harbor and Terminal-Bench 1 export/import. `run_synth` is the entry point."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synth.pipeline import SynthReport

__all__ = ["SynthReport", "run_synth"]


def run_synth(*args: Any, **kwargs: Any) -> SynthReport:
    """See synth.pipeline.run_synth (imported lazily: `import synth` stays cheap)."""
    from synth.pipeline import run_synth as _run

    return _run(*args, **kwargs)
