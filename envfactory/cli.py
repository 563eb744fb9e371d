"""The envfactory command line: the composition root, and nothing else.

One grammar, nouns then verbs:

    envfactory run | doctor | version | worker
    envfactory images build|ls|prune
    envfactory envs   launch|check|gc|serve
    envfactory tasks  ls|show|export|import|mine|synth|families
    envfactory runs   eval|ls|show
    envfactory policy serve|train|eval

The commands live where their work does (envfactory/*_cli.py, envfactory/mainjob.py,
repolaunch/cli.py, synth/cli.py, policy/cli.py, harness/serve_cli.py); this module only
mounts them. The spellings of the last release (`eval`, `launch`, `import`, `mine`,
`check-env`, `gc`, `serve`, `registry ...`, `synth ...`) stay as hidden aliases for one more.

Global options are generated from `envs.config.Settings` (one per field, each also
`ENVFACTORY_<FIELD>`), plus `--debug` and `--version`. Every command has `--json`; failures
are one line and an exit code (envs/clikit.py).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any, Optional

import typer

from envs.clikit import DEBUG_ENV, out, run_app
from envs.config import Settings, reset_settings_cache


def _typer(help_: str, **kw: Any) -> typer.Typer:
    return typer.Typer(help=help_, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, **kw)


app = _typer("A verifiable agent environment factory.", name="envfactory")
images_app = _typer("Base and language toolchain images.")
envs_app = _typer("Environments: build one from a repository, check, clean up, serve.")
tasks_app = _typer("Tasks of both kinds: SWE tasks (mined, imported) and terminal tasks "
                   "(synthesized): list, show, export, import, mine, synth.")
runs_app = _typer("Runs: evaluate predictions; list and show what ran.")


def _mount() -> None:
    from envfactory import envs_cli, mainjob, runs_cli, tasks_cli
    from harness.serve_cli import serve_command
    from policy.cli import app as policy_app
    from repolaunch import cli as repolaunch_cli
    from synth import cli as synth_cli

    app.command("run")(mainjob.run)
    app.command("doctor")(envs_cli.doctor)
    app.command("worker")(envs_cli.worker)

    images_app.command("build")(envs_cli.images_build)
    images_app.command("ls")(envs_cli.images_ls)
    images_app.command("prune")(envs_cli.images_prune)

    envs_app.command("launch")(envs_cli.launch)
    envs_app.command("check")(envs_cli.check_env_cmd)
    envs_app.command("gc")(envs_cli.gc)
    envs_app.command("serve")(serve_command)

    tasks_app.command("ls")(tasks_cli.tasks_ls)
    tasks_app.command("show")(tasks_cli.tasks_show)
    tasks_app.command("export")(tasks_cli.tasks_export)
    tasks_app.command("import")(tasks_cli.tasks_import)
    tasks_app.command("mine")(repolaunch_cli.mine_cmd)
    tasks_app.command("synth")(synth_cli.synthesize)
    tasks_app.command("families")(synth_cli.families_cmd)

    runs_app.command("eval")(runs_cli.eval_cmd)
    runs_app.command("ls")(runs_cli.runs_ls)
    runs_app.command("show")(runs_cli.runs_show)

    app.add_typer(images_app, name="images")
    app.add_typer(envs_app, name="envs")
    app.add_typer(tasks_app, name="tasks")
    app.add_typer(runs_app, name="runs")
    app.add_typer(policy_app, name="policy")

    # The last release's spellings, hidden: they keep working for one more release.
    app.command("eval", hidden=True)(runs_cli.eval_cmd)
    app.command("launch", hidden=True)(envs_cli.launch)
    app.command("import", hidden=True)(tasks_cli.build_import)
    app.command("mine", hidden=True)(repolaunch_cli.mine_cmd)
    app.command("check-env", hidden=True)(envs_cli.check_env_cmd)
    app.command("gc", hidden=True)(envs_cli.gc)
    app.command("serve", hidden=True)(serve_command)
    app.add_typer(repolaunch_cli.registry_app, name="registry", hidden=True)
    app.add_typer(synth_cli.app, name="synth", hidden=True)


# --------------------------------------------------------------------------- global options


def _version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import version

        out.print(f"envfactory {version('envfactory')}")
        raise typer.Exit()


def _settings_options(**values: Optional[str]) -> None:
    for name, value in values.items():
        if value is not None:
            os.environ[f"ENVFACTORY_{name.upper()}"] = str(value)
    reset_settings_cache()
    # Checked here, before any command does engine or image work: a bad value is one line.
    from envs.config import get_settings

    get_settings()


def _build_callback() -> Callable[..., None]:
    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=typer.Context)]
    for name, field in Settings.model_fields.items():
        params.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str],
            default=typer.Option(None, f"--{name.replace('_', '-')}",
                                 help=f"{field.description} (env ENVFACTORY_{name.upper()})",
                                 show_default=False)))
    params.append(inspect.Parameter(
        "debug", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
        default=typer.Option(False, "--debug", help="print the traceback of a failure")))
    params.append(inspect.Parameter(
        "version", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
        default=typer.Option(False, "--version", callback=_version_callback, is_eager=True,
                             help="print the version and exit")))

    def callback(ctx: typer.Context, debug: bool = False, version: bool = False,
                 **values: Optional[str]) -> None:
        if debug:
            os.environ[DEBUG_ENV] = "1"
        _settings_options(**values)

    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__doc__ = "A verifiable agent environment factory."
    return callback


app.callback()(_build_callback())


@app.command("version")
def version_cmd() -> None:
    """Print the version."""
    _version_callback(True)


_mount()


def main() -> None:
    run_app(app)


if __name__ == "__main__":
    main()
