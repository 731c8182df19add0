"""What `vouch ui`'s pages show (issue 37, item 2), read over plain HTTP: a proposal's
approved look-alikes, an object's why and log, search with the CLI's filters, the
queue's columns, and j/k's way from one proposal to the next."""

from __future__ import annotations

import re

from gate_support import BOB, call, propose_claim
from ui_support import Client, running

from vouch.store.kb import KB


def _approved_and_again(kb: KB) -> tuple[str, str]:
    """An approved claim (its id), and a new proposal that repeats it (its id)."""
    first = propose_claim(kb, "Deploys need a green CI run")
    done = call(kb, "kb.approve", {"proposal_id": first}, actor=BOB)
    again = propose_claim(kb, "Deploys need a green CI run first", shown=False)
    return str(done["object_id"]), again


def test_a_proposal_page_names_look_alikes_and_an_object_page_explains(
    kb_with_sources: KB,
) -> None:
    kb = kb_with_sources
    claim_id, again = _approved_and_again(kb)
    with running(kb) as server:
        client = Client(server)
        client.login()
        page = client.get(f"/p/{again}")
        assert page.status == 200
        assert "Already approved and similar" in page.body
        assert f'href="/o/{claim_id}"' in page.body
        assert re.search(r"similarity 0\.\d\d|words shared 0\.\d\d", page.body)
        why = client.get(f"/o/{claim_id}")
        assert why.status == 200
        assert "Deploys need a green CI run" in why.body
        assert "Proposed by agent alice" in why.body and "Approved by agent bob" in why.body
        assert "<h2>Evidence (1)</h2>" in why.body and "<h2>Log</h2>" in why.body
        assert "vouch: approve claim" in why.body
        # its graph, one step around: the source it cites, linked (issue 37 item 2)
        graph = why.body.split("<h2>Graph</h2>", 1)[1].split("</ul>", 1)[0]
        assert f'href="/o/{claim_id}"' in graph and "cites" in graph and "source:" in graph
        missing = client.get("/o/no-such-thing-1a2b3c4d")
        assert missing.status == 200 and "E101" in missing.body


def test_search_takes_the_cli_filters(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    claim_id, _ = _approved_and_again(kb)
    with running(kb) as server:
        client = Client(server)
        client.login()

        def hits(query: str) -> list[str]:
            res = client.get(f"/search?{query}")
            assert res.status == 200, res.body
            return re.findall(r'data-href="/o/([^"]+)"', res.body)

        assert claim_id in hits("q=green+CI+run&kind=claim")
        assert hits("q=green+CI+run&kind=claim&status=archived") == []
        assert claim_id in hits("q=green+CI+run&kind=claim&mode=fts&top=3")
        assert claim_id not in hits("q=green+CI+run&kind=source")
        (proposed,) = [row["object_id"] for row in call(kb, "kb.list_pending")]
        assert proposed in hits("q=green+CI+run+first&kind=claim&pending=1")
        assert proposed not in hits("q=green+CI+run+first&kind=claim")
        assert hits("q=green+CI+run&kind=claim&threshold=1000") == []
        assert claim_id in hits("q=green+CI+run&kind=claim&threshold=0&since=&until=")
        unreadable = client.get("/search?q=x&threshold=high")
        assert unreadable.status == 200 and "error[" in unreadable.body
        assert 'name="threshold" value="high"' in unreadable.body
        bad = client.get("/search?q=x&type=nonsense")
        assert bad.status == 200 and "error[" in bad.body  # said, not a crash
        form = client.get("/search?q=%3Cb%3Ex&kind=claim")
        assert 'value="&lt;b&gt;x"' in form.body and '<option value="claim" selected>' in form.body


def test_the_queue_shows_kind_proposer_age_and_comments(kb_with_sources: KB) -> None:
    kb = kb_with_sources
    first = propose_claim(kb, "Deploys need a green CI run", shown=False)
    second = propose_claim(kb, "Rollbacks need no review", shown=False)
    call(kb, "kb.comment_proposal", {"proposal_id": second, "text": "which release?"}, actor=BOB)
    with running(kb) as server:
        client = Client(server)
        client.login()
        queue = client.get("/")
        rows = re.findall(r"<tr data-nav.*?</tr>", queue.body)
        assert len(rows) == 2 and "2 open proposals" in queue.body
        cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
        assert [c[1:3] for c in cells] == [["claim", "alice"], ["claim", "alice"]]
        assert re.fullmatch(r"\d+ (s|min)", cells[0][3])
        assert [c[4] for c in cells] == ["0", "1"]
        # j/k from a proposal: the next, the previous, else back to the queue
        assert client.get(f"/p/{first}/next").headers["Location"] == f"/p/{second}"
        assert client.get(f"/p/{second}/prev").headers["Location"] == f"/p/{first}"
        assert client.get(f"/p/{second}/next").headers["Location"] == "/"
        assert client.get(f"/p/{first}/prev").headers["Location"] == "/"
