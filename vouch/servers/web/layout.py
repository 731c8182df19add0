"""The frame every page shares: the style, the keyboard script (both inline, under the
response's nonce: the Content-Security-Policy allows nothing else), the navigation and
the messages left by the last action."""

from __future__ import annotations

from datetime import UTC, datetime

from vouch.servers.web.markup import Html, fill, join

STYLE = """
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1d2125;background:#fff}
header,main,footer{padding:.5rem .8rem;max-width:84rem;margin:auto}
header{border-bottom:1px solid #ddd;display:flex;flex-wrap:wrap;gap:.3rem 1rem;align-items:baseline}
header .who{margin-left:auto;color:#555;font-size:.85em}
footer{color:#666;font-size:.8em;border-top:1px solid #ddd}
a{color:#0b57d0}
h1{font-size:1.25rem;margin:.4rem 0;overflow-wrap:anywhere}
h2{font-size:1.05rem;margin:1rem 0 .3rem}
code,pre,.lines{font:13px/1.4 ui-monospace,monospace}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;padding:.5rem;margin:.3rem 0}
.muted{color:#666;font-size:.9em}
.flash{padding:.4rem .6rem;margin:.4rem 0;border-left:4px solid #2da44e;background:#eefbf1}
.flash.error{border-color:#cf222e;background:#fff0f0}
.problem{color:#a40e26}
table.queue{border-collapse:collapse;width:100%}
table.queue td,table.queue th{padding:.3rem .4rem;border-bottom:1px solid #eee;
text-align:left;vertical-align:top}
table.queue td.title{overflow-wrap:anywhere}
tr.sel,li.sel{outline:2px solid #0b57d0;background:#eef4ff}
.side{display:grid;gap:1rem}
@media(min-width:60em){.side{grid-template-columns:1fr 1fr}}
@media(max-width:40em){table.queue thead,table.queue .wide{display:none}
table.queue tr{display:block;padding:.3rem 0;border-bottom:1px solid #eee}
table.queue td{display:inline;border:0;padding:0 .4rem 0 0;color:#555}
table.queue td.title{display:block;color:inherit}
table.queue td.comments::after{content:" comments"}}
.obj{border:1px solid #ddd;padding:.5rem;overflow-wrap:anywhere}
.cite{border:1px solid #ddd;margin:.4rem 0}
.cite h3{font-size:.9rem;margin:0;padding:.3rem .5rem;background:#f6f8fa;overflow-wrap:anywhere}
.lines{display:grid;grid-template-columns:max-content 1fr;overflow-x:auto}
.lines .n{color:#888;text-align:right;padding:0 .5rem;user-select:none}
.lines .t{white-space:pre-wrap;overflow-wrap:anywhere;padding-right:.4rem}
.lines .cited{background:#fff3b0}
.lines .n.cited{color:#6a5100;font-weight:bold}
form{margin:.4rem 0}
input[type=text],textarea,select{font:inherit;max-width:100%}
textarea{width:100%;min-height:4rem}
button{font:inherit;padding:.25rem .8rem;cursor:pointer}
button:focus,input:focus,textarea:focus,a:focus{outline:3px solid #0b57d0}
.decide{display:flex;flex-wrap:wrap;gap:.4rem 1.5rem;border-top:1px solid #ddd;
margin-top:1rem;padding-top:.4rem}
.decide form{flex:1 1 16rem}
ul.plain{padding-left:1.1rem;margin:.3rem 0}
ul.plain li{overflow-wrap:anywhere}
.filters{display:flex;flex-wrap:wrap;gap:.3rem .8rem;align-items:end}
.filters label{display:flex;flex-direction:column;font-size:.85em}
"""

# j/k move, Enter opens; a/r/c go to approve, reject, comment (on the queue: of the
# selected proposal); / search; Escape leaves a field; Ctrl+Enter sends a text box's form
SCRIPT = """
(function(){
var page=document.body.getAttribute('data-page');
var items=[].slice.call(document.querySelectorAll('[data-nav]'));var at=-1;
function mark(i){if(!items.length)return;at=Math.max(0,Math.min(items.length-1,i));
items.forEach(function(e,n){e.classList.toggle('sel',n===at)});items[at].focus();
items[at].scrollIntoView({block:'nearest'})}
function go(id){var e=document.getElementById(id);if(!e)return false;
e.scrollIntoView({block:'center'});e.focus();return true}
function follow(id){var e=document.getElementById(id);
if(e&&e.href){location.href=e.href;return true}return false}
document.addEventListener('keydown',function(ev){
var t=ev.target,tag=t&&t.tagName,k=ev.key;
if(tag==='TEXTAREA'&&k==='Enter'&&(ev.ctrlKey||ev.metaKey)){t.form.requestSubmit();ev.preventDefault();return}
if(k==='Escape'&&t&&t.blur){t.blur();return}
if(ev.ctrlKey||ev.metaKey||ev.altKey||tag==='INPUT'||tag==='TEXTAREA'||tag==='SELECT')return;
var row=items[at];var act={a:'approve',r:'reject',c:'comment'}[k];
if(page==='proposal'&&(k==='j'||k==='k')){if(!follow(k==='j'?'next':'prev'))return}
else if(k==='j'){mark(at+1)}else if(k==='k'){mark(at<0?0:at-1)}
else if(act){if(page==='queue'){if(!row)mark(0);row=items[at];if(!row)return;
location.href=row.getAttribute('data-href')+'#'+act}else if(!go(act+'-focus'))return}
else if(k==='/'){if(!go('q'))location.href='/search'}
else if(k==='Enter'&&row&&row.getAttribute('data-href')){
location.href=row.getAttribute('data-href')}
else return;
ev.preventDefault()});
if(location.hash)go(location.hash.slice(1)+'-focus');
else if(page==='queue')mark(0);
})();
"""

KEYS = "j/k move · Enter open · a approve · r reject · c comment · / search · Esc leave a field"


def page(
    title: str,
    body: Html,
    *,
    nonce: str,
    kind: str,
    reviewer: str,
    flash: list[tuple[str, str]] | None = None,
) -> Html:
    messages = join(
        fill('<p class="flash {}" role="status">{}</p>', lvl, t) for lvl, t in flash or []
    )
    return fill(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="referrer" content="same-origin">'
        '<title>{} · vouch</title><style nonce="{}">{}</style></head>'
        '<body data-page="{}"><header><strong>vouch</strong>'
        '<a href="/" accesskey="q">Queue</a><a href="/search">Search</a>'
        '<span class="who">reviewing as {}</span></header>'
        '<main id="main">{}{}</main><footer>{}</footer>'
        '<script nonce="{}">{}</script></body></html>',
        title,
        nonce,
        Html(STYLE),
        kind,
        reviewer,
        messages,
        body,
        KEYS,
        nonce,
        Html(SCRIPT),
    )


def age(created_at: object, now: datetime | None = None) -> str:
    """`5 min`, `3 h`, `2 d` since an ISO time; `?` when it is not one."""
    try:
        when = datetime.fromisoformat(str(created_at).replace("Z", "+00:00"))
    except ValueError:
        return "?"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"
