"""Commits vouch writes are signed as `git commit-tree` signs them in the same environment:
identity (author and committer apart), GIT_*_DATE in git's formats, the local timezone."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import git
from gate_support import BOB, propose_claim

from vouch.errors import UsageError
from vouch.git import Repo
from vouch.git.ident import tz_offset
from vouch.store.kb import KB

# named zones need the tz database; the POSIX spellings work without it
ZONES = [
    "UTC",
    "Asia/Kolkata",
    "America/St_Johns",
    "Australia/Lord_Howe",
    "IST-5:30",
    "NST3:30NDT,M3.2.0,M11.1.0",
]
DATES = [
    "2005-04-07T22:13:13",  # ISO 8601, local time
    "2005-04-07T22:13:13+0200",  # ISO 8601 with an offset
    "2021-07-01 12:00:00",  # local time in summer (daylight saving)
    "2021-01-15 12:00",  # local time in winter
    "Thu, 07 Apr 2005 22:13:13 +0200",  # RFC 2822
    "Thu Apr 7 22:13:13 2005 -0230",  # git's default format
    "1112911993 -0330",  # git's internal format
    "@1625140800",  # seconds since the epoch, local offset
    "2005.04.07 22:13:13",  # dotted
]


@contextlib.contextmanager
def local_zone(zone: str) -> Iterator[None]:
    """TZ for this process (time.tzset) and every git it starts."""
    if "/" in zone and not Path("/usr/share/zoneinfo", zone).exists():
        pytest.skip(f"no tz database entry for {zone}")
    old = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = old
        time.tzset()


@pytest.fixture
def plain_repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    (root / "f").write_text("f\n")
    git(root, "add", "f")
    git(root, "commit", "-qm", "first")
    return root


def _signed(root: Path, commit: str) -> list[str]:
    raw = git(root, "cat-file", "commit", commit)
    return [
        line
        for line in raw.split("\n\n")[0].splitlines()
        if line.startswith(("author ", "committer "))
    ]


def by_git(root: Path) -> list[str]:
    """The author and committer lines `git commit-tree` writes here and now."""
    sha = git(root, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "msg").strip()
    return _signed(root, sha)


def by_vouch(root: Path) -> list[str]:
    repo = Repo(root)
    tip = git(root, "rev-parse", "HEAD").strip()
    return _signed(root, repo.write_commit(repo.store.peel_tree(tip) or "", [tip], "msg\n"))


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("date", DATES)
def test_fixed_dates_match_git(
    plain_repo: Path, monkeypatch: pytest.MonkeyPatch, zone: str, date: str
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", date)
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2019-02-03 04:05:06")
    with local_zone(zone):
        assert by_vouch(plain_repo) == by_git(plain_repo)


@pytest.mark.parametrize("zone", ZONES)
def test_now_in_the_local_zone_matches_git(
    plain_repo: Path, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1700000000 +0100")  # only the author: now
    with local_zone(zone):
        ours, theirs = by_vouch(plain_repo), by_git(plain_repo)
    assert ours[1] == theirs[1]
    ours_who, ours_secs, ours_zone = ours[0].rsplit(" ", 2)
    git_who, git_secs, git_zone = theirs[0].rsplit(" ", 2)
    assert (ours_who, ours_zone) == (git_who, git_zone)
    assert abs(int(ours_secs) - int(git_secs)) <= 2


@pytest.mark.parametrize("zone", ZONES)
def test_the_utc_offset_follows_daylight_saving_as_git_does(
    plain_repo: Path, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    """The in-process offset (used when no date is set) against git's own local offset
    for the same second (`--date=iso-local` runs the computation git's clock uses),
    across a year and hour by hour around the 2021 transitions."""
    stamps = [1609459200 + day * 86400 for day in range(0, 365, 14)]
    stamps += [1615699800 + h * 1800 for h in range(-3, 4)]  # 2021-03-14, Newfoundland
    stamps += [1617460200 + h * 1800 for h in range(-3, 4)]  # 2021-04-04, Lord Howe
    commits = []
    for seconds in stamps:  # dated in UTC: the zone only changes how git shows them
        monkeypatch.setenv("GIT_AUTHOR_DATE", f"{seconds} +0000")
        commits.append(git(plain_repo, "commit-tree", "HEAD^{tree}", "-m", "t").strip())
    with local_zone(zone):
        shown = git(plain_repo, "show", "-s", "--format=%ad", "--date=iso-local", *commits)
        ours = [tz_offset(seconds) for seconds in stamps]
    assert ours == [line.rsplit(" ", 1)[1] for line in shown.splitlines()]
    if zone != "UTC":
        assert len(set(ours)) == (1 if zone in ("Asia/Kolkata", "IST-5:30") else 2)


def test_author_and_committer_are_who_git_says(
    plain_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1112911993 +0530")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1112911994 -0330")
    assert by_vouch(plain_repo) == by_git(plain_repo)
    git(plain_repo, "config", "author.name", "Configured Author")
    git(plain_repo, "config", "committer.email", "committer@example.invalid")
    assert by_vouch(plain_repo) == by_git(plain_repo)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "  Ada. ")  # git strips the stray characters
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "<ada@example.invalid>")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Cy")
    lines = by_vouch(plain_repo)
    assert lines == by_git(plain_repo)
    assert lines[0].startswith("author Ada <ada@example.invalid> 1112911993 +0530")
    assert lines[1].startswith("committer Cy <committer@example.invalid> 1112911994 -0330")


def test_a_date_git_rejects_is_a_clear_error(
    plain_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", "not a date")
    with pytest.raises(UsageError, match="invalid date format"):
        by_vouch(plain_repo)


def test_without_any_identity_vouch_signs_for_the_missing_part(
    plain_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config = tmp_path / "only-name.gitconfig"
    config.write_text("[user]\n\tname = Only Name\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.delenv("EMAIL", raising=False)
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1112911993 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1112911993 +0000")
    lines = by_vouch(plain_repo)
    try:
        assert lines == by_git(plain_repo)  # git found an address (a host with a domain)
    except Exception:  # git refuses: vouch fills in what is missing, keeps the rest
        assert lines == [
            "author Only Name <vouch@localhost> 1112911993 +0000",
            "committer Only Name <vouch@localhost> 1112911993 +0000",
        ]


def test_a_gate_decision_is_signed_like_git(
    kb_with_sources: KB, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = kb_with_sources
    pid = propose_claim(kb, "Dated claim")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2021-07-01 12:00:00")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "Fri, 15 Jan 2021 12:00:00 +0100")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Release Bot")
    with local_zone("America/St_Johns"):
        assert run_cli("approve", pid, "--as", BOB, cwd=kb.root).code == 0
        lines = _signed(kb.root, "HEAD")
        # a decision is authored by the person deciding (the committer identity), as git
        # would write it with GIT_AUTHOR_NAME/EMAIL naming them: dates and zone are git's
        monkeypatch.setenv("GIT_AUTHOR_NAME", "Release Bot")
        monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.invalid")
        assert lines == by_git(kb.root)
    assert lines[0] == "author Release Bot <test@example.invalid> 1625149800 -0230"  # noon, NL
    assert lines[1].startswith("committer Release Bot <test@example.invalid> 1610708400 +0100")
