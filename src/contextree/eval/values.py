"""Slot values for probes: specific, seeded, and distinct within a session.

Each domain has its own nouns (what a ``{thing}`` or a ``{path}`` is); names, dates, hosts,
versions and ids are drawn for every domain alike. Values are never reused in one session, so
a value found in the context belongs to exactly one probe.
"""

from __future__ import annotations

import random
from typing import Final

__all__ = ["DOMAINS", "SlotValues"]

DOMAINS: Final = ("coding", "ops", "data", "writing", "support")

_FIRST: Final = (
    "Priya",
    "Mateo",
    "Ingrid",
    "Kwame",
    "Yuki",
    "Dmitri",
    "Amara",
    "Tomasz",
    "Leila",
    "Rafael",
    "Sunniva",
    "Oluwaseun",
    "Haruto",
    "Beatriz",
    "Callum",
    "Anouk",
    "Farid",
    "Greta",
)
_LAST: Final = (
    "Raman",
    "Okafor",
    "Lindqvist",
    "Mensah",
    "Tanaka",
    "Volkov",
    "Nwosu",
    "Kowalczyk",
    "Haddad",
    "Esposito",
    "Brekke",
    "Adeyemi",
    "Sato",
    "Carvalho",
    "Fraser",
    "Visser",
)
_CODENAMES: Final = (
    "Bluefin",
    "Kestrel",
    "Marigold",
    "Tamarack",
    "Osprey",
    "Juniper",
    "Halyard",
    "Quokka",
    "Saffron",
    "Cobalt",
    "Larkspur",
    "Nimbus",
    "Pelican",
    "Verdigris",
    "Wren",
    "Zephyr",
)
_PRODUCTS: Final = (
    ("Postgres", "postgres"),
    ("Redis", "redis-server"),
    ("Kafka", "kafka-topics"),
    ("ClickHouse", "clickhouse"),
    ("nginx", "nginx"),
    ("MySQL", "mysqld"),
)
_REGIONS: Final = (
    "us-west-2",
    "eu-central-1",
    "ap-southeast-2",
    "ca-central-1",
    "eu-north-1",
    "sa-east-1",
)
_LANGUAGES: Final = (
    "British English",
    "German",
    "Brazilian Portuguese",
    "plain US English",
    "French",
)
_DATE_FORMATS: Final = ("DD/MM/YYYY", "ISO 8601 (YYYY-MM-DD)", "D Month YYYY")
_STYLES: Final = (
    "terse answers with no em-dashes",
    "sentence-case headings and no exclamation marks",
    "numbered steps instead of prose",
    "short paragraphs, no tables",
    "a one-line verdict first, details after",
    "bullet lists of at most five items",
)
_UNITS: Final = ("metric", "imperial", "SI")
_RUNTIMES: Final = ("Python 3.11", "Node 20", "Java 17", "Go 1.22", "Ruby 3.2")
_EXCEPTIONS: Final = (
    ("KeyError", "'tenant_id'"),
    ("ValueError", "invalid literal for int() with base 10: 'n/a'"),
    ("TimeoutError", "read timed out after 30s"),
    ("PermissionError", "[Errno 13] /var/run/app.sock"),
    ("UnicodeDecodeError", "'utf-8' codec can't decode byte 0xe9"),
)
_ERRCODES: Final = (
    "ERR_TLS_417",
    "E_QUOTA_809",
    "HTTP 503",
    "ORA-01555",
    "SQLSTATE 40P01",
    "ECONNRESET",
    "x509: certificate has expired",
)
_DOMAIN_POOLS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "coding": {
        "thing": (
            "invoice export",
            "rate limiter",
            "session cache",
            "webhook retry",
            "CSV importer",
        ),
        "task": (
            "moving auth to OAuth2",
            "porting the scheduler to asyncio",
            "splitting the billing monolith",
            "replacing the ORM layer",
        ),
        "next": ("token refresh", "the retry queue", "the admin endpoints", "load testing"),
        "path": (
            "src/billing/invoice.py",
            "app/auth/tokens.ts",
            "lib/cache/lru.go",
            "services/webhooks/retry.py",
            "pkg/importer/csv.rs",
        ),
        "folder": ("build/out/", "vendor/", "migrations/", "generated/"),
        "action": ("add a regression test", "update the API changelog", "bump the client SDK"),
        "choice": ("SQLite", "Redis Streams", "protobuf", "pnpm"),
        "alternative": ("a JSON file", "RabbitMQ", "msgpack", "yarn"),
        "reason": (
            "it needs no extra service",
            "the team already runs it",
            "the payloads are tiny",
        ),
        "target": ("the legacy v1 endpoints", "the old cron runner", "the feature flags table"),
        "case": ("test_refund_partial", "test_login_expired", "test_csv_bom"),
    },
    "ops": {
        "thing": ("backup job", "TLS renewal", "log shipper", "load balancer", "DNS failover"),
        "task": (
            "moving the cluster to Kubernetes 1.29",
            "rotating every service certificate",
            "consolidating the log pipeline",
            "retiring the old VPN",
        ),
        "next": ("the DNS cutover", "draining node pool B", "updating the runbook"),
        "path": (
            "/etc/nginx/conf.d/api.conf",
            "terraform/modules/vpc/main.tf",
            "ansible/roles/backup/tasks/main.yml",
            "k8s/ingress/values.yaml",
        ),
        "folder": ("/srv/backups/", "/var/lib/etcd/", "/opt/vault/data/"),
        "action": (
            "rotate the admin credentials",
            "file the change request",
            "update the status page",
        ),
        "choice": ("Grafana Loki", "Caddy", "restic", "Cilium"),
        "alternative": ("Elasticsearch", "HAProxy", "rsync", "Calico"),
        "reason": (
            "it halves the storage bill",
            "it renews certificates by itself",
            "the on-call team knows it",
        ),
        "target": ("the bastion host", "the staging VPC", "the nightly snapshot job"),
        "case": ("the eu-west health check", "the disk alert on node 7", "the cert probe"),
    },
    "data": {
        "thing": (
            "churn model",
            "weekly cohort report",
            "revenue dashboard",
            "dedup step",
            "forecast notebook",
        ),
        "task": (
            "rebuilding the churn model on Q3 data",
            "cleaning the CRM export",
            "backfilling the events table",
            "auditing the revenue numbers",
        ),
        "next": ("the holdout evaluation", "the dashboard refresh", "a second dedup pass"),
        "path": (
            "notebooks/churn_q3.ipynb",
            "sql/cohorts/weekly.sql",
            "etl/dedup.py",
            "reports/revenue_2025.csv",
        ),
        "folder": ("data/raw/", "warehouse/exports/", "notebooks/archive/"),
        "action": (
            "re-run the holdout split",
            "document the feature list",
            "share the notebook with finance",
        ),
        "choice": ("DuckDB", "gradient boosting", "median imputation", "Parquet"),
        "alternative": ("pandas alone", "logistic regression", "dropping the rows", "CSV"),
        "reason": (
            "it fits in memory on a laptop",
            "it beats the baseline by 4 points",
            "finance reads it directly",
        ),
        "target": ("the 2023 cohort table", "the old scoring notebook", "the raw clickstream"),
        "case": ("the February spike", "the duplicate customer ids", "the null regions"),
    },
    "writing": {
        "thing": (
            "launch post",
            "chapter outline",
            "press release",
            "style sheet",
            "newsletter draft",
        ),
        "task": (
            "rewriting the onboarding guide",
            "editing chapter 7 of the handbook",
            "drafting the launch announcement",
            "translating the FAQ",
        ),
        "next": ("the glossary", "the closing section", "the reviewer pass"),
        "path": (
            "drafts/chapter-07.md",
            "posts/launch-announcement.md",
            "guide/onboarding.rst",
            "newsletter/2026-issue-3.md",
        ),
        "folder": ("published/", "drafts/legal/", "assets/press/"),
        "action": ("fact-check the quotes", "send the draft to legal", "write the alt texts"),
        "choice": ("second person", "the shorter title", "American spelling", "footnotes"),
        "alternative": ("first person plural", "the long title", "British spelling", "endnotes"),
        "reason": ("the audience is new users", "the editor asked for it", "it reads faster aloud"),
        "target": ("the 2024 archive post", "the old pricing page copy", "the draft intro"),
        "case": ("the intro paragraph", "the pricing table caption", "the chapter 3 quote"),
    },
    "support": {
        "thing": (
            "refund macro",
            "SLA report",
            "escalation queue",
            "chatbot handoff",
            "ticket triage",
        ),
        "task": (
            "cleaning up the refund macros",
            "migrating tickets to the new helpdesk",
            "rewriting the escalation policy",
            "answering the backlog of billing tickets",
        ),
        "next": ("the enterprise queue", "the Spanish macros", "the SLA review"),
        "path": (
            "macros/refund-escalation.md",
            "policies/escalation.md",
            "kb/billing/faq.md",
            "exports/tickets_2026-03.csv",
        ),
        "folder": ("kb/published/", "exports/pii/", "macros/legal/"),
        "action": (
            "email the customer a status update",
            "close the duplicate tickets",
            "update the refund macro",
        ),
        "choice": ("a 24-hour first reply target", "one shared inbox", "tags over folders"),
        "alternative": ("a 4-hour target", "one inbox per region", "nested folders"),
        "reason": (
            "the team is six people",
            "customers asked for one address",
            "search works on tags",
        ),
        "target": ("the old Zendesk views", "the German macro set", "the VIP tag"),
        "case": ("the Acme Corp escalation", "the double-charge tickets", "the GDPR request"),
    },
}


