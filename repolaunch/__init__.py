"""repolaunch."""
