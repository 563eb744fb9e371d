"""envfactory."""
