"""Generating one local turn in a worker thread, handing each piece to the event loop.

The model is loaded once per process per file and reused: an in-process llama.cpp server
(xllamacpp) with one slot, whose prompt cache lets each step of a turn (the header, the
arguments, the next header) read only the tokens that are new. Generations on one model are
serialised by its lock. Each streamed token goes through a callback that returns true once
the stop flag is set, which ends the generation at that token.
"""

from __future__ import annotations

import json
import secrets
import threading
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import xllamacpp

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import StopReason
from tau.ai.providers.llama_cpp.decoder import (
    CALL_DELTA,
    CALL_END,
    CALL_START,
    FAIL,
    FINISH,
    TEXT,
    TEXT_START,
)
from tau.ai.providers.llama_cpp.request import (
    MAX_CALLS_PER_TURN,
    MESSAGE_PREFIX,
    Constraint,
    LocalRequest,
    arguments_grammar,
    choice_grammar,
    opening_grammar,
    schema_grammar,
)

__all__ = ["Counts", "Loaded", "Post", "Stopped", "Turn", "load"]

# The sampling llama-cpp-python applied (tau's backend before this one).
SAMPLING = {"top_k": 40, "top_p": 0.95, "min_p": 0.05}
# And its repetition penalty, for everything but the header choices: a small model at
# temperature 0 falls into loops without it (a list repeating its items, a string argument
# that never ends). llama.cpp counts the prompt's last tokens too, where llama-cpp-python
# counted only the generated ones, which in a header choice made the end of the turn (its
# token closes every turn of the prompt) less likely: the model called again.
PENALTY = {"repeat_penalty": 1.1, "repeat_last_n": 64}
# The server's HTTP port (on 127.0.0.1; tau calls it in-process and only tokenizes over it)
# takes requests with this process's key only: no other program or web page can use it.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Loaded:
    """One model file in memory, and the lock that serialises generations on it."""

    __slots__ = ("_key", "generate_lock", "n_ctx", "server")

    def __init__(self, server: xllamacpp.Server, n_ctx: int, key: str) -> None:
        self.server = server
        self.n_ctx = n_ctx
        self._key = key
        self.generate_lock = threading.Lock()

    def tokenize(self, text: str) -> list[int]:
        """The tokens the model reads for ``text`` (special tokens parsed, BOS as the model
        wants it): what a prompt costs."""
        request = urllib.request.Request(
            f"{self.server.listening_address}/tokenize",
            data=json.dumps({"content": text, "add_special": True, "parse_special": True}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._key}"},
        )
        with _NO_PROXY.open(request, timeout=60) as response:
            tokens: list[int] = json.loads(response.read())["tokens"]
        return tokens


_models: dict[tuple[Path, int], Loaded] = {}
_models_lock = threading.Lock()


def load(path: Path, n_ctx: int) -> Loaded:
    """The model at ``path`` with a context of ``n_ctx`` tokens, loaded once per process."""
    key = (path.resolve(), n_ctx)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            params = xllamacpp.CommonParams()
            params.model.path = str(key[0])
            params.n_ctx = n_ctx
            params.n_parallel = 1
            params.verbosity = -1  # llama.cpp logs every step to stderr otherwise
            params.hostnames = ["127.0.0.1"]
            api_key = secrets.token_urlsafe(32)
            params.api_keys = [api_key]
            try:
                server = xllamacpp.Server(params)
            except RuntimeError as exc:  # not a GGUF, unsupported architecture
                raise ProviderError(
                    f"cannot load local model {path}: not a GGUF file llama.cpp can run ({exc})"
                ) from exc
            loaded = _models[key] = Loaded(server, n_ctx, api_key)
        return loaded


class Stopped(Exception):
    """The consumer went away (abort, cancellation): generation ends at once."""


Post = Callable[[int, Any], None]


