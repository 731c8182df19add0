"""`vouch init`: create the `.vouch/` skeleton inside a git work tree and commit it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vouch import git
from vouch.core.config import CONFIG_NAME, template_text
from vouch.errors import UsageError
from vouch.store import recovery, state, writer
from vouch.store.audit import LOG_NAME
from vouch.store.kb import KB, VOUCH_DIR
from vouch.store.recovery import Recovered

# knowledge files are hashed as they are on disk: no conversion between repository and
# work tree, whatever a .gitattributes higher up (or core.autocrlf) says
NO_CONVERSION = "* -text -eol -filter -ident -working-tree-encoding\n"
GITATTRIBUTES = (
    "# bytes on disk are the bytes in git (ids and hashes are of what is on disk)\n"
    + NO_CONVERSION
    + f"# git's union merge driver lets two branches append to the log\n{LOG_NAME} merge=union\n"
)


@dataclass(frozen=True)
class InitResult:
    root: Path
    created: bool
    git_initialised: bool
    files: tuple[str, ...]
    recovered: Recovered | None = None  # an interrupted write this run finished or undid

    def to_json(self) -> dict[str, object]:
        return {
            "root": str(self.root),
            "created": self.created,
            "git_initialised": self.git_initialised,
            "files": list(self.files),
            "recovered": self.recovered.to_json() if self.recovered else None,
        }


def skeleton() -> dict[str, bytes]:
    return {
        CONFIG_NAME: template_text(CONFIG_NAME).encode(),
        ".gitignore": template_text("gitignore").encode(),
        ".gitattributes": GITATTRIBUTES.encode(),
    }


def init_kb(path: Path, actor: str | None = None) -> InitResult:
    """Create and commit the skeleton; a second run changes nothing and says so — or
    says which interrupted write it finished (or undid) on the way."""
    path = path.resolve()
    existing = next(p for p in (path, *path.parents) if p.is_dir())
    if git.toplevel(existing) is None and git.inside_git_dir(existing):
        # `git init` here would nest a repository inside git's own files
        raise UsageError(
            f"{path} is inside a bare repository or a .git directory",
            hint="run `vouch init` in a work tree (a clone), or pass --path",
        )
    enclosing = next(
        (p / VOUCH_DIR for p in path.parents if (p / VOUCH_DIR / "config.yaml").is_file()),
        None,
    )
    if enclosing is not None or VOUCH_DIR in path.parts:
        where = enclosing or Path(*path.parts[: path.parts.index(VOUCH_DIR) + 1])
        raise UsageError(
            f"{path} is inside the knowledge base {where}; a second one here would hide it "
            "from every command run below this directory",
            hint=f"vouch commands work anywhere inside {where.parent}; to start a separate "
            "knowledge base, run `vouch init` outside it",
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileNotFoundError, NotADirectoryError, FileExistsError) as exc:
        raise UsageError(
            f"cannot make a folder at {path}: {exc.strerror}",
            hint="pass --path a folder you can create (or an existing one)",
        ) from exc
    git_initialised = False
    if git.toplevel(path) is None:
        git.init_repo(path)
        git_initialised = True
    vouch_dir = path / VOUCH_DIR
    vouch_dir.mkdir(exist_ok=True)
    kb = KB(vouch_dir)
    with state.write_lock(kb, 30.0):
        recovered = recovery.recover(kb)  # run again, init finishes a cut-short write
        repo = kb.repo
        missing: dict[str, bytes] = {}
        for name, payload in skeleton().items():
            on_disk = vouch_dir / name
            committed = repo.tree_entry("HEAD", kb.rel(name))  # None before the first commit
            if not on_disk.exists():
                missing[name] = payload
            elif not committed:
                missing[name] = on_disk.read_bytes()  # keep what a person already wrote
        if not missing:
            return InitResult(vouch_dir, False, git_initialised, (), recovered)
        from vouch.methods.actor import resolve_actor

        who = resolve_actor(kb, actor)
        writer.commit_direct(
            kb,
            missing,
            subject="vouch: initialise knowledge base",
            event="kb.init",
            actor=who,
            object_ids=[],
        )
        return InitResult(vouch_dir, True, git_initialised, tuple(sorted(missing)), recovered)
