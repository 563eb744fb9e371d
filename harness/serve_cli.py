"""The `envfactory serve` command (harness/serve.py); `python -m harness.serve_cli` runs it too."""

from __future__ import annotations

import typer


def serve_command(
    host: str = typer.Option("127.0.0.1", help="address to listen on (0.0.0.0: all)"),
    port: int = typer.Option(8000, help="TCP port"),
    token: str = typer.Option("", envvar="ENVFACTORY_SERVE_TOKEN", show_default=False,
                              help="bearer token clients must send (required)"),
    max_live: int = typer.Option(8, min=1, help="episodes holding a sandbox at once"),
    per_client: int = typer.Option(16, min=1, help="sessions (so live episodes) per client"),
    queue_timeout: float = typer.Option(30.0, min=0, help="seconds a reset waits for a slot "
                                        "when the pool is full, then it is refused (503)"),
    max_waiting: int = typer.Option(-1, help="resets that may wait at once (-1: 4*max-live)"),
    max_sessions: int = typer.Option(0, min=0, help="open sessions in all (0: max-live + "
                                     "max-waiting)"),
    idle_timeout: float = typer.Option(900.0, min=0, help="seconds before an idle HTTP MCP "
                                       "session is dropped (0: never)"),
    log_level: str = typer.Option("warning", help="uvicorn log level"),
) -> None:
    """Serve the episode API over HTTP/WebSocket (the OpenEnv protocol) for remote trainers."""
    from harness.serve import serve

    if not token:
        raise typer.BadParameter("a token is required (--token or ENVFACTORY_SERVE_TOKEN)",
                                 param_hint="--token")
    serve(host, port, token=token, max_live=max_live, per_client=per_client,
          queue_timeout=queue_timeout, max_waiting=None if max_waiting < 0 else max_waiting,
          max_sessions=max_sessions or None, idle_timeout=idle_timeout or None,
          log_level=log_level)


if __name__ == "__main__":
    typer.run(serve_command)
