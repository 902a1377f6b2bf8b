// The AI SDK's own client against tau's endpoint: POST a useChat request, validate every
// chunk with the SDK's uiMessageChunkSchema, assemble the UIMessage with readUIMessageStream.
// Input (stdin, JSON): {url, body, message?, abortAfter?, headers?}; output (stdout, JSON):
// {status, headers, chunks, invalid, errors, message, error?}.
import { readUIMessageStream, uiMessageChunkSchema } from "ai";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (d) => (text += d));
  process.stdin.on("end", () => resolve(text));
}));

const controller = new AbortController();
const response = await fetch(input.url, {
  method: "POST",
  headers: { "content-type": "application/json", ...(input.headers ?? {}) },
  body: JSON.stringify(input.body),
  signal: controller.signal,
});
const out = { status: response.status, headers: Object.fromEntries(response.headers), chunks: [], invalid: [], errors: [] };
if (response.status !== 200) {
  out.error = await response.text();
  console.log(JSON.stringify(out));
  process.exit(0);
}
const schema = uiMessageChunkSchema();
const decoder = new TextDecoder();
let buffer = "";
let done = false;
try {
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!frame.startsWith("data: ")) { out.invalid.push({ frame }); continue; }
      const data = frame.slice(6);
      if (data === "[DONE]") { done = true; continue; }
      const chunk = JSON.parse(data);
      const checked = await schema.validate(chunk);
      if (!checked.success) out.invalid.push({ chunk, error: String(checked.error) });
      out.chunks.push(chunk);
      if (input.abortAfter && out.chunks.length >= input.abortAfter) controller.abort();
    }
  }
} catch (error) {
  if (error.name !== "AbortError") throw error;
}
out.done = done;
const stream = new ReadableStream({
  start(c) { for (const chunk of out.chunks) c.enqueue(chunk); c.close(); },
});
let last;
for await (const message of readUIMessageStream({
  message: input.message,
  stream,
  onError: (error) => out.errors.push(String(error.message ?? error)),
})) {
  last = message;
}
out.message = JSON.parse(JSON.stringify(last ?? null));
console.log(JSON.stringify(out));
