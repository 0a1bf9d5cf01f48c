"""Builds provider replies with the official SDKs' own models and reads them with the SDKs' own
clients, for arena's conformance test (crates/providers/src/tests/sdk.rs).

Usage: python3 tests/sdk/replies.py OUTDIR

For every case (a wire format and a reply shape: plain, reasoning, tools, tools with reasoning,
each also streamed), writes OUTDIR/CASE.json: {"format", "stream", "content_type", "body" (the
HTTP body as served, JSON or server-sent events), "read" (what the SDK's client read from it,
in arena's terms)}. The bodies are built as SDK model objects and dumped with `model_dump`
(by alias, which is the REST API's camelCase spelling for google-genai); they are then served by a local HTTP server and read back
by the SDK's client (its own parsing and, for streams, its own accumulation). Exits 2 when an
SDK is missing.

"read" holds: content (the answer text), reasoning (the readable thinking, joined by blank
lines, or null), finish_reason (in OpenAI chat's words, as arena reports it for every format),
usage (prompt, completion, total, reasoning, cached, cache_write tokens, each null when the
reply does not say), tool_calls ([{id, name, arguments (a JSON value)}]) and, for Anthropic,
thinking_blocks (the thinking and redacted_thinking blocks with their signatures, which go
back in text and tool dialogs alike), for Responses reasoning_items (the reasoning items that go back in a
tool dialog) and for Gemini signatures (each call's thoughtSignature).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    import anthropic
    import openai
    from google import genai
    from google.genai import types as gt
except ImportError as e:  # pragma: no cover
    print(f"missing SDK: {e}", file=sys.stderr)
    sys.exit(2)

from anthropic import types as at
from openai.types import chat as oc
from openai.types import responses as orr

MODEL = "conformance-model"
SERVED = {"body": "", "content_type": "application/json"}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("content-length", 0))
        self.rfile.read(length)
        body = SERVED["body"].encode()
        self.send_response(200)
        self.send_header("content-type", SERVED["content_type"])
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def sse(events, named=True):
    """Server-sent events of (name, model) pairs, as the provider sends them."""
    out = []
    for name, event in events:
        data = event if isinstance(event, str) else json.dumps(dump(event))
        out.append((f"event: {name}\n" if named and name else "") + f"data: {data}\n\n")
    return "".join(out)


def dump(model):
    # google-genai's models dump their REST (camelCase) spelling by alias, as the API sends it.
    return model.model_dump(mode="json", exclude_none=True, by_alias=True)


# --- OpenAI chat completions -------------------------------------------------------------------

CHAT_USAGE = dict(
    prompt_tokens=1800, completion_tokens=420, total_tokens=2220,
    prompt_tokens_details=dict(cached_tokens=1024, cache_write_tokens=256),
    completion_tokens_details=dict(reasoning_tokens=300),
)
CHAT_CALLS = [
    dict(id="call_a1", type="function", function=dict(name="get_legal_moves", arguments="{}")),
    dict(id="call_b2", type="function", function=dict(name="make_move", arguments='{"move":"e2e4"}')),
]


def chat_completion(tools):
    message = dict(role="assistant", content=None if tools else "I play <move>e2e4</move>.")
    if tools:
        message["tool_calls"] = CHAT_CALLS
    return oc.ChatCompletion.model_validate(dict(
        id="chatcmpl-1", object="chat.completion", created=1765000000, model=MODEL,
        choices=[dict(index=0, message=message, finish_reason="tool_calls" if tools else "stop")],
        usage=CHAT_USAGE,
    ))


def chat_chunks(tools):
    base = dict(id="chatcmpl-1", object="chat.completion.chunk", created=1765000000, model=MODEL)
    chunks = [dict(choices=[dict(index=0, delta=dict(role="assistant", content=""))])]
    if tools:
        for i, call in enumerate(CHAT_CALLS):
            args = call["function"]["arguments"]
            chunks.append(dict(choices=[dict(index=0, delta=dict(tool_calls=[dict(
                index=i, id=call["id"], type="function",
                function=dict(name=call["function"]["name"], arguments=args[:1]))]))]))
            if len(args) > 1:
                chunks.append(dict(choices=[dict(index=0, delta=dict(tool_calls=[dict(
                    index=i, function=dict(arguments=args[1:]))]))]))
        chunks.append(dict(choices=[dict(index=0, delta={}, finish_reason="tool_calls")]))
    else:
        for piece in ["I play ", "<move>e2e4", "</move>."]:
            chunks.append(dict(choices=[dict(index=0, delta=dict(content=piece))]))
        chunks.append(dict(choices=[dict(index=0, delta={}, finish_reason="stop")]))
    chunks.append(dict(choices=[], usage=CHAT_USAGE))
    events = [(None, oc.ChatCompletionChunk.model_validate({**base, **c})) for c in chunks]
    return sse(events, named=False) + "data: [DONE]\n\n"


def read_chat(completion):
    choice = completion.choices[0]
    u = completion.usage
    return dict(
        content=choice.message.content or "",
        reasoning=None,
        finish_reason=choice.finish_reason,
        usage=dict(
            prompt=u.prompt_tokens, completion=u.completion_tokens, total=u.total_tokens,
            reasoning=u.completion_tokens_details.reasoning_tokens,
            cached=u.prompt_tokens_details.cached_tokens,
            cache_write=u.prompt_tokens_details.cache_write_tokens,
        ),
        tool_calls=[dict(id=c.id, name=c.function.name, arguments=json.loads(c.function.arguments))
                    for c in (choice.message.tool_calls or [])],
    )


def sdk_chat(client, stream):
    messages = [{"role": "user", "content": "Your move?"}]
    if not stream:
        return read_chat(client.chat.completions.create(model=MODEL, messages=messages))
    with client.chat.completions.stream(model=MODEL, messages=messages) as s:
        for _ in s:
            pass
        return read_chat(s.get_final_completion())


# --- OpenAI Responses -------------------------------------------------------------------------

RESP_USAGE = dict(
    input_tokens=1800, output_tokens=420, total_tokens=2220,
    input_tokens_details=dict(cached_tokens=1024, cache_write_tokens=32),
    output_tokens_details=dict(reasoning_tokens=300),
)


def responses_output(reasoning, tools):
    output = []
    if reasoning:
        output.append(dict(id="rs_1", type="reasoning", summary=[dict(
            type="summary_text", text="The Sicilian calls for the open game.")],
            encrypted_content="gAAAAB-opaque"))
    if tools:
        output.append(dict(type="function_call", id="fc_1", call_id="call_a1",
                           name="get_legal_moves", arguments="{}", status="completed"))
        output.append(dict(type="function_call", id="fc_2", call_id="call_b2",
                           name="make_move", arguments='{"move":"e2e4"}', status="completed"))
    else:
        output.append(dict(id="msg_1", type="message", role="assistant", status="completed",
                           content=[dict(type="output_text", text="I play <move>e2e4</move>.",
                                         annotations=[])]))
    return output


def response(reasoning, tools, status="completed", output=None):
    return orr.Response.model_validate(dict(
        id="resp_1", object="response", created_at=1765000000, model=MODEL, status=status,
        output=responses_output(reasoning, tools) if output is None else output,
        parallel_tool_calls=True, tool_choice="auto", tools=[],
        usage=RESP_USAGE if status == "completed" else None,
    ))


def responses_events(reasoning, tools):
    final = response(reasoning, tools)
    seq = iter(range(1000))
    events = [("response.created", orr.ResponseCreatedEvent(
        type="response.created", sequence_number=next(seq),
        response=response(reasoning, tools, status="in_progress", output=[])))]
    for index, item in enumerate(final.output):
        events.append(("response.output_item.added", orr.ResponseOutputItemAddedEvent(
            type="response.output_item.added", sequence_number=next(seq), output_index=index,
            item=item)))
        if item.type == "message":
            for piece in ["I play ", "<move>e2e4", "</move>."]:
                events.append(("response.output_text.delta", orr.ResponseTextDeltaEvent(
                    type="response.output_text.delta", sequence_number=next(seq),
                    item_id=item.id, output_index=index, content_index=0, delta=piece,
                    logprobs=[])))
        if item.type == "reasoning":
            events.append(("response.reasoning_summary_text.delta",
                           orr.ResponseReasoningSummaryTextDeltaEvent(
                               type="response.reasoning_summary_text.delta",
                               sequence_number=next(seq), item_id=item.id, output_index=index,
                               summary_index=0, delta=item.summary[0].text)))
        events.append(("response.output_item.done", orr.ResponseOutputItemDoneEvent(
            type="response.output_item.done", sequence_number=next(seq), output_index=index,
            item=item)))
    events.append(("response.completed", orr.ResponseCompletedEvent(
        type="response.completed", sequence_number=next(seq), response=final)))
    return sse(events)


def read_responses(r):
    u = r.usage
    reasoning = [p.text for item in r.output if item.type == "reasoning"
                 for p in list(item.summary) + list(item.content or [])]
    calls = [item for item in r.output if item.type == "function_call"]
    return dict(
        content=r.output_text,
        reasoning="\n\n".join(reasoning) or None,
        finish_reason="stop" if r.status == "completed" else r.status,
        usage=dict(
            prompt=u.input_tokens, completion=u.output_tokens, total=u.total_tokens,
            reasoning=u.output_tokens_details.reasoning_tokens,
            cached=u.input_tokens_details.cached_tokens,
            cache_write=u.input_tokens_details.cache_write_tokens,
        ),
        tool_calls=[dict(id=c.call_id, name=c.name, arguments=json.loads(c.arguments)) for c in calls],
        # What goes back before the calls in a tool dialog (store: false): each reasoning item as
        # an input item, with its encrypted content.
        reasoning_items=[dict(type="reasoning", id=item.id,
                              summary=[s.model_dump(mode="json") for s in item.summary],
                              **({"encrypted_content": item.encrypted_content}
                                 if item.encrypted_content else {}))
                         for item in r.output if item.type == "reasoning"] if calls else [],
    )


def sdk_responses(client, stream):
    if not stream:
        return read_responses(client.responses.create(model=MODEL, input="Your move?"))
    with client.responses.stream(model=MODEL, input="Your move?") as s:
        for _ in s:
            pass
        return read_responses(s.get_final_response())


# --- Anthropic messages -----------------------------------------------------------------------

THINKING = "Black answered 1.e4 with 1...c5, the Sicilian."


def anthropic_blocks(reasoning, tools):
    blocks = []
    if reasoning:
        blocks.append(dict(type="thinking", thinking=THINKING, signature="EqQBCkYIBRgCKkD-sig"))
        blocks.append(dict(type="redacted_thinking", data="EmwKAhgBEgy-redacted"))
    if tools:
        blocks.append(dict(type="text", text="Let me look first."))
        blocks.append(dict(type="tool_use", id="toolu_01", name="get_legal_moves", input={}))
        blocks.append(dict(type="tool_use", id="toolu_02", name="make_move", input={"move": "e2e4"}))
    else:
        blocks.append(dict(type="text", text="I play <move>e2e4</move>."))
    return blocks


ANTHROPIC_USAGE = dict(
    input_tokens=21, cache_creation_input_tokens=1800, cache_read_input_tokens=512,
    output_tokens=393, output_tokens_details=dict(thinking_tokens=250),
)


def anthropic_message(reasoning, tools):
    return at.Message.model_validate(dict(
        id="msg_01", type="message", role="assistant", model=MODEL,
        content=anthropic_blocks(reasoning, tools),
        stop_reason="tool_use" if tools else "end_turn", stop_sequence=None,
        usage=ANTHROPIC_USAGE,
    ))


def anthropic_events(reasoning, tools):
    final = anthropic_message(reasoning, tools)
    start = final.model_copy(update=dict(
        content=[], stop_reason=None,
        usage=at.Usage(input_tokens=21, cache_creation_input_tokens=1800,
                       cache_read_input_tokens=512, output_tokens=1)))
    events = [("message_start", at.RawMessageStartEvent(type="message_start", message=start))]
    for index, block in enumerate(final.content):
        if block.type == "thinking":
            first = at.ThinkingBlock(type="thinking", thinking="", signature="")
            deltas = [at.ThinkingDelta(type="thinking_delta", thinking=block.thinking[:20]),
                      at.ThinkingDelta(type="thinking_delta", thinking=block.thinking[20:]),
                      at.SignatureDelta(type="signature_delta", signature=block.signature)]
        elif block.type == "redacted_thinking":
            first, deltas = block, []
        elif block.type == "text":
            first = at.TextBlock(type="text", text="")
            deltas = [at.TextDelta(type="text_delta", text=block.text[:6]),
                      at.TextDelta(type="text_delta", text=block.text[6:])]
        else:
            first = at.ToolUseBlock(type="tool_use", id=block.id, name=block.name, input={})
            text = json.dumps(block.input)
            deltas = [at.InputJSONDelta(type="input_json_delta", partial_json=text[:3]),
                      at.InputJSONDelta(type="input_json_delta", partial_json=text[3:])]
        events.append(("content_block_start", at.RawContentBlockStartEvent(
            type="content_block_start", index=index, content_block=first)))
        for delta in deltas:
            events.append(("content_block_delta", at.RawContentBlockDeltaEvent(
                type="content_block_delta", index=index, delta=delta)))
        events.append(("content_block_stop", at.RawContentBlockStopEvent(
            type="content_block_stop", index=index)))
    events.append(("message_delta", at.RawMessageDeltaEvent.model_validate(dict(
        type="message_delta", delta=dict(stop_reason=final.stop_reason, stop_sequence=None),
        usage=dict(output_tokens=393, input_tokens=21, cache_creation_input_tokens=1800,
                   cache_read_input_tokens=512, output_tokens_details=dict(thinking_tokens=250))))))
    events.append(("message_stop", at.RawMessageStopEvent(type="message_stop")))
    return sse(events)


ANTHROPIC_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                  "refusal": "content_filter", "tool_use": "tool_calls"}


def read_anthropic(m):
    u = m.usage
    details = u.output_tokens_details
    return dict(
        content="".join(b.text for b in m.content if b.type == "text"),
        reasoning="\n\n".join(b.thinking for b in m.content if b.type == "thinking") or None,
        finish_reason=ANTHROPIC_STOP.get(m.stop_reason, m.stop_reason),
        usage=dict(
            prompt=u.input_tokens + (u.cache_creation_input_tokens or 0) + (u.cache_read_input_tokens or 0),
            completion=u.output_tokens,
            total=u.input_tokens + (u.cache_creation_input_tokens or 0)
            + (u.cache_read_input_tokens or 0) + u.output_tokens,
            reasoning=details.thinking_tokens if details else None,
            cached=u.cache_read_input_tokens, cache_write=u.cache_creation_input_tokens,
        ),
        tool_calls=[dict(id=b.id, name=b.name, arguments=b.input) for b in m.content if b.type == "tool_use"],
        thinking_blocks=[b.model_dump(mode="json", exclude_none=True) for b in m.content
                         if b.type in ("thinking", "redacted_thinking")],
    )


def sdk_anthropic(client, stream):
    args = dict(model=MODEL, max_tokens=1024, messages=[{"role": "user", "content": "Your move?"}])
    if not stream:
        return read_anthropic(client.messages.create(**args))
    with client.messages.stream(**args) as s:
        for _ in s:
            pass
        return read_anthropic(s.get_final_message())


# --- Gemini -----------------------------------------------------------------------------------

GEMINI_USAGE = dict(prompt_token_count=1800, candidates_token_count=120, thoughts_token_count=300,
                    cached_content_token_count=1024, total_token_count=2220)


def gemini_parts(reasoning, tools):
    parts = []
    if reasoning:
        parts.append(gt.Part(text=THINKING, thought=True))
    if tools:
        parts.append(gt.Part(function_call=gt.FunctionCall(id="fc_1", name="get_legal_moves", args={}),
                             thought_signature=b"sig-one"))
        parts.append(gt.Part(function_call=gt.FunctionCall(name="make_move", args={"move": "e2e4"})))
    else:
        parts.append(gt.Part(text="I play <move>e2e4</move>."))
    return parts


def gemini_response(parts, finish=True, usage=True):
    return gt.GenerateContentResponse(
        candidates=[gt.Candidate(content=gt.Content(role="model", parts=parts), index=0,
                                 finish_reason=gt.FinishReason.STOP if finish else None)],
        usage_metadata=gt.GenerateContentResponseUsageMetadata(**GEMINI_USAGE) if usage else None,
        model_version=MODEL, response_id="resp-1",
    )


def gemini_events(reasoning, tools):
    parts = gemini_parts(reasoning, tools)
    chunks = [gemini_response([p], finish=(i == len(parts) - 1), usage=(i == len(parts) - 1))
              for i, p in enumerate(parts)]
    return sse([(None, c) for c in chunks], named=False)


GEMINI_STOP = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter"}


def read_gemini(chunks):
    parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]
    last = chunks[-1]
    u = last.usage_metadata
    finish = last.candidates[0].finish_reason
    calls = [p for p in parts if p.function_call]
    return dict(
        content="".join(p.text for p in parts if p.text and not p.thought),
        reasoning="\n\n".join(p.text for p in parts if p.text and p.thought) or None,
        finish_reason=GEMINI_STOP.get(finish.value, finish.value.lower()) if finish else None,
        usage=dict(
            prompt=u.prompt_token_count,
            completion=(u.candidates_token_count or 0) + (u.thoughts_token_count or 0),
            total=u.total_token_count, reasoning=u.thoughts_token_count or 0,
            cached=u.cached_content_token_count or 0, cache_write=None,
        ),
        tool_calls=[dict(id=p.function_call.id or f"call_{i}", name=p.function_call.name,
                         arguments=p.function_call.args or {}) for i, p in enumerate(calls)],
        # As the REST JSON spells a signature (base64).
        signatures=[dump(gt.Part(thought_signature=p.thought_signature)).get("thoughtSignature")
                    for p in calls],
    )


def sdk_gemini(client, stream):
    if not stream:
        return read_gemini([client.models.generate_content(model=MODEL, contents="Your move?")])
    return read_gemini(list(client.models.generate_content_stream(model=MODEL, contents="Your move?")))


# --- The cases ----------------------------------------------------------------------------------

SHAPES = {"plain": (False, False), "reasoning": (True, False), "tools": (False, True),
          "tools_reasoning": (True, True)}


def cases():
    for shape, (reasoning, tools) in SHAPES.items():
        if not reasoning:  # chat completions' SDK types have no reasoning text
            yield "openai_chat", shape, False, lambda t=tools: json.dumps(dump(chat_completion(t)))
            yield "openai_chat", shape, True, lambda t=tools: chat_chunks(t)
        yield "openai_responses", shape, False, lambda r=reasoning, t=tools: json.dumps(dump(response(r, t)))
        yield "openai_responses", shape, True, lambda r=reasoning, t=tools: responses_events(r, t)
        yield "anthropic", shape, False, lambda r=reasoning, t=tools: json.dumps(dump(anthropic_message(r, t)))
        yield "anthropic", shape, True, lambda r=reasoning, t=tools: anthropic_events(r, t)
        yield "gemini", shape, False, lambda r=reasoning, t=tools: json.dumps(dump(gemini_response(gemini_parts(r, t))))
        yield "gemini", shape, True, lambda r=reasoning, t=tools: gemini_events(r, t)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    clients = {
        "openai_chat": (openai.OpenAI(base_url=f"{base}/v1", api_key="k", max_retries=0), sdk_chat),
        "openai_responses": (openai.OpenAI(base_url=f"{base}/v1", api_key="k", max_retries=0), sdk_responses),
        "anthropic": (anthropic.Anthropic(base_url=base, api_key="k", max_retries=0), sdk_anthropic),
        "gemini": (genai.Client(api_key="k", http_options=gt.HttpOptions(base_url=base, api_version="v1beta")),
                   sdk_gemini),
    }
    for fmt, shape, stream, build in cases():
        name = f"{fmt}_{shape}{'_stream' if stream else ''}"
        SERVED["body"] = build()
        SERVED["content_type"] = "text/event-stream" if stream else "application/json"
        client, read = clients[fmt]
        record = dict(format=fmt, shape=shape, stream=stream, content_type=SERVED["content_type"],
                      body=SERVED["body"], read=read(client, stream))
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
    server.shutdown()
    print(f"wrote {len(list(cases()))} cases to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
