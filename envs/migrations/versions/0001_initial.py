"""The initial registry: images, environments, swe_tasks, terminal_tasks, runs, attempts.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

Written out by hand rather than imported from envs/registry.py: a migration is a snapshot
of the schema at its revision, and must not change when the models do.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _utc() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "images",
        sa.Column("tag", sa.String(512), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("language", sa.String(32), nullable=True),
        sa.Column("parent", sa.String(512), nullable=True),
        sa.Column("content_hash", sa.String(128), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=True),
        sa.Column("versions", sa.JSON(), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.PrimaryKeyConstraint("tag", name="pk_images"),
    )
    op.create_index("ix_images_kind", "images", ["kind"])
    op.create_index("ix_images_language", "images", ["language"])

    op.create_table(
        "environments",
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("language", sa.String(32), nullable=False),
        sa.Column("image", sa.String(512), nullable=True),
        sa.Column("fingerprint", sa.String(128), nullable=True),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.Column("updated_at", _utc(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_environments"),
    )
    op.create_index("ix_environments_language", "environments", ["language"])

    op.create_table(
        "swe_tasks",
        sa.Column("instance_id", sa.String(255), nullable=False),
        sa.Column("repo", sa.String(255), nullable=False),
        sa.Column("language", sa.String(32), nullable=True),
        sa.Column("base_commit", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("created_at", sa.String(64), nullable=False),
        sa.Column("env_name", sa.String(255), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("instance_id", name="pk_swe_tasks"),
    )
    op.create_index("ix_swe_tasks_repo", "swe_tasks", ["repo"])
    op.create_index("ix_swe_tasks_language", "swe_tasks", ["language"])
    op.create_index("ix_swe_tasks_kind", "swe_tasks", ["kind"])

    op.create_table(
        "terminal_tasks",
        sa.Column("task_id", sa.String(255), nullable=False),
        sa.Column("family", sa.String(128), nullable=False),
        sa.Column("category", sa.String(128), nullable=False),
        sa.Column("difficulty", sa.String(32), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("task_id", name="pk_terminal_tasks"),
    )
    op.create_index("ix_terminal_tasks_family", "terminal_tasks", ["family"])
    op.create_index("ix_terminal_tasks_category", "terminal_tasks", ["category"])

    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("target", sa.String(512), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("failure_kind", sa.String(32), nullable=False),
        sa.Column("resolved", sa.Boolean(), nullable=True),
        sa.Column("started_at", _utc(), nullable=True),
        sa.Column("finished_at", _utc(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name="pk_runs"),
    )
    op.create_index("ix_runs_kind", "runs", ["kind"])
    op.create_index("ix_runs_target", "runs", ["target"])
    op.create_index("ix_runs_status", "runs", ["status"])

    op.create_table(
        "attempts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(255), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("command", sa.Text(), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("output_tail", sa.Text(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("created_at", _utc(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_attempts"),
    )
    op.create_index("ix_attempts_run_id", "attempts", ["run_id"])


def downgrade() -> None:
    for table in ("attempts", "runs", "terminal_tasks", "swe_tasks", "environments", "images"):
        op.drop_table(table)
