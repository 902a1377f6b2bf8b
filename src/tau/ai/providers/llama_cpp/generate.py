"""Generating one local turn in a worker thread, handing each piece to the event loop.

The model is loaded once per process per file and reused; generations on one model are
serialised by its lock. The worker checks a stop flag at every token, so an abort stops it at
once.
"""

from __future__ import annotations

import codecs
import json
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import StopReason
from tau.ai.providers.llama_cpp.request import (
    MAX_CALLS_PER_TURN,
    MESSAGE_PREFIX,
    LocalRequest,
    arguments_grammar,
    choice_grammar,
    opening_grammar,
    schema_grammar,
)

__all__ = ["Counts", "Loaded", "Post", "Stopped", "Turn", "load"]


class Loaded:
    """One model file in memory, and the lock that serialises generations on it."""

    __slots__ = ("end_tokens", "generate_lock", "llama")

    def __init__(self, llama: Llama) -> None:
        self.llama = llama
        self.generate_lock = threading.Lock()
        ends = {llama.token_eos()}
        for marker in (b"<|im_end|>", b"<|endoftext|>"):
            ids = llama.tokenize(marker, add_bos=False, special=True)
            if len(ids) == 1:
                ends.add(ids[0])
        self.end_tokens = frozenset(ends)


_models: dict[tuple[Path, int], Loaded] = {}
_models_lock = threading.Lock()


def load(path: Path, n_ctx: int) -> Loaded:
    """The model at ``path`` with a context of ``n_ctx`` tokens, loaded once per process."""
    key = (path.resolve(), n_ctx)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            try:
                llama = Llama(
                    model_path=str(key[0]),
                    n_ctx=n_ctx,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:  # not a GGUF, unsupported architecture
                raise ProviderError(f"cannot load local model {path}: {exc}") from exc
            loaded = _models[key] = Loaded(llama)
        return loaded


class Stopped(Exception):
    """The consumer went away (abort, cancellation): generation ends at once."""


# What the worker hands to the event loop: (kind, value).
TEXT_START, TEXT, CALL_START, CALL_DELTA, CALL_END, FINISH, FAIL = range(7)

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
        self.llama = loaded.llama
        self.prompt = request.prompt
        self.tools = {t.name: t for t in request.tools}
        self.settings = request.settings
        self.output_schema = request.output_schema
        self.stop = stop
        self.post = post
        self.counts = counts
        self.budget = request.settings.max_tokens
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

    def _tokens(self, text: str) -> list[int]:
        tokens = self.llama.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        n_ctx = self.llama.n_ctx()
        if len(tokens) >= n_ctx:
            raise ProviderError(
                f"prompt is {len(tokens)} tokens, which exceeds the context window of "
                f"{n_ctx} tokens"
            )
        return tokens

    def _generate(
        self,
        prompt: str,
        *,
        grammar: LlamaGrammar | None,
        temperature: float,
        on_piece: Callable[[str], None] | None,
        most: int | None = None,
    ) -> tuple[str, bool]:
        """Sample until an end token, the budget or ``most`` tokens; returns (text, whether it
        ended)."""
        tokens = self._tokens(prompt)
        counts = self.counts
        if not counts.input:
            counts.input = len(tokens)
        limit = min(self.budget, self.llama.n_ctx() - len(tokens))
        if most is not None:
            limit = min(limit, most)
        if limit <= 0:
            return "", False
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces: list[str] = []
        end_tokens = self.loaded.end_tokens
        llama = self.llama
        stop = self.stop
        count = 0
        ended = False
        for token in llama.generate(
            tokens,
            temp=temperature,
            top_k=40,
            top_p=0.95,
            min_p=0.05,
            repeat_penalty=1.1,
            grammar=grammar,
        ):
            if stop.is_set():
                raise Stopped
            count += 1
            counts.output += 1
            if token in end_tokens:
                ended = True
                break
            piece = decoder.decode(llama.detokenize([token]))
            if piece:
                pieces.append(piece)
                if on_piece is not None:
                    on_piece(piece)
            if count >= limit:
                break
        self.budget -= count
        return "".join(pieces), ended

    def _message(self, prompt: str, *, opening: LlamaGrammar | None = None) -> StopReason:
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
            prompt, grammar=choice_grammar(tools, first=True), temperature=0.0, on_piece=None
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
                prompt, grammar=choice_grammar(tools, first=False), temperature=0.0, on_piece=None
            )
        if calls:
            return "toolUse"
        if not chosen:
            return "length"
        return self._message(self.prompt + MESSAGE_PREFIX, opening=opening_grammar())


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
