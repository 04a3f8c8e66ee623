"""The ``tableref`` command: thin subcommands over library functions, discovered from ``api.commands``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from api import commands


_OUR_PACKAGES = {"geometry", "calibration", "vision", "adjudicator", "simulation", "api"}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tableref", description="A computer-vision referee for table games.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"api.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except ValueError as exc:
        # Our packages' named errors (GeometryError, CalibrationError, ...) are ValueErrors whose message names
        # the problem; anything else is a bug and keeps its traceback.
        if type(exc).__module__.split(".")[0] not in _OUR_PACKAGES:
            raise
        print(f"tableref: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"tableref: error: no such file: {exc.filename}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
