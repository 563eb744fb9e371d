"""`envfactory policy serve|eval|train`: the bundled policy from the command line.

Every command takes --json (stdout then carries only JSON) and fails with one line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from envs.clikit import command, err, out
from envs.config import get_settings
from envs.errors import InfraError, UserError, unknown
from policy.model import MODELS, require_extra

app = typer.Typer(help="The bundled policy: serve it, evaluate it, train it.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

DATA_POLICY = Path(__file__).resolve().parent.parent / "data" / "policy"


@app.command()
@command
def serve(
    model: str = typer.Option(None, "--model", help="smollm2 or tiny (ENVFACTORY_POLICY_MODEL)"),
    ranks: int = typer.Option(2, "--ranks", help="server processes behind the router"),
    adapter: Optional[Path] = typer.Option(None, "--adapter", help="a trained adapter"),
    routing: str = typer.Option("affine", "--routing", help="affine or random"),
    device: str = typer.Option(None, "--device", help="cpu or cuda (ENVFACTORY_POLICY_DEVICE)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Start N servers and the router; print the OpenAI base URL; serve until Ctrl-C."""
    from policy.cluster import Cluster

    s = get_settings()
    if (model or s.policy_model) not in MODELS:
        raise unknown("policy model", model or s.policy_model, MODELS, field="--model")
    require_extra()
    with Cluster(model=model or s.policy_model, ranks=ranks, adapter=adapter, routing=routing,
                 device=device or s.policy_device) as c:
        info = {"url": c.url + "/v1", "ranks": c.upstreams, "logs": str(c.log_dir)}
        if as_json:
            sys.stdout.write(json.dumps(info) + "\n")
            sys.stdout.flush()
        else:
            out.print(f"serving {model or s.policy_model} at {info['url']} "
                      f"({ranks} ranks; set ENVFACTORY_LLM_URL to it); Ctrl-C stops")
        try:
            while all(p.poll() is None for p, _, _ in c.procs):
                time.sleep(1)
        except KeyboardInterrupt:
            return
        raise InfraError(f"a policy process exited; see {c.log_dir}")


@app.command("eval")
@command
def evaluate(
    recipe: str = typer.Option("bundled", "--recipe", help="which held-out splits"),
    adapter: list[Path] = typer.Option([], "--adapter",
                                       help="NAME=PATH (repeat); 'base' is always first"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """pass@1 on held-out terminal tasks (by family and by parameters), all models in one run."""
    from policy.recipes import compare, get_recipe

    require_extra()
    models: dict[str, Path | None] = {"base": None}
    for item in adapter:
        name, _, path = str(item).partition("=")
        if not path:
            raise UserError("expected NAME=PATH", field="--adapter", value=str(item))
        if not Path(path).is_file():
            raise UserError(f"no file at {path}", field=f"--adapter {name}")
        models[name] = Path(path)
    result = compare(get_recipe(recipe), models, log=lambda m: err.print(m))
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    for name, row in result["table"].items():
        lo, hi = row["ci95"]
        split = row["solved_by_split"]
        out.print(f"{name:10} pass@1 {row['pass@1']:.3f} ({row['solved']}/{row['n']}, "
                  f"95% CI {lo:.3f}-{hi:.3f}; solved: {split['family']} held out by family, "
                  f"{split['parameters']} by parameters)")
    for pair, m in result["margins"].items():
        out.print(f"{pair}: {m['margin']:+.3f} (95% CI {m['lo']:+.3f} to {m['hi']:+.3f})")


@app.command()
@command
def train(
    recipe: str = typer.Option("bundled", "--recipe", help="bundled (SmolLM2) or ci (tiny)"),
    mode: str = typer.Option("sync", "--mode", help="sync (colocated) or async"),
    out_dir: Path = typer.Option(DATA_POLICY, "--out", help="where the adapter is written"),
    sft_adapter: Optional[Path] = typer.Option(
        None, "--sft-adapter", help="start RL from this recipe's SFT adapter (SFT not rerun)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """SFT on reference trajectories, then RL against live servers; writes the adapter."""
    from policy.recipes import get_recipe, train_recipe

    require_extra()
    if sft_adapter is not None and not sft_adapter.is_file():
        raise UserError(f"no file at {sft_adapter}", field="--sft-adapter")
    summary = train_recipe(get_recipe(recipe), out_dir, mode=mode, sft_adapter=sft_adapter,
                           log=lambda m: err.print(m, highlight=False))
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        out.print(f"adapter: {summary['adapter']} ({summary['wall_s']:.0f}s)")
