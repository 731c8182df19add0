# ruff: noqa: E501 - one template per line reads best
"""Word lists and sentence templates for the benchmark knowledge-base generator.

Realistic software-team text: services, deploys, incidents, owners, configs. The lists
are large enough that, combined, no two claims read the same and lexical/vector search
over a generated knowledge base has something to discriminate on.
"""

from __future__ import annotations

FIRST_NAMES = (
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Gustavo", "Hana", "Ines", "Jonas",
    "Kavya", "Lars", "Mei", "Nikhil", "Olga", "Pedro", "Quinn", "Rosa", "Sanjay", "Tomasz",
    "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zara", "Aiko", "Bilal", "Carmen", "Diego",
    "Elif", "Felix", "Greta", "Hiro", "Ivan", "Jamal", "Keiko", "Leila", "Marco", "Nadia",
    "Oren", "Priya", "Rafael", "Sofia", "Theo", "Ulla", "Valeria", "Wojtek", "Yara", "Zoltan",
    "Amara", "Bjorn", "Chiara", "Dmitri", "Esme", "Fatima", "Goran", "Helga", "Idris", "Julia",
)
LAST_NAMES = (
    "Okafor", "Lindqvist", "Moreau", "Nakamura", "Petrov", "Quispe", "Rahman", "Schmidt",
    "Tanaka", "Umarov", "Varga", "Walsh", "Xu", "Yilmaz", "Zhang", "Abara", "Becker", "Costa",
    "Dubois", "Eriksen", "Fischer", "Garcia", "Horvat", "Ito", "Jansen", "Kowalski", "Larsen",
    "Mendes", "Novak", "Oliveira", "Park", "Rossi", "Silva", "Takahashi", "Ueda", "Vogel",
    "Weber", "Yamada", "Ziegler", "Andersson", "Bauer", "Castillo", "Demir", "Ekstrom",
    "Ferreira", "Gruber", "Hoffmann", "Iyer", "Jovanovic", "Kim", "Lopez", "Muller", "Nguyen",
    "Ortiz", "Popescu", "Reyes", "Sato", "Torres", "Usman", "Vasquez",
)
DOMAINS = (
    "payments", "billing", "ledger", "checkout", "search", "auth", "identity", "notification",
    "email", "sms", "inventory", "catalog", "pricing", "recommendation", "analytics",
    "reporting", "audit", "export", "import", "onboarding", "profile", "session", "cart",
    "shipping", "fulfilment", "refund", "invoice", "tax", "fraud", "risk", "compliance",
    "consent", "feature-flag", "config", "secrets", "metrics", "logging", "tracing",
    "alerting", "scheduler", "batch", "ingest", "media", "thumbnail", "upload", "storage",
    "backup", "archive", "chat", "feed", "comments", "ratings", "review", "loyalty",
    "coupon", "subscription", "entitlement", "partner", "webhook", "geo", "routing",
    "dispatch", "maps", "translation", "document", "pdf", "forecast", "warehouse", "ml-scoring",
    "ranking", "crawler", "sitemap", "directory", "contacts", "calendar", "booking", "quota",
)
SYSTEM_SUFFIXES = (
    "service", "api", "worker", "gateway", "scheduler", "indexer", "cache", "proxy",
    "pipeline", "consumer", "publisher", "store", "sync", "daemon", "cron", "bridge",
    "engine", "router", "collector", "frontend",
)
TEAM_NAMES = (
    "Atlas", "Borealis", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor", "Iris",
    "Juniper", "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Polaris", "Quartz",
    "Redwood", "Sierra", "Tundra", "Umbra", "Vector", "Willow", "Zephyr", "Aurora", "Basalt",
    "Cedar", "Dune", "Echo", "Fjord", "Glacier", "Horizon", "Indigo", "Jade", "Krypton",
    "Lotus", "Mosaic", "Nova", "Orchid", "Pebble",
)
TEAM_KINDS = ("platform", "payments", "growth", "infra", "data", "security", "mobile",
              "web", "sre", "search", "identity", "billing", "ml", "developer-experience")
