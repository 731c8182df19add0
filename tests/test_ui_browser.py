"""`vouch ui` driven in a real browser (issue 37, item 4): headless Chromium (Debian's
`chromium` and `chromium-driver`) through Selenium's WebDriver — the driver Debian builds
from the same source as the browser, so the two never disagree on a protocol version,
and a pure-Python client that downloads nothing.

One whole review with the keyboard: the queue, a proposal's highlighted citation, a
comment, two linked proposals approved together, one rejected with a reason — then the
repository checked with git. A screenshot of each step is saved under the test's tmp
directory, or VOUCH_UI_SCREENSHOTS when set (never committed)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import git, script
from gate_support import PERSON
from ui_support import review_set

from vouch.store.kb import KB, PROPOSAL_PREFIX

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
    pytest.skip(
        "headless Chromium is not installed (Debian: apt-get install chromium "
        "chromium-driver; .ci/run installs them)",
        allow_module_level=True,
    )

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

SHOT = script("ui_screenshot")  # the README picture's maker; its launcher is the tests' too
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """One browser for the module (a fresh profile: no cookie from another run)."""
    with tempfile.TemporaryDirectory(prefix="vouch-ui-chromium-") as profile:
        driver = SHOT.chromium(Path(profile))
        try:
            yield driver
        finally:
            driver.quit()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("VOUCH_UI_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def ui(kb_with_sources: KB) -> Iterator[str]:
    """The real `vouch ui` in the knowledge base: the URL it prints."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vouch", "ui", "--idle-seconds", "120"],
        cwd=kb_with_sources.root,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        yield line.split(": ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def keys(driver: WebDriver, *typed: str) -> None:
    ActionChains(driver).send_keys(*typed).perform()


def wait_for(driver: WebDriver, check: Any, what: str) -> None:
    try:
        WebDriverWait(driver, 15).until(lambda d: check(d), message=what)
    except Exception:  # what the browser showed instead, in the test's output
        print(driver.current_url, driver.page_source[-3000:], driver.get_log("browser"))
        raise


def on(driver: WebDriver, path: str) -> None:
    wait_for(driver, lambda d: d.current_url.split("#")[0].endswith(path), f"at {path}")


def flash(driver: WebDriver) -> str:
    return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, ".flash"))


