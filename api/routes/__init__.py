"""HTTP routers, one per resource (STYLE §4), and their helpers (errors, models, uploads)."""
