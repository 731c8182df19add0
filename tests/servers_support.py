"""Drive `vouch serve` as a real subprocess: what an agent host does."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from conftest import git

TIMEOUT = 60.0  # generous: the first search may build the index and load the model


class JsonlServer:
    """`vouch serve --transport jsonl` with a line reader that never blocks a test forever."""

    def __init__(self, kb_root: Path, *args: str, env: dict[str, str] | None = None):
        self.stderr_file = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vouch",
                "serve",
                "--transport",
                "jsonl",
                "--kb",
                str(kb_root),
                *args,
            ],
            cwd=kb_root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            env={**os.environ, **(env or {})},
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")  # EOF marker

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def response(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no response within {timeout}s; stderr:\n{self.stderr()}"
            ) from None
        assert line, f"server closed stdout; stderr:\n{self.stderr()}"
        assert line.endswith(b"\n")
        return json.loads(line)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One request, its response (checked to answer this request)."""
        self._next_id += 1
        request: dict[str, Any] = {"id": self._next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.send_raw(json.dumps(request).encode() + b"\n")
        response = self.response()
        assert response["id"] == self._next_id, response
        return response

    def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        response = self.call(method, params)
        assert response["ok"], response
        return response["result"]

    def no_more_output(self, wait: float = 0.2) -> bool:
        try:
            extra = self.lines.get(timeout=wait)
        except queue.Empty:
            return True
        self.lines.put(extra)
        return extra == b""

    def stderr(self) -> str:
        self.stderr_file.seek(0)
        return self.stderr_file.read().decode("utf-8", "replace")

    def close(self, timeout: float = 30) -> int:
        """Close stdin (EOF) and return the exit status."""
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    def __enter__(self) -> JsonlServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.close()
        self.stderr_file.close()


def kb_state(root: Path) -> tuple[str, str, str]:
    """Everything a request could change in the repository: HEAD, refs, work tree."""
    return (
        git(root, "rev-parse", "HEAD"),
        git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        git(root, "status", "--porcelain", "--untracked-files=all"),
    )
