"""Alembic migrations of the registry (see envs/registry.py, which runs them on open).

To add one after changing the tables in envs/registry.py:

    python -c "from alembic import command; from envs.registry import migration_config; \
command.revision(migration_config(url='sqlite:///scratch.sqlite'), 'what changed', autogenerate=True)"

then read and fix the generated file under versions/ (autogenerate is a draft, not a truth).
"""
