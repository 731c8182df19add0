from vouch.cli import run

raise SystemExit(run())
