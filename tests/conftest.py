"""Shared pytest setup for the whole suite: kept minimal; packages add their own conftest in subfolders."""
