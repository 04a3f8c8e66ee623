"""The outer layer: CLI, HTTP service, overlays; wires every other package."""
