"""Run inside a D-Bus session with an unlocked gnome-keyring (see test_secret_service.py).

`set`: start Kept, open /keys, paste a key for Groq, save it, quit.
`get`: print what the OS keyring holds for Kept's Groq key, and the backend's name.
"""

from __future__ import annotations

import asyncio
import sys
import time


async def set_key(value: str) -> None:
    from app.main import KeptApp
    from app.screens.keys import KeysScreen
    from app.screens.onboarding import OnboardingScreen

    app = KeptApp()
    async with app.run_test() as pilot:
        # The keyring is read after the first frame, and onboarding (no key yet) is pushed
        # then: typed before it, "/keys" would go to onboarding instead.
        deadline = time.monotonic() + 120
        while app.ready_at is None:
            assert time.monotonic() < deadline, "the first frame was never drawn"
            await pilot.pause(0.05)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if isinstance(app.screen, OnboardingScreen):  # no key yet
            await pilot.press("escape")
        await pilot.press(*"/keys", "enter")
        # /keys reads the keys off the loop before its screen is pushed: wait for it.
        deadline = time.monotonic() + 120
        while not isinstance(app.screen, KeysScreen):
            assert time.monotonic() < deadline, f"/keys did not open: {app.screen!r}"
            await pilot.pause(0.05)
        keys = app.screen
        names = [g.name for g in keys.gateways]
        from textual.widgets import OptionList

        keys.query_one(OptionList).highlighted = names.index("groq")
        keys.query_one("#key").focus()
        await pilot.press(*value, "enter")  # tested first (the fake answers), then saved
        status, deadline = "", time.monotonic() + 120
        while time.monotonic() < deadline:  # tested, then kept: said on the status line
            status = str(keys.query_one("#key-status").render())
            if "Saved" in status or "not saved" in status or "refused" in status:
                break
            await pilot.pause(0.05)
        print(status)


def get_key() -> None:
    import keyring

    print(type(keyring.get_keyring()).__module__)
    print(keyring.get_password("kept", "groq"))


if __name__ == "__main__":
    if sys.argv[1] == "set":
        asyncio.run(set_key(sys.argv[2]))
    else:
        get_key()
