from pathlib import Path

from conftest import git

from vouch.store.kb import KB


def test_init_creates_and_commits_skeleton(repo: Path, run_cli) -> None:
    res = run_cli("init", "--path", str(repo))
    assert res.code == 0, res.err
    vouch = repo / ".vouch"
    assert (vouch / "config.yaml").read_text().startswith("# vouch configuration")
    assert "index/" in (vouch / ".gitignore").read_text()
    assert "audit.log.jsonl merge=union" in (vouch / ".gitattributes").read_text()
    tracked = git(repo, "ls-files", ".vouch").split()
    assert set(tracked) == {
        ".vouch/.gitattributes",
        ".vouch/.gitignore",
        ".vouch/audit.log.jsonl",
        ".vouch/config.yaml",
    }
    assert git(repo, "status", "--porcelain") == ""
    assert "initialise knowledge base" in git(repo, "log", "-1", "--format=%s")


def test_second_init_changes_nothing(repo: Path, run_cli) -> None:
    run_cli("init", "--path", str(repo))
    head = git(repo, "rev-parse", "HEAD")
    res = run_cli("init", "--path", str(repo))
    assert res.code == 0
    assert "nothing changed" in res.out
    assert git(repo, "rev-parse", "HEAD") == head
    res = run_cli("init", "--path", str(repo), "--json")
    assert res.json()["created"] is False


def test_init_runs_git_init_outside_a_work_tree(tmp_path: Path, run_cli) -> None:
    target = tmp_path / "fresh"
    res = run_cli("init", "--path", str(target), "--json")
    assert res.code == 0, res.err
    assert res.json()["git_initialised"] is True
    assert (target / ".git").is_dir()
    assert git(target, "log", "--format=%s").strip() == "vouch: initialise knowledge base"


def test_init_keeps_users_staged_work_out_of_the_commit(repo: Path, run_cli) -> None:
    (repo / "staged.txt").write_text("mine\n")
    git(repo, "add", "staged.txt")
    (repo / "README.md").write_text("edited, unstaged\n")
    run_cli("init", "--path", str(repo))
    assert "staged.txt" not in git(repo, "show", "--stat", "HEAD")
    status = git(repo, "status", "--porcelain")
    assert "A  staged.txt" in status and " M README.md" in status


def test_commands_find_the_kb_by_walking_up(repo: Path, run_cli) -> None:
    run_cli("init", "--path", str(repo))
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    res = run_cli("status", "--json", cwd=sub)
    assert res.code == 0
    assert res.json()["root"] == str(repo / ".vouch")


def test_kb_flag_and_env_select_the_kb(repo: Path, tmp_path: Path, run_cli, monkeypatch) -> None:
    run_cli("init", "--path", str(repo))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run_cli("status", "--kb", str(repo), cwd=elsewhere).code == 0
    assert run_cli("status", "--kb", str(repo / ".vouch")).code == 0
    monkeypatch.setenv("VOUCH_KB", str(repo))
    assert run_cli("status", "--json").json()["root"] == str(repo / ".vouch")


def test_no_kb_is_e001_exit_1(tmp_path: Path, run_cli) -> None:
    res = run_cli("status", cwd=tmp_path)
    assert res.code == 1
    assert "E001" in res.err
    res = run_cli("status", "--json", cwd=tmp_path)
    assert res.json()["error"]["code"] == "E001"
    res = run_cli("status", "--kb", str(tmp_path / "nope"))
    assert res.code == 1 and "E001" in res.err


def test_status_shape(kb: KB, run_cli) -> None:
    res = run_cli("status", "--json", cwd=kb.root)
    data = res.json()
    assert set(data) >= {"root", "counts", "pending", "last_audit_at"}
    assert set(data["counts"]) >= {"claims", "pages", "sources", "entities", "relations"}
    assert data["pending"] == 0
    assert data["last_audit_at"].endswith("Z")


def test_init_refuses_a_bare_repository_or_git_dir(tmp_path: Path, repo: Path, run_cli) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    before = sorted(p.name for p in bare.iterdir())
    for args, cwd in (
        (["init"], bare),
        (["init", "--path", "sub"], bare),
        (["init"], repo / ".git"),
    ):
        res = run_cli(*args, cwd=cwd)
        assert res.code == 1 and "E100" in res.err, res.err
    assert sorted(p.name for p in bare.iterdir()) == before  # no nested .git, no .vouch
    assert not (repo / ".git" / ".git").exists() and not (repo / ".git" / ".vouch").exists()


def test_init_inside_a_knowledge_base_refuses_and_names_it(repo: Path, run_cli) -> None:
    assert run_cli("init", cwd=repo).code == 0
    head = git(repo, "rev-parse", "HEAD")
    sub = repo / "docs" / "deep"
    sub.mkdir(parents=True)
    for cwd, args in (
        (sub, ["init"]),
        (repo, ["init", "--path", "docs"]),
        (repo / ".vouch", ["init"]),
    ):
        res = run_cli(*args, "--json", cwd=cwd)
        assert res.code == 1 and res.json()["error"]["code"] == "E100", res.err
        assert str(repo / ".vouch") in res.json()["error"]["message"]
    assert not (sub / ".vouch").exists() and not (repo / "docs" / ".vouch").exists()
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
    assert run_cli("init", cwd=repo).code == 0  # the knowledge base itself: a no-op
