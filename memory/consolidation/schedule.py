"""When a session no model could save is tried again: later and later after each failure,
and not on a timer any more once every model keeps refusing it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.sessions.journal import Journal, Segment

# Delays before retrying a session that no model could consolidate, by failure count.
RETRY_DELAYS = (60.0, 300.0, 900.0, 3600.0)
# After this many failures in a row where every model answered and was refused, asking
# again on a timer would only pay for the same answers: the user is asked instead.
HOLD_AFTER = 3


def held(journal: Journal, segment: Segment) -> bool:
    """Refused by every model HOLD_AFTER times in a row: not retried on a timer any more
    (it would cost the same again); the user is asked, and may retry it by hand."""
    last = journal.failures.get(segment, [])[-HOLD_AFTER:]
    return len(last) == HOLD_AFTER and all(f.rejected for f in last)


def next_retry(journal: Journal, segment: Segment) -> datetime | None:
    """When a failed segment is due again (None: never failed, due now)."""
    failures = journal.failures.get(segment, [])
    if not failures:
        return None
    delay = RETRY_DELAYS[min(len(failures), len(RETRY_DELAYS)) - 1]
    try:
        last = datetime.fromisoformat(failures[-1].time)
    except ValueError:
        return None
    return last + timedelta(seconds=delay)


def retry_note(journal: Journal, segment: Segment, now: datetime | None = None) -> str:
    """When a pending part is tried again, as every surface says it: "next retry after
    14:05" (with the date when that is not today, local time), or "due now"."""
    due = next_retry(journal, segment)
    if due is None:
        return "due now"
    local, today = due.astimezone(), (now or datetime.now(UTC)).astimezone()
    shape = "%H:%M" if local.date() == today.date() else "%Y-%m-%d %H:%M"
    return f"next retry after {local.strftime(shape)}"
