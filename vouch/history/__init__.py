"""Provenance read from git: where a piece of knowledge came from and what changed.

Every change to knowledge is a commit whose trailers say what it was (a proposal, a
decision, a lifecycle edit, a registration), so history answers `why` (who proposed and
approved an object, on what evidence), `log` (the commits and audit events of an object
or of the whole knowledge base), `diff` (what a branch changes in what the team
believes) and `blame` (which proposal last changed each section of a page). Nothing
here writes; nothing here reads anything but git and the files.
"""
