"""Credentials never leave for a model; look-alikes survive; the chat keeps what was said."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from memory import MemorySettings, MemoryStore, consolidate_pending
from memory.consolidation.redact import REDACTED, redact
from tests.fakes.provider import FakeProvider, tool_call
from tests.support import FAST_POLICY, fake_catalog, nothing_new, pending_session

ALNUM = string.ascii_letters + string.digits
rng = random.Random(13)


def chars(n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = ".".join(
    (
        b64url({"alg": "HS256", "typ": "JWT"}),
        b64url({"sub": "1234567890", "name": "Ana", "iat": 1516239022}),
        chars(43, ALNUM + "-_"),
    )
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    + "\n".join(chars(64, ALNUM + "+/") for _ in range(5))
    + "\n-----END RSA PRIVATE KEY-----"
)
OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    + "\n".join(chars(70, ALNUM + "+/") for _ in range(3))
    + "\n"
)  # pasted cut short

SECRETS = {
    "OpenAI": "sk-" + chars(48),
    "OpenAI project": "sk-proj-" + chars(40, ALNUM + "_-") + "T3BlbkFJ" + chars(40, ALNUM + "_-"),
    "Anthropic": "sk-ant-api03-" + chars(93, ALNUM + "_-") + "AA",
    "Groq": "gsk_" + chars(52),
    "GitHub classic": "ghp_" + chars(36),
    "GitHub fine-grained": "github_pat_" + chars(22) + "_" + chars(59),
    "Slack bot": "xoxb-"
    + "-".join((chars(11, string.digits), chars(13, string.digits), chars(24))),
    "Slack user": "xoxp-"
    + "-".join((chars(11, string.digits), chars(12, string.digits), chars(32, "0123456789abcdef"))),
    "Google": "AIza" + chars(35, ALNUM + "_-"),
    "AWS access key id": "AKIA" + chars(16, string.ascii_uppercase + string.digits),
    "JWT": JWT,
    "PEM private key": PEM,
    "OpenSSH private key, cut short": OPENSSH.rstrip(),
}


@pytest.mark.parametrize("name", list(SECRETS))
def test_each_credential_format_is_redacted(name: str) -> None:
    secret = SECRETS[name]
    text = f"Here is my key: {secret} — please keep it safe."
    out = redact(text)
    assert secret not in out
    assert REDACTED in out
    assert out.startswith("Here is my key: [redacted secret]")
    assert out.endswith(" — please keep it safe.")


@pytest.mark.parametrize(
    ("said", "kept", "gone"),
    [
        ("password=hunter2!", "password=", "hunter2"),
        ("my PASSWORD: correct-horse-battery", "PASSWORD: ", "correct-horse"),
        ('{"api_key": "abc123def456"}', '"api_key": "', "abc123def456"),
        (
            "export AWS_SECRET_ACCESS_KEY=" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_SECRET_ACCESS_KEY=",
            "wJalrXUtnFEMI",
        ),
        ("DB_PASSWD='s3cr3t pass'", "DB_PASSWD='", "s3cr3t"),
        ("client_secret = Zm9vYmFy", "client_secret = ", "Zm9vYmFy"),
        (
            "Authorization: Bearer abcdefghijklmnop1234567890",
            "Authorization: Bearer ",
            "abcdefghijklmnop",
        ),
        ("postgres://ana:pa55w0rd@db.example.org/app", "postgres://ana:", "pa55w0rd"),
    ],
)
def test_assigned_secrets_lose_their_value_and_keep_their_name(
    said: str, kept: str, gone: str
) -> None:
    out = redact(said)
    assert kept in out and gone not in out and REDACTED in out


NEAR_MISSES = [
    "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b, see 9fceb02.",
    "The request id was 123e4567-e89b-12d3-a456-426614174000.",
    "![chart](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
    "mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "The skeleton key is a metaphor; sk-learn is a library; a task-list-item.",
    "Set max_tokens: 1000 and use tokens wisely; the password is long.",
    "The password field is required; a token bucket limits requests.",
    "https://example.org/path?x=1 and user@example.org",
    "akia is not a key, nor AKIA1234.",
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_survive(text: str) -> None:
    assert redact(text) == text


async def test_consolidation_sends_no_secret_and_the_journal_keeps_it(fake: FakeProvider) -> None:
    store = MemoryStore(settings=MemorySettings(attempt_deadline=5.0)).ensure()
    said = "\n".join(f"{name}: {value}" for name, value in SECRETS.items())
    journal = pending_session(
        store,
        [
            {"role": "user", "content": f"Keep these for me:\n{said}\npassword=hunter2"},
            {
                "role": "assistant",
                "content": "I will not store credentials.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "search_history",
                            "arguments": json.dumps({"pattern": SECRETS["Groq"]}),
                        },
                    }
                ],
            },
            {"role": "user", "content": "Commit 3f786850e387550fdab836ed7e6dc881de23001b is mine."},
        ],
    )
    fake.default = tool_call("save_memory", nothing_new())
    (result,) = await consolidate_pending(store, fake_catalog(fake), policy=FAST_POLICY)
    assert result.saved
    sent = json.dumps([r.body for r in fake.requests])
    for value in (*SECRETS.values(), "hunter2"):
        for line in value.splitlines():
            assert line not in sent
    assert "3f786850e387550fdab836ed7e6dc881de23001b" in sent
    assert sent.count("[redacted secret]") >= len(SECRETS) + 1
    kept = json.dumps(store.find_session(journal.id).messages)
    assert SECRETS["Groq"] in kept and "hunter2" in kept  # the chat itself is unchanged