def test_a_whole_review_in_the_browser(
    kb_with_sources: KB, ui: str, browser: WebDriver, shots: Path, run_cli
) -> None:
    kb = kb_with_sources
    made = review_set(kb)
    cited, claim, page = made["cited"], made["claim"], made["page"]
    d = browser
    d.set_window_size(1200, 900)
    base = ui.split("/login")[0]

    # the queue: three proposals, their age, proposer, kind and comments
    d.get(ui)
    on(d, "/")
    rows = d.find_elements(By.CSS_SELECTOR, "tr[data-nav]")
    assert [r.get_attribute("data-href") for r in rows] == [
        f"/p/{cited}",
        f"/p/{claim}",
        f"/p/{page}",
    ]
    assert "alice" in rows[0].text and "claim" in rows[0].text and "page" in rows[2].text
    d.save_screenshot(str(shots / "1-queue.png"))

    # j/k move, Enter opens: the first proposal, its cited lines marked and numbered
    keys(d, "j", "j", "k", "k")
    assert "sel" in (rows[0].get_attribute("class") or "")
    keys(d, Keys.ENTER)
    on(d, f"/p/{cited}")
    marked = d.find_elements(By.CSS_SELECTOR, "#citations .lines .t.cited")
    numbers = [e.text for e in d.find_elements(By.CSS_SELECTOR, "#citations .lines .n.cited")]
    assert numbers == ["8", "9"]
    assert marked[0].text.startswith("Roll back with `ship rollback billing --to <release>`")
    assert "backwards compatible" in marked[1].text
    around = d.find_elements(By.CSS_SELECTOR, "#citations .lines .t:not(.cited)")
    assert any("## Rolling back" in e.text for e in around)  # context, not marked
    assert "<script>alert(1)</script>" in d.find_element(By.TAG_NAME, "h1").text  # as text
    d.save_screenshot(str(shots / "2-proposal.png"))

    # c: comment (Ctrl+Enter sends); the thread shows it
    keys(d, "c")
    assert d.switch_to.active_element.get_attribute("id") == "comment-focus"
    keys(d, "Which release does this cover?")
    ActionChains(d).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()
    wait_for(d, lambda d: "commented on" in flash(d), "the comment's message")
    thread = d.find_element(By.CSS_SELECTOR, "li.comment").text
    assert "Which release does this cover?" in thread and PERSON in thread
    d.save_screenshot(str(shots / "3-commented.png"))

    # readable at 320 px (a phone's width, emulated: a headless window is never that
    # narrow): nothing wider than the screen, on a proposal's page and on the queue
    metrics = {"width": 320, "height": 800, "deviceScaleFactor": 1, "mobile": True}
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    for path, name in ((f"/p/{cited}", "4-proposal-320px.png"), ("/", "4-queue-320px.png")):
        d.get(base + path)
        width = d.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert width == [320, 320], (path, width)
        d.save_screenshot(str(shots / name))
    d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    # the page waits for the claim: approve them together, once both were read
    d.get(f"{base}/")
    keys(d, "j", "j", Keys.ENTER)
    on(d, f"/p/{page}")
    button = d.find_element(By.ID, "approve-focus")
    assert button.get_attribute("disabled") is not None
    assert "not reviewed yet" in d.find_element(By.ID, "approve").text
    d.save_screenshot(str(shots / "5-linked-unread.png"))
    keys(d, "k")
    on(d, f"/p/{claim}")
    keys(d, "j")
    on(d, f"/p/{page}")
    assert d.find_element(By.ID, "approve-focus").get_attribute("disabled") is None
    keys(d, "a")
    assert d.switch_to.active_element.get_attribute("id") == "approve-focus"
    keys(d, Keys.ENTER)
    on(d, "/")
    wait_for(d, lambda d: "approved together" in flash(d), "the approval's message")
    assert len(d.find_elements(By.CSS_SELECTOR, "tr[data-nav]")) == 1
    d.save_screenshot(str(shots / "6-approved-together.png"))

    # r: reject the last one with a reason (Enter sends)
    keys(d, Keys.ENTER)
    on(d, f"/p/{cited}")
    keys(d, "r")
    assert d.switch_to.active_element.get_attribute("id") == "reject-focus"
    keys(d, "only rollbacks skip review, and the text says more", Keys.ENTER)
    on(d, "/")
    wait_for(d, lambda d: f"rejected {cited}" in flash(d), "the rejection's message")
    assert "No open proposals" in d.find_element(By.TAG_NAME, "h1").text
    d.save_screenshot(str(shots / "7-rejected.png"))
    blocked = [e for e in d.get_log("browser") if "Content Security Policy" in e["message"]]
    assert blocked == []  # the page's own style and script ran under its nonce

    # the repository, read with git
    assert git(kb.root, "for-each-ref", PROPOSAL_PREFIX).strip() == ""
    assert git(kb.root, "rev-parse", f"refs/vouch/rejected/{cited}").strip()
    log = git(kb.root, "log", "--first-parent", "-3", "--format=%an|%s|%P", "HEAD")
    rows = [line.split("|") for line in log.splitlines()]
    assert [who for who, _, _ in rows] == [PERSON] * 3  # the git user who started vouch ui
    assert rows[0][1].startswith("vouch: reject claim ")
    assert rows[1][1].startswith("vouch: approve page ")  # dependencies first
    assert rows[2][1].startswith("vouch: approve claim ")
    assert len(rows[1][2].split()) == len(rows[2][2].split()) == 2  # merges of the proposals
    decided = git(kb.root, "ls-tree", "-r", "--name-only", "HEAD", ".vouch/decided").split()
    assert {Path(p).stem for p in decided} >= {cited, claim, page}
    events = run_cli("audit", "--json", cwd=kb.root).json()
    mine = [
        (e["event"], e.get("proposal_id") or e["object_ids"])
        for e in events
        if e["actor"] == PERSON
    ]
    kinds = [e for e, _ in mine]
    assert kinds.count("proposal.approve") == 2 and kinds.count("proposal.reject") == 1
    verified = run_cli("audit", "--verify", "--json", cwd=kb.root)
    assert verified.code == 0 and verified.json()["ok"], verified.out
    comment = git(kb.root, "log", "-1", "--format=%B", f"refs/vouch/comments/{cited}")
    assert "Which release does this cover?" in comment
    (shots / "review.json").write_text(json.dumps(made))


def test_the_readme_picture_is_made_by_its_script(browser: WebDriver, tmp_path: Path) -> None:
    """scripts/ui_screenshot.py still makes docs/img/review.png: the demo's proposal,
    its three cited lines marked, a look-alike named (run it again when the page changes,
    and commit the picture)."""
    out = tmp_path / "review.png"
    shown = SHOT.make(out, browser)
    assert shown["cited"] == ["8", "9", "10"] and shown["related"] >= 1
    assert shown["title"] == "Rollbacks of the billing service need no review."
    made, committed = out.read_bytes(), (ROOT / "docs" / "img" / "review.png").read_bytes()
    assert made[:8] == committed[:8] == b"\x89PNG\r\n\x1a\n"
    (w, h), (cw, ch) = struct.unpack(">II", made[16:24]), struct.unpack(">II", committed[16:24])
    assert w == cw == SHOT.WIDTH
    assert abs(h - ch) <= ch // 10, "the page changed: run python scripts/ui_screenshot.py"
