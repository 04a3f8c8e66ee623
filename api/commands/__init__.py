"""One module per ``tableref`` subcommand; each defines ``register(subparsers)``."""
