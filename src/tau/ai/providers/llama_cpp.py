"""``llama-cpp``: GGUF models in-process through llama-cpp-python (extra ``[local]``).

The model is loaded once per process per file and reused; generation runs in a worker thread
that hands each piece of output to the event loop with ``call_soon_threadsafe``, so the loop
never blocks, and checks an abort flag at every token, so an abort stops it at once.

Prompts are ChatML. Tools follow the protocol of llama-cpp-python's ``chatml-function-calling``
chat format (the system prompt lists ``functions.<name>:`` with each JSON schema; the model
answers ``message:`` then text, or ``functions.<name>:`` then JSON arguments), but tau drives
it itself, grammar-constrained at every step, because that chat format cannot stream when
``tool_choice`` is ``"auto"`` (and drops tool results from the prompt). A tool-enabled turn is:

1. a choice constrained to ``"message:"`` or one of the ``functions.<name>:`` headers (not shown);
2. for a message, the text, streamed as text deltas;
3. for a call, its arguments constrained by the tool's JSON schema and streamed as tool-call
   deltas, then a constrained choice of another call or the end of the turn.

A message is generated after ``message:`` and a line break, as the format says, and its first
token may not open a placeholder or an object (``<``, ``{``). The reason: a small model copies.
Given a prefix that occurs in its context, it continues with whatever followed that prefix
there. After ``message:\n`` the system prompt's format example goes on with ``<message>``;
forcing the generation past that placeholder (``message:\n<message>\n``, as tau once did)
only moved the copy one line on, and the answer became the system prompt's next line, "To call
functions, begin each call with…". After a call, ``{`` starts a copy of its arguments. Banning
those first tokens (a one-token grammar) breaks the copy at its start; the rest of the text is
free.

Small models tend to repeat a call whose result they already have instead of answering. A call
identical (same name and arguments) to one already made since the last user message is
therefore not made again: the turn becomes a message instead. Only a call to a tool already
used in that span is held back until its arguments are complete; others stream.

Usage is counted in the model's own tokens: ``input`` is the prompt, ``output`` every token the
model sampled (the constrained choices included), also when the generation is aborted: tokens
already read and sampled were spent. Generation uses llama-cpp-python's default
thread count (half the CPUs).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llama_cpp import Llama
from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

from tau.ai.builder import MessageBuilder, ProviderError, launch_stream
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.local_models import gguf_path
from tau.ai.providers.simple_options import base_options
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.ai.utils.cost import calculate_cost
from tau.ai.utils.sanitize import sanitize_surrogates

__all__ = ["stream", "stream_simple"]

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
DEFAULT_TEMPERATURE = 0.0  # greedy: small models wander when sampled, and runs repeat
MAX_CALLS_PER_TURN = 8
# A message starts with the header of the format the system prompt shows (see the module
# docstring for why its first token is constrained).
MESSAGE_PREFIX = "message:\n"
# One token that starts with neither whitespace nor the opener of a placeholder or an object.
_OPENING_GBNF = "root ::= [^<{\\x00-\\x20] [^\\x00-\\x20]*\n"

# --------------------------------------------------------------------------- loaded models


class _Loaded:
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


_models: dict[tuple[Path, int], _Loaded] = {}
_models_lock = threading.Lock()


def _load(path: Path, n_ctx: int) -> _Loaded:
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
            loaded = _models[key] = _Loaded(llama)
        return loaded


# --------------------------------------------------------------------------- prompt


def _tool_section(tools: Sequence[Tool]) -> str:
    lines = ["", "", "You have access to the following functions:"]
    for tool in tools:
        lines.append("")
        lines.append(f"functions.{tool.name}:")
        if tool.description:
            lines.append(f"// {tool.description}")
        lines.append(json.dumps(_without_titles(tool.json_schema)))
    lines.extend(
        [
            "",
            "Respond to the user with either a single message or one or more function calls.",
            "",
            "To respond with a message, begin with 'message:', in this format:",
            "",
            "message:",
            "<message>",
            "",
            "To call functions, begin each call with 'functions.<function_name>:', in this format:",
            "",
            "functions.<function_name>:",
            '{ "arg1": "value1", "arg2": "value2" }',
        ]
    )
    return "\n".join(lines)


def _without_titles(schema: Any) -> Any:
    """The schema without pydantic's ``title`` keywords: noise that costs a small model its focus."""
    if isinstance(schema, list):
        return [_without_titles(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            # Names here are property names, not keywords: a property may be called "title".
            out[key] = {name: _without_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _without_titles(value)
    return out


def _turn(role: str, body: str) -> str:
    return f"<|im_start|>{role}\n{body}<|im_end|>\n"


def _user_text(content: str | list[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        b.text if isinstance(b, TextContent) else "(image omitted: this model reads text only)"
        for b in content
    )


def render_prompt(context: Context) -> str:
    """The ChatML prompt for ``context``, ending where the assistant's answer begins."""
    tools = context.tools or []
    system = context.system_prompt or DEFAULT_SYSTEM_PROMPT
    parts = [_turn("system", system + (_tool_section(tools) if tools else ""))]
    for message in context.messages:
        if isinstance(message, UserMessage):
            parts.append(_turn("user", _user_text(message.content)))
        elif isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted") and not message.content:
                continue
            body: list[str] = []
            text = message.text
            if text:
                body.append(f"{MESSAGE_PREFIX}{text}" if tools else text)
            for call in message.tool_calls:
                body.append(f"functions.{call.name}:\n{json.dumps(call.arguments)}")
            if body:
                parts.append(_turn("assistant", "\n".join(body)))
        elif isinstance(message, ToolResultMessage):
            # ChatML has no tool role this model knows: the result comes back as a user turn
            # that names the function, which is what lets it answer instead of calling again.
            label = "error" if message.is_error else "result"
            parts.append(
                _turn(
                    "user", f"functions.{message.tool_name} {label}:\n{_user_text(message.content)}"
                )
            )
    parts.append("<|im_start|>assistant\n")
    # Lone surrogates (undecodable bytes of a terminal) cannot be encoded for the tokenizer.
    return sanitize_surrogates("".join(parts))


def _literal(text: str) -> str:
    # GBNF string literals use JSON's escapes.
    return json.dumps(text)


def _choice_grammar(tools: Sequence[Tool], *, first: bool) -> LlamaGrammar:
    calls = " | ".join(_literal(f"functions.{t.name}:") for t in tools)
    # The first choice must pick one; after a call, the empty match lets the turn end.
    root = f'root ::= "message:" | {calls}\n' if first else f"root ::= ({calls})?\n"
    return LlamaGrammar.from_string(root, verbose=False)


def _arguments_grammar(tool: Tool) -> LlamaGrammar:
    try:
        return LlamaGrammar.from_json_schema(json.dumps(tool.json_schema), verbose=False)
    except Exception:
        # A schema the converter cannot express still gets well-formed JSON.
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)


# --------------------------------------------------------------------------- generation


class _Stopped(Exception):
    """The consumer went away (abort, cancellation): generation ends at once."""


@dataclass(slots=True)
class _Settings:
    temperature: float
    max_tokens: int


class _Counts:
    """Tokens read and sampled so far; the stream reports them however it ends (an aborted
    generation used them too)."""

    __slots__ = ("input", "output")

    def __init__(self) -> None:
        self.input = 0
        self.output = 0


# What the worker hands to the event loop: (kind, value).
_TEXT_START, _TEXT, _CALL_START, _CALL_DELTA, _CALL_END, _FINISH, _FAIL = range(7)

Post = Callable[[int, Any], None]


class _Turn:
    """One response, generated in a worker thread."""

    def __init__(
        self,
        loaded: _Loaded,
        prompt: str,
        tools: Sequence[Tool],
        previous_calls: Sequence[ToolCall],
        settings: _Settings,
        stop: threading.Event,
        post: Post,
        counts: _Counts,
    ) -> None:
        self.loaded = loaded
        self.llama = loaded.llama
        self.prompt = prompt
        self.tools = {t.name: t for t in tools}
        self.settings = settings
        self.stop = stop
        self.post = post
        self.counts = counts
        self.budget = settings.max_tokens
        self.used_names = {call.name for call in previous_calls}
        self.made_calls = {(call.name, _canonical(call.arguments)) for call in previous_calls}

    def run(self) -> None:
        try:
            while not self.loaded.generate_lock.acquire(timeout=0.05):
                if self.stop.is_set():
                    return
            try:
                reason = self._respond()
            finally:
                self.loaded.generate_lock.release()
            self.post(_FINISH, reason)
        except _Stopped:
            return
        except Exception as exc:
            self.post(_FAIL, f"local model failed: {exc}")

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
                raise _Stopped
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
        """Generate text; ``opening`` constrains its first token (see the module docstring)."""
        post = self.post
        post(_TEXT_START, None)
        temperature = self.settings.temperature
        if opening is not None:
            first, ended = self._generate(
                prompt, grammar=opening, temperature=temperature, on_piece=None, most=1
            )
            if first:
                post(_TEXT, first)
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
                post(_TEXT, piece)

        _, ended = self._generate(prompt, grammar=None, temperature=temperature, on_piece=on_piece)
        return "stop" if ended else "length"

    def _respond(self) -> StopReason:
        if not self.tools:
            return self._message(self.prompt)
        post = self.post
        tools = list(self.tools.values())
        prompt = self.prompt
        header, chosen = self._generate(
            prompt, grammar=_choice_grammar(tools, first=True), temperature=0.0, on_piece=None
        )
        calls = 0
        # A header cut by the token budget (``functions.get_wea``) names no tool: stop there.
        while chosen and header.startswith("functions.") and calls < MAX_CALLS_PER_TURN:
            name = header[len("functions.") : -1]
            call_prompt = f"{prompt}{header}\n"
            grammar = _arguments_grammar(self.tools[name])
            if name in self.used_names:
                # Possibly a repeat: decide once the arguments are complete.
                arguments, ended = self._generate(
                    call_prompt, grammar=grammar, temperature=0.0, on_piece=None
                )
                if ended and (name, _canonical(arguments)) in self.made_calls:
                    break
                post(_CALL_START, (_call_id(), name))
                post(_CALL_DELTA, arguments)
            else:
                post(_CALL_START, (_call_id(), name))
                arguments, ended = self._generate(
                    call_prompt,
                    grammar=grammar,
                    temperature=0.0,
                    on_piece=lambda piece: post(_CALL_DELTA, piece),
                )
            if ended or _is_object(arguments):
                post(_CALL_END, None)
            # Otherwise the budget ran out inside the arguments: the call stays unfinished,
            # and the stream ends with an error naming it.
            calls += 1
            if not ended:
                return "length"
            self.used_names.add(name)
            self.made_calls.add((name, _canonical(arguments)))
            prompt = f"{call_prompt}{arguments}\n"
            header, chosen = self._generate(
                prompt, grammar=_choice_grammar(tools, first=False), temperature=0.0, on_piece=None
            )
        if calls:
            return "toolUse"
        if not chosen:
            return "length"
        opening = LlamaGrammar.from_string(_OPENING_GBNF, verbose=False)
        return self._message(self.prompt + MESSAGE_PREFIX, opening=opening)


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


def _calls_since_last_user(context: Context) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for message in reversed(context.messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, AssistantMessage):
            calls.extend(message.tool_calls)
    return calls


# --------------------------------------------------------------------------- stream


def _settings(model: Model, options: Mapping[str, Any]) -> _Settings:
    temperature = options.get("temperature")
    max_tokens = options.get("max_tokens") or model.max_tokens
    return _Settings(
        temperature=DEFAULT_TEMPERATURE if temperature is None else float(temperature),
        max_tokens=int(max_tokens),
    )


def stream(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """Stream one response of a local GGUF model."""

    async def run(out: MessageBuilder) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        stop = threading.Event()

        def post(kind: int, value: Any) -> None:
            if stop.is_set():
                raise _Stopped
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
            except RuntimeError:  # the loop closed under us
                stop.set()
                raise _Stopped from None

        path = gguf_path(model)
        settings = _settings(model, options)
        prompt = render_prompt(context)
        tools = list(context.tools or [])
        previous_calls = _calls_since_last_user(context)
        counts = _Counts()

        def work() -> None:
            try:
                loaded = _load(path, model.context_window)
            except Exception as exc:
                with contextlib.suppress(_Stopped):
                    post(_FAIL, str(exc))
                return
            _Turn(loaded, prompt, tools, previous_calls, settings, stop, post, counts).run()

        out.start()
        threading.Thread(target=work, name="tau-llama-cpp", daemon=True).start()
        try:
            await _consume(out, queue)
        finally:
            stop.set()
            usage = Usage(input=counts.input, output=counts.output)
            usage.total_tokens = counts.input + counts.output
            calculate_cost(out.model, usage)
            out.message.usage = usage

    return launch_stream(model, options, run)


async def _consume(out: MessageBuilder, queue: asyncio.Queue[tuple[int, Any]]) -> None:
    index = -1
    while True:
        kind, value = await queue.get()
        if kind == _TEXT:
            out.text_delta(index, value)
        elif kind == _CALL_DELTA:
            out.tool_call_delta(index, value)
        elif kind == _TEXT_START:
            index = out.open_text()
        elif kind == _CALL_START:
            index = out.open_tool_call(value[0], value[1])
        elif kind == _CALL_END:
            out.close_tool_call(index)
        elif kind == _FINISH:
            out.message.stop_reason = value
            return
        else:
            raise ProviderError(value)


def stream_simple(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """Like :func:`stream`; local models have no reasoning setting, so ``reasoning`` is ignored."""
    return stream(model, context, base_options(model, options))
