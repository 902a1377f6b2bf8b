"""``tau login``, ``tau logout`` and ``tau auth list``: subscription logins and stored keys.

A login provider (``tau.ai.oauth.providers()``: GitHub Copilot, ChatGPT/Codex, …) runs its
flow here, on the terminal: the URL to open (and the code to enter) is printed, a browser is
opened for the flows that redirect back to 127.0.0.1, and a code to paste is read from the
terminal. Any other provider of the catalog asks for its API key (read without echo), as
``llm keys set`` does. Everything goes to ``$TAU_HOME/auth.json`` (mode 0600), which key
resolution reads after the environment. Nothing printed here ever holds a token.
"""

from __future__ import annotations

import datetime
import getpass
import json
import sys
import time
from collections.abc import Callable

from tau.ai import get_providers
from tau.ai.oauth import (
    CredentialStore,
    LoginCallbacks,
    OAuthCredentials,
    OAuthError,
    OAuthProvider,
    default_store,
    providers,
)
from tau.cli.errors import UsageError

__all__ = ["auth_list", "login", "logout"]

Ask = Callable[[str], str]


def _ask(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        raise UsageError("login cancelled: no input") from None


def _pick(ask: Ask) -> str:
    logins = providers()
    print("Log in to a subscription:")
    ids = list(logins)
    for number, provider_id in enumerate(ids, 1):
        print(f"  {number}. {provider_id:<20} {logins[provider_id].name}")
    print("…or name any provider of `tau models` to store its API key.")
    answer = ask("Provider (number or id): ").strip()
    if answer.isdigit() and 1 <= int(answer) <= len(ids):
        return ids[int(answer) - 1]
    if not answer:
        raise UsageError("login cancelled: no provider chosen")
    return answer


def _callbacks(login: OAuthProvider, ask: Ask, open_browser: bool) -> LoginCallbacks:
    def on_auth(url: str, instructions: str | None) -> None:
        print(f"Open this URL to log in to {login.name}:\n\n  {url}\n", flush=True)
        if instructions:
            print(instructions, flush=True)
        if open_browser and login.uses_callback_server:
            import webbrowser

            webbrowser.open(url)

    def on_prompt(message: str, allow_empty: bool) -> str:
        while True:
            answer = ask(f"{message}: ").strip()
            if answer or allow_empty:
                return answer

    def on_progress(message: str) -> None:
        print(message, flush=True)

    manual = (
        (lambda: ask("Or paste the redirect URL here: ")) if login.uses_callback_server else None
    )
    return LoginCallbacks(on_auth, on_prompt, on_progress, manual)


def login(
    provider: str | None,
    *,
    store: CredentialStore | None = None,
    ask: Ask = _ask,
    ask_secret: Ask = getpass.getpass,
    open_browser: bool = True,
) -> int:
    """``tau login [PROVIDER]``: run PROVIDER's login (a picker without one), or store its key."""
    chosen = provider or _pick(ask)
    target = store if store is not None else default_store()
    found = providers().get(chosen)
    if found is not None:
        try:
            credentials = found.login(_callbacks(found, ask, open_browser))
        except OAuthError as exc:
            print(f"tau login: {exc}", file=sys.stderr)
            return 1
        target.set_oauth(found.id, credentials)
        account = found.account(credentials)
        print(
            f"Logged in to {found.name}"
            + (f" as {account}" if account else "")
            + f" ({target.path})."
        )
        return 0
    if chosen not in get_providers():
        from tau.cli.models import suggest

        known = [*providers(), *get_providers()]
        raise UsageError(f"unknown provider {chosen!r}{suggest(chosen, known)}")
    key = ask_secret(f"API key for {chosen} (not echoed): ").strip()
    if not key:
        raise UsageError("no key given; nothing stored")
    target.set_api_key(chosen, key)
    print(f"Stored the API key for {chosen} ({target.path}).")
    return 0


def logout(provider: str | None, *, store: CredentialStore | None = None) -> int:
    """``tau logout [PROVIDER]``: forget PROVIDER's login or key (the only one, if one)."""
    target = store if store is not None else default_store()
    stored = sorted(target.read_all())
    if provider is None:
        if len(stored) != 1:
            listed = ", ".join(stored) or "none"
            raise UsageError(f"name the provider to log out of (stored: {listed})")
        provider = stored[0]
    if not target.remove(provider):
        raise UsageError(f"nothing stored for {provider!r} (stored: {', '.join(stored) or 'none'})")
    print(f"Logged out of {provider}.")
    return 0


def _expiry(credentials: OAuthCredentials) -> str:
    left = credentials.expires - time.time()
    when = datetime.datetime.fromtimestamp(credentials.expires).strftime("%Y-%m-%d %H:%M")
    return f"{when} (expired; refreshed on next use)" if left <= 0 else when


def auth_list(*, as_json: bool = False, store: CredentialStore | None = None) -> int:
    """``tau auth list``: each stored provider, its kind, account and expiry; never a token."""
    target = store if store is not None else default_store()
    rows: list[dict[str, str]] = []
    logins = providers()
    for provider, entry in sorted(target.read_all().items()):
        if entry.get("type") == "oauth":
            credentials = target.oauth(provider)
            assert credentials is not None
            found = logins.get(provider)
            account = found.account(credentials) if found is not None else ""
            rows.append(
                {
                    "provider": provider,
                    "type": "oauth",
                    "account": account,
                    "expires": _expiry(credentials),
                }
            )
        else:
            rows.append({"provider": provider, "type": "api_key", "account": "", "expires": ""})
    if as_json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print(f"nothing stored in {target.path} (`tau login` adds a login or a key)")
        return 0
    for row in rows:
        print(
            "\t".join(
                v for v in (row["provider"], row["type"], row["account"], row["expires"]) if v
            )
        )
    return 0