class Counts:
    """Tokens read and sampled so far; the stream reports them however it ends (an aborted
    generation used them too)."""

    __slots__ = ("input", "output")

    def __init__(self) -> None:
        self.input = 0
        self.output = 0


class Turn:
    """One response, generated in a worker thread."""

    def __init__(
        self,
        loaded: Loaded,
        request: LocalRequest,
        stop: threading.Event,
        post: Post,
        counts: Counts,
    ) -> None:
        self.loaded = loaded
        self.prompt = request.prompt
        self.tools = {t.name: t for t in request.tools}
        self.settings = request.settings
        self.output_schema = request.output_schema
        self.stop = stop
        self.post = post
        self.counts = counts
        self.budget = request.settings.max_tokens
        # The turn's first step reads its whole prompt afresh; the later steps reuse it from
        # llama.cpp's prompt cache. Reusing what an earlier call left there would make the
        # answer depend on that call: a prefix read in other batches comes out a little
        # different, and greedy sampling on a small model can tip over that.
        self.cached = False
        self.used_names = {call.name for call in request.previous_calls}
        self.made_calls = {
            (call.name, _canonical(call.arguments)) for call in request.previous_calls
        }

    def run(self) -> None:
        try:
            while not self.loaded.generate_lock.acquire(timeout=0.05):
                if self.stop.is_set():
                    return
            try:
                reason = self._respond()
            finally:
                self.loaded.generate_lock.release()
            self.post(FINISH, reason)
        except Stopped:
            return
        except Exception as exc:
            self.post(FAIL, f"local model failed: {exc}")

    def _prompt_size(self, prompt: str) -> int:
        size = len(self.loaded.tokenize(prompt))
        n_ctx = self.loaded.n_ctx
        if size >= n_ctx:
            raise ProviderError(
                f"prompt is {size} tokens, which exceeds the context window of {n_ctx} tokens"
            )
        return size

    def _generate(
        self,
        prompt: str,
        *,
        grammar: Constraint | None,
        temperature: float,
        on_piece: Callable[[str], None] | None,
        most: int | None = None,
        penalised: bool = True,
    ) -> tuple[str, bool]:
        """Sample until an end token, the budget or ``most`` tokens; returns (text, whether it
        ended). ``penalised``: with the repetition penalty."""
        size = self._prompt_size(prompt)
        counts = self.counts
        if not counts.input:
            counts.input = size
        limit = min(self.budget, self.loaded.n_ctx - size)
        if most is not None:
            limit = min(limit, most)
        if limit <= 0:
            return "", False
        body: dict[str, Any] = {
            "prompt": prompt,
            "n_predict": limit,
            "temperature": temperature,
            **SAMPLING,
            **(PENALTY if penalised else {}),
            **(grammar or {}),
            "stream": True,
            "cache_prompt": self.cached,
            "timings_per_token": True,  # each chunk counts the tokens sampled so far
        }
        pieces: list[str] = []
        stop = self.stop
        spent = counts.output
        sampled = 0
        finish: str | None = None
        failure: BaseException | None = None

        def on_chunk(chunk: dict[str, Any]) -> bool:
            # Whatever goes wrong here is carried out of the backend's call, never raised
            # through it; returning true ends the generation at this token.
            nonlocal sampled, finish, failure
            try:
                if "error" in chunk:
                    raise ProviderError(f"local model failed: {_error_text(chunk['error'])}")
                timings = chunk.get("timings")
                if timings is not None:
                    sampled = int(timings.get("predicted_n", sampled))
                    counts.output = spent + sampled
                if stop.is_set():
                    raise Stopped
                choice = chunk["choices"][0]
                piece = choice.get("text") or ""
                if piece:
                    pieces.append(piece)
                    if on_piece is not None:
                        on_piece(piece)
                finish = choice.get("finish_reason") or finish
            except BaseException as exc:
                failure = exc
                return True
            return False

        result = self.loaded.server.handle_completions(body, on_chunk)
        self.cached = True
        if failure is not None:
            raise failure
        if isinstance(result, dict) and "error" in result:
            raise ProviderError(f"local model failed: {_error_text(result['error'])}")
        if stop.is_set():
            raise Stopped
        self.budget -= sampled
        return "".join(pieces), finish == "stop"

    def _message(self, prompt: str, *, opening: Constraint | None = None) -> StopReason:
        """Generate text; ``opening`` constrains its first token (see the package docstring)."""
        post = self.post
        post(TEXT_START, None)
        temperature = self.settings.temperature
        if opening is not None:
            first, ended = self._generate(
                prompt, grammar=opening, temperature=temperature, on_piece=None, most=1
            )
            if first:
                post(TEXT, first)
            if ended or self.budget <= 0:
                return "stop" if ended else "length"
            prompt += first
        leading = opening is None

        def on_piece(piece: str) -> None:
            nonlocal leading
            if leading:  # the line break after the prefix is format, not text
                piece = piece.lstrip()
                leading = not piece
            if piece:
                post(TEXT, piece)

        _, ended = self._generate(prompt, grammar=None, temperature=temperature, on_piece=on_piece)
        return "stop" if ended else "length"

    def _json_answer(self, schema: dict[str, Any]) -> StopReason:
        """The answer as JSON that the grammar compiled from ``schema`` admits."""
        post = self.post
        post(TEXT_START, None)
        _, ended = self._generate(
            self.prompt,
            grammar=schema_grammar(schema),
            temperature=self.settings.temperature,
            on_piece=lambda piece: post(TEXT, piece),
        )
        return "stop" if ended else "length"

    def _respond(self) -> StopReason:
        if self.output_schema is not None:
            return self._json_answer(self.output_schema)
        if not self.tools:
            return self._message(self.prompt)
        post = self.post
        tools = list(self.tools.values())
        prompt = self.prompt
        header, chosen = self._generate(
            prompt,
            grammar=choice_grammar(tools, first=True),
            temperature=0.0,
            on_piece=None,
            penalised=False,
        )
        calls = 0
        # A header cut by the token budget (``functions.get_wea``) names no tool: stop there.
        while chosen and header.startswith("functions.") and calls < MAX_CALLS_PER_TURN:
            name = header[len("functions.") : -1]
            call_prompt = f"{prompt}{header}\n"
            grammar = arguments_grammar(self.tools[name])
            if name in self.used_names:
                # Possibly a repeat: decide once the arguments are complete.
                arguments, ended = self._generate(
                    call_prompt, grammar=grammar, temperature=0.0, on_piece=None
                )
                if ended and (name, _canonical(arguments)) in self.made_calls:
                    break
                post(CALL_START, (_call_id(), name))
                post(CALL_DELTA, arguments)
            else:
                post(CALL_START, (_call_id(), name))
                arguments, ended = self._generate(
                    call_prompt,
                    grammar=grammar,
                    temperature=0.0,
                    on_piece=lambda piece: post(CALL_DELTA, piece),
                )
            if ended or _is_object(arguments):
                post(CALL_END, None)
            # Otherwise the budget ran out inside the arguments: the call stays unfinished,
            # and the stream ends with an error naming it.
            calls += 1
            if not ended:
                return "length"
            self.used_names.add(name)
            self.made_calls.add((name, _canonical(arguments)))
            prompt = f"{call_prompt}{arguments}\n"
            header, chosen = self._generate(
                prompt,
                grammar=choice_grammar(tools, first=False),
                temperature=0.0,
                on_piece=None,
                penalised=False,
            )
        if calls:
            return "toolUse"
        if not chosen:
            return "length"
        return self._message(self.prompt + MESSAGE_PREFIX, opening=opening_grammar())


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _is_object(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def _canonical(arguments: str | dict[str, Any]) -> str:
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return arguments
        return json.dumps(parsed, sort_keys=True)
    return json.dumps(arguments, sort_keys=True)
