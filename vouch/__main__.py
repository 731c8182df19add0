from vouch.launch import run

raise SystemExit(run())
