"""`vouch ui`: a local review page for the person at this terminal.

Served by the standard library (`http.server`), rendered on the server, one small inline
script for the keyboard; nothing is fetched from the network and no file is served.

- `guard`: who may ask — the one-time token, the session cookie, Host and Origin, the
  per-session CSRF token;
- `markup`: HTML that escapes every value unless told it is markup already;
- `pages`: the queue, a proposal, search and an object's why/log, as HTML;
- `actions`: approve, reject, comment, approve together — the registry's kb.* methods,
  called as the CLI calls them (the same `CallContext`);
- `app`: routes and the HTTP server (127.0.0.1, a random port, stops when idle).
"""
