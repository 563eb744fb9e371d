"""Migration revisions, oldest first (0001_initial.py creates every table)."""