TOOLS = (
    "Terraform", "ArgoCD", "Grafana", "Prometheus", "PagerDuty", "Sentry", "Datadog",
    "Kubernetes", "Helm", "Vault", "Consul", "Kafka", "RabbitMQ", "Redis", "PostgreSQL",
    "MySQL", "Elasticsearch", "ClickHouse", "Airflow", "dbt", "Spark", "Flink", "Jenkins",
    "GitHub Actions", "Buildkite", "Bazel", "Poetry", "Renovate", "Dependabot", "Snyk",
    "Trivy", "OpenTelemetry", "Jaeger", "Loki", "Tempo", "Envoy", "Istio", "Linkerd",
    "Nginx", "HAProxy", "Cloudflare", "Fastly", "S3", "GCS", "BigQuery", "Snowflake",
    "Looker", "Metabase", "Jira", "Linear", "Confluence", "Notion", "Slack", "Opsgenie",
    "Statuspage", "LaunchDarkly", "Unleash", "Temporal", "Celery", "Sidekiq",
)
TOOL_VARIANTS = ("", " Cloud", " Enterprise", " operator", " exporter", " agent")
SYMPTOMS = (
    "latency spike", "error burst", "queue backlog", "memory leak", "disk full",
    "certificate expiry", "connection pool exhaustion", "deadlock", "data drift",
    "duplicate charges", "stale cache", "failed migration", "dns outage", "rate limiting",
    "partial outage", "split brain", "clock skew", "thundering herd", "OOM kills",
    "replication lag",
)
CONCEPTS = (
    "idempotency keys", "blue-green deploys", "canary releases", "feature flags",
    "circuit breakers", "exponential backoff", "schema migrations", "event sourcing",
    "outbox pattern", "dead-letter queues", "rate limits", "error budgets", "SLOs",
    "on-call rotation", "postmortems", "runbooks", "trunk-based development", "code owners",
    "dependency pinning", "secret rotation", "least privilege", "data retention",
    "backfills", "sharding", "read replicas", "connection pooling", "graceful shutdown",
    "health checks", "load shedding", "retries with jitter", "contract tests",
    "golden signals", "chaos drills", "change freezes", "release trains",
)
RESOURCES = ("orders", "users", "invoices", "payments", "accounts", "sessions", "events",
             "items", "carts", "refunds", "tokens", "webhooks", "reports", "exports", "files")
FILE_DIRS = ("src", "lib", "services", "internal", "pkg", "app", "deploy", "config", "infra")
FILE_NAMES = ("handler", "client", "models", "settings", "retry", "schema", "worker", "main",
              "routes", "migrations", "jobs", "limits", "cache", "metrics", "auth")
FILE_EXTS = (".py", ".go", ".ts", ".yaml", ".tf", ".sql", ".rs")
WORKFLOWS = ("release", "hotfix", "rollback", "incident response", "access request",
             "schema change", "key rotation", "data deletion", "vendor onboarding",
             "capacity review", "dependency upgrade", "cost review")

ENVS = ("production", "staging", "the canary cluster", "the eu-west cluster",
        "the us-east cluster", "the sandbox", "the load-test environment", "preview apps")
REGIONS = ("eu-west-1", "us-east-1", "us-west-2", "ap-southeast-1", "eu-central-1",
           "sa-east-1", "ap-northeast-1")
METRICS = ("p99 latency", "p95 latency", "error rate", "queue depth", "CPU usage",
           "memory usage", "request rate", "cache hit rate", "consumer lag", "disk usage",
           "connection count", "GC pause time", "cold start time", "build time")