class SlotValues:
    """Draws slot values for one session; each value is used once in the session."""

    def __init__(self, rng: random.Random, domain: str) -> None:
        self.rng = rng
        self.pools = _DOMAIN_POOLS[domain]
        self.used: set[str] = set()

    def fill(self, slots: set[str]) -> dict[str, str]:
        """A value for each slot name (unknown names raise ``KeyError``)."""
        values: dict[str, str] = {}
        product, binary = self.rng.choice(_PRODUCTS)
        exception, detail = self.rng.choice(_EXCEPTIONS)
        for slot in sorted(slots):
            values[slot] = self._draw(
                slot, product=product, binary=binary, exception=exception, detail=detail
            )
        return values

    def _draw(self, slot: str, **fixed: str) -> str:
        for _ in range(50):
            value = self._candidate(slot, **fixed)
            if value not in self.used or slot in fixed:
                self.used.add(value)
                return value
        return self._candidate(slot, **fixed) + f"-{self.rng.randrange(100, 999)}"

    def _candidate(self, slot: str, **fixed: str) -> str:
        rng = self.rng
        if slot in fixed:
            return fixed[slot]
        if slot in self.pools:
            return rng.choice(self.pools[slot])
        match slot:
            case "person":
                return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
            case "handle":
                return f"@{rng.choice(_FIRST).lower()}{rng.randrange(2, 99)}"
            case "date":
                return f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
            case "host":
                word = rng.choice(("db", "pay", "api", "ledger", "auth", "queue"))
                tier = rng.choice(("prod", "live", "main"))
                return f"{word}-{tier}-{rng.randrange(2, 40):02d}.internal"
            case "ip":
                octets = (rng.randrange(0, 255), rng.randrange(0, 255), rng.randrange(2, 250))
                return "10.{}.{}.{}:5432".format(*octets)
            case "url":
                name = rng.choice(_CODENAMES).lower()
                return (
                    f"https://staging-{rng.randrange(2, 9)}.{name}.dev/api/v{rng.randrange(2, 5)}"
                )
            case "version":
                return f"{rng.randrange(3, 17)}.{rng.randrange(0, 9)}.{rng.randrange(1, 30)}"
            case "region":
                return rng.choice(_REGIONS)
            case "number":
                return f"{rng.randrange(12, 9000):,}"
            case "percent":
                return str(rng.randrange(35, 90))
            case "done":
                return str(rng.randrange(2, 4))
            case "total":
                return str(rng.randrange(5, 8))
            case "codename":
                return rng.choice(_CODENAMES)
            case "ticket":
                return (
                    f"{rng.choice(('OPS', 'PAY', 'DATA', 'DOC', 'SUP'))}-{rng.randrange(100, 9999)}"
                )
            case "language":
                return rng.choice(_LANGUAGES)
            case "datefmt":
                return rng.choice(_DATE_FORMATS)
            case "style":
                return rng.choice(_STYLES)
            case "units":
                return rng.choice(_UNITS)
            case "runtime":
                return rng.choice(_RUNTIMES)
            case "errcode":
                return rng.choice(_ERRCODES)
            case "secret":
                return rng.choice(("Stripe live", "SendGrid", "Twilio auth", "GitHub deploy"))
            case "option_a":
                return f"{rng.randrange(7, 45)} days"
            case "option_b":
                return f"{rng.randrange(60, 400)} days"
            case "old" | "new":
                return f"{slot}_{rng.randrange(10, 99)}"
        raise KeyError(slot)
