// AG-UI's own schemas as the oracle: the request is a valid RunAgentInput, every event of
// tau's stream validates against @ag-ui/core's EventSchemas, and the stream is assembled
// into {texts, reasoning, toolCalls, state, finished, error}.
// Input (stdin, JSON): {url, body}; output (stdout, JSON): {status, events, invalid, assembled}.
import { EventSchemas, RunAgentInputSchema } from "@ag-ui/core/schemas";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (d) => (text += d));
  process.stdin.on("end", () => resolve(text));
}));
const out = { events: [], invalid: [] };
if (input.validateRequest !== false) {
  const request = RunAgentInputSchema.safeParse(input.body);
  if (!request.success) out.invalid.push({ request: input.body, error: String(request.error) });
}
const response = await fetch(input.url, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "text/event-stream" },
  body: JSON.stringify(input.body),
});
out.status = response.status;
if (response.status !== 200) {
  out.error = await response.text();
  console.log(JSON.stringify(out));
  process.exit(0);
}
const text = await response.text();
for (const frame of text.split("\n\n")) {
  if (!frame) continue;
  if (!frame.startsWith("data: ")) { out.invalid.push({ frame }); continue; }
  const event = JSON.parse(frame.slice(6));
  const checked = EventSchemas.safeParse(event);
  if (!checked.success) out.invalid.push({ event, error: String(checked.error) });
  out.events.push(event);
}
const assembled = { texts: [], reasoning: [], toolCalls: [], state: null, finished: null, error: null };
const byId = {};
for (const e of out.events) {
  switch (e.type) {
    case "TEXT_MESSAGE_START": byId[e.messageId] = { text: "" }; assembled.texts.push(byId[e.messageId]); break;
    case "TEXT_MESSAGE_CONTENT": byId[e.messageId].text += e.delta; break;
    case "REASONING_MESSAGE_START": byId[e.messageId] = { text: "" }; assembled.reasoning.push(byId[e.messageId]); break;
    case "REASONING_MESSAGE_CONTENT": byId[e.messageId].text += e.delta; break;
    case "TOOL_CALL_START": byId[e.toolCallId] = { id: e.toolCallId, name: e.toolCallName, args: "" }; assembled.toolCalls.push(byId[e.toolCallId]); break;
    case "TOOL_CALL_ARGS": byId[e.toolCallId].args += e.delta; break;
    case "TOOL_CALL_RESULT":
      // A call of the paused run gets its result in the run that resumes it.
      if (!byId[e.toolCallId]) { byId[e.toolCallId] = { id: e.toolCallId, resumed: true }; assembled.toolCalls.push(byId[e.toolCallId]); }
      byId[e.toolCallId].result = e.content;
      break;
    case "STATE_SNAPSHOT": assembled.state = e.snapshot; break;
    case "STATE_DELTA": for (const op of e.delta) if (op.op === "replace" && op.path === "/output") assembled.state.output = op.value; break;
    case "RUN_FINISHED": assembled.finished = { outcome: e.outcome, result: e.result }; break;
    case "RUN_ERROR": assembled.error = e.message; break;
  }
}
assembled.toolCalls = assembled.toolCalls.filter((c) => !c.resumed || !assembled.toolCalls.some((d) => d.id === c.id && !d.resumed));
for (const call of assembled.toolCalls) if (!call.resumed) call.args = call.args ? JSON.parse(call.args) : {};
out.assembled = assembled;
console.log(JSON.stringify(out));
