"""The README's picture of the review page: `docs/img/review.png`.

    python scripts/ui_screenshot.py [--out docs/img/review.png]

Builds the demo knowledge base (`vouch demo`) in a temporary folder; its agent then
proposes a claim that cites three lines of the deploy runbook and repeats an approved
claim (so the page shows a look-alike), and comments on it; `vouch ui` serves it, and
headless Chromium (Debian's `chromium` and `chromium-driver`, through Selenium) saves
the proposal's page. tests/test_ui_browser.py runs this script, so the picture's maker
never stops working; run it again when the page changes, and commit the PNG.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from vouch.methods import registry as ops
from vouch.methods.context import CallContext
from vouch.methods.demo import AUTHOR, run_demo
from vouch.servers.web import app

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img" / "review.png"
WIDTH, MAX_HEIGHT = 1100, 1500
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
# a closed network: no background fetches, no first-run work, no sandbox as root
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def chromium(profile: Path, width: int = 1200, height: int = 900) -> webdriver.Chrome:
    """Headless Chromium with a fresh profile, its console log kept."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def knowledge_base(root: Path) -> str:
    """The demo's knowledge base, and a proposal to review: its id."""
    for _ in run_demo(root):
        pass
    agent = CallContext(kb_path=str(root), agent=AUTHOR)
    runbook = next(
        s["id"]
        for s in ops.invoke(agent, "kb.list_sources")
        if s.get("title") == "deploy-runbook.md"
    )
    made = ops.invoke(
        agent,
        "kb.propose_claim",
        {
            "text": "Rollbacks of the billing service need no review.",
            "evidence": [f"{runbook}:L8-L10"],
            "rationale": "the runbook's rollback section",
        },
    )
    pid = str(made["proposal_id"])
    ops.invoke(
        agent,
        "kb.comment_proposal",
        {"proposal_id": pid, "text": "Is this the same as the approved rollback claim?"},
    )
    return pid


def make(out: Path = OUT, driver: Any = None) -> dict[str, Any]:
    """Save the picture at `out`; what it shows (for the test that runs this)."""
    with tempfile.TemporaryDirectory(prefix="vouch-ui-shot-") as tmp:
        root = Path(tmp) / "demo"
        pid = knowledge_base(root)
        server = app.start(CallContext(kb_path=str(root), transport="cli"))
        thread = threading.Thread(target=app.serve, args=(server, 0), daemon=True)
        thread.start()
        own = driver is None
        browser = driver or chromium(Path(tmp) / "profile")
        try:
            browser.set_window_size(WIDTH, 900)
            browser.get(server.review.guard.login_url())
            browser.get(f"http://{server.review.guard.host}/p/{pid}")
            height, chrome = browser.execute_script(
                "return [document.documentElement.scrollHeight, "
                "window.outerHeight - window.innerHeight]"
            )
            browser.set_window_size(WIDTH, min(MAX_HEIGHT, int(height) + int(chrome)))
            shown = {
                "proposal_id": pid,
                "title": browser.find_element(By.TAG_NAME, "h1").text,
                "cited": [
                    e.text for e in browser.find_elements(By.CSS_SELECTOR, ".lines .n.cited")
                ],
                "related": len(browser.find_elements(By.CSS_SELECTOR, 'a[href^="/o/"]')),
            }
            out.parent.mkdir(parents=True, exist_ok=True)
            if not browser.save_screenshot(str(out)):
                raise RuntimeError(f"Chromium saved no picture at {out}")
        finally:
            if own:
                browser.quit()
            server.shutdown()
            thread.join(10)
    return shown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    shown = make(args.out)
    print(f"wrote {args.out}: proposal {shown['proposal_id']}, cited lines {shown['cited']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