CONFIG_KEYS = (
    "max_connections", "request_timeout_ms", "retry_limit", "batch_size", "worker_count",
    "cache_ttl_seconds", "pool_size", "read_timeout", "max_payload_kb", "rate_limit_rps",
    "shutdown_grace_seconds", "log_level", "feature.new_checkout", "replica_count",
    "heap_size_mb", "keepalive_seconds", "flush_interval_ms", "max_retries", "queue_prefetch",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
DURATIONS = ("30 seconds", "two minutes", "five minutes", "15 minutes", "an hour",
             "four hours", "a day", "two days", "a week")
AGENTS = ("claude-agent", "ingest-bot", "review-agent", "docs-agent", "triage-bot")

# Claim templates: (claim type, tags, text). Slots named after entity types take entity
# names ({system}, {system2}, {person}, {team}, {tool}, {repo}, {incident}, {api},
# {concept}, {file}, {workflow}); the rest take filler values.
CLAIM_TEMPLATES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("fact", ("ops", "ownership"), "{system} is owned by {team} and {person} is the primary on-call contact."),
    ("fact", ("deploy",), "{system} deploys to {env} through {tool} on every merge to main."),
    ("fact", ("architecture",), "{system} depends on {system2} for {resource} lookups."),
    ("fact", ("config",), "The {config} setting of {system} is {n} in {env}."),
    ("fact", ("infra",), "{system} runs {n} replicas in {region} behind {tool}."),
    ("fact", ("repo",), "The source of {system} lives in {repo}, under {file}."),
    ("fact", ("api",), "{api} is served by {system} and returns {resource} in pages of {n}."),
    ("fact", ("data",), "{system} writes {resource} to {tool} and keeps them for {n} days."),
    ("fact", ("ownership",), "{person} maintains the {tool} configuration for {team}."),
    ("decision", ("architecture", "decision"), "We decided to move {system} from {tool} to {tool2} by the end of {month}."),
    ("decision", ("decision", "deploy"), "{team} decided that {system} ships only behind a feature flag until {month}."),
    ("decision", ("decision",), "We adopted {concept} for {system} after {incident}."),
    ("decision", ("decision", "security"), "Access to {system} in {env} requires an approved request reviewed by {person}."),
    ("decision", ("decision", "api"), "{api} stays backwards compatible until every caller in {team} has migrated."),
    ("preference", ("style",), "{team} prefers {concept} over ad-hoc scripts when changing {system}."),
    ("preference", ("testing",), "{person} prefers contract tests against {api} over end-to-end tests."),
    ("preference", ("deploy",), "{team} prefers to deploy {system} before noon on {weekday}s."),
    ("workflow", ("deploy", "runbook"), "To roll back {system}, revert the release in {tool} and page {person} if {metric} stays high."),
    ("workflow", ("runbook", "ops"), "To rotate the {system} credentials, open a change in {repo} and ask {team} for review."),
    ("workflow", ("runbook",), "The {workflow} workflow for {system} starts with a ticket in {tool} assigned to {person}."),
    ("workflow", ("data",), "Backfills of {resource} in {system} run through {tool} in batches of {n}."),
    ("workflow", ("ci",), "Every pull request to {repo} runs the {system} integration suite in {tool}."),
    ("observation", ("performance",), "{metric} of {system} rose by {pct} percent after the {ver} release."),
    ("observation", ("incident",), "During {incident}, {system} returned errors for about {dur}."),
    ("observation", ("performance", "db"), "{system} spends most of its time waiting on {tool} queries for {resource}."),
    ("observation", ("ops",), "{system} restarts roughly every {dur} in {env} because of {symptom}."),
    ("observation", ("cost",), "{system} accounts for {pct} percent of the {tool} bill in {region}."),
    ("observation", ("incident",), "{incident} was first noticed by {person} on a {weekday} through an alert in {tool}."),
    ("question", ("open-question",), "Does {system} still need {system2}, or can {team} remove the dependency?"),
    ("question", ("open-question",), "Who owns the {config} setting of {system} in {env}?"),
    ("question", ("open-question", "incident"), "Why did {incident} not page {team} before customers noticed?"),
    ("warning", ("warning", "deploy"), "Do not deploy {system} while the {system2} migration is running."),
    ("warning", ("warning", "config"), "Never raise {config} of {system} above {n}; {tool} starts dropping connections."),
    ("warning", ("warning", "security"), "The staging copy of {system} holds real {resource}; treat it as production data."),
    ("warning", ("warning", "incident"), "{symptom} in {system} usually means {system2} is down, not {system} itself."),
)
FOLLOW_UPS = (
    "This was confirmed during the {month} review.",
    "{person} verified it on {weekday}.",
    "The runbook for {system} describes the details.",
    "It has been true since the {ver} release.",
    "The dashboards in {tool} show it clearly.",
    "{team} discussed it in the weekly operations sync.",
    "A follow-up ticket tracks the cleanup.",
    "It matters most during the {month} traffic peak.",
    "The same holds in {region}.",
    "See the postmortem of {incident} for background.",
    "Alerts fire after {dur} above the threshold.",
    "Expect {metric} to move when this changes.",
)
FILLER = (
    "The rest of this section lists context that reviewers asked for.",
    "Numbers below come from the last quarter of production traffic.",
    "Open questions are tracked in the team backlog.",
    "This document is reviewed every quarter by the owning team.",
    "Links to dashboards and tickets were removed from this copy.",
    "Several people contributed notes after the meeting.",
    "Action items have owners and due dates in the tracker.",
    "Nothing here replaces the on-call handbook.",
    "The timeline uses UTC throughout.",
    "Earlier drafts of this page disagreed on the details.",
)
SOURCE_KINDS = (
    # (source type, media type, locator pattern, title pattern, markdown headings?)
    ("file", "text/markdown", "docs/runbooks/{slug}.md", "Runbook: {name}", True),
    ("file", "text/markdown", "docs/adr/{n:04d}-{slug}.md", "ADR {n}: {name}", True),
    ("file", "text/markdown", "docs/postmortems/{slug}-{n}.md", "Postmortem: {name}", True),
    ("transcript", "text/plain", "meetings/{slug}-{n}.txt", "Meeting notes: {name} sync", False),
    ("message", "text/plain", "slack://ops/p{n}", "Thread about {name}", False),
    ("issue", "text/markdown", "https://tracker.example.com/issues/{n}", "Issue {n}: {name}", True),
    ("url", "text/markdown", "https://wiki.example.com/{slug}/{n}", "Wiki: {name}", True),
)
SECTION_HEADINGS = (
    "Summary", "Background", "Ownership", "Deploys", "Configuration", "Dependencies",
    "Known issues", "Timeline", "Decisions", "Open questions", "Runbook", "Monitoring",
    "Incidents", "Follow-ups", "Capacity", "Security notes",
)
