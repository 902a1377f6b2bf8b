// tau web: a chat page on tau.ui's chat_app, speaking the AI SDK's UI message stream (v1).
// No framework and nothing fetched from elsewhere: the page assembles the stream's chunks
// into UIMessages the way the AI SDK's readUIMessageStream does, for the chunks tau sends.
"use strict";

const token = new URLSearchParams(location.search).get("token");
const headers = token ? { authorization: `Bearer ${token}` } : {};
const $ = (id) => document.getElementById(id);
const state = { chatId: null, messages: [], running: null, images: [] };

function newId() {
  return Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
}

// A chat's id is a UUID, as the tau command names its sessions (`tau -r <id>` finds it).
// crypto.randomUUID needs a secure context; a page behind --host over http is not one.
function newChatId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].join("-");
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return response;
}

function setStatus(text) {
  $("status").textContent = text;
}

// ----------------------------------------------------------------------------- chats

async function loadChats() {
  const response = await api("GET", "api/chats");
  if (!response.ok) return setStatus((await response.json()).error);
  const chats = await response.json();
  // Replace the list in one step: two loads may overlap.
  const list = $("chats");
  list.replaceChildren();
  for (const chat of chats) {
    const item = document.createElement("li");
    item.dataset.id = chat.id;
    if (chat.id === state.chatId) {
      item.classList.add("active");
      $("title").textContent = chat.title || "tau";
    }
    const link = document.createElement("a");
    link.textContent = chat.title || "(untitled)";
    link.onclick = () => openChat(chat.id);
    const rename = document.createElement("button");
    rename.textContent = "✎";
    rename.title = "Rename this chat";
    rename.className = "rename";
    rename.onclick = async () => {
      const title = prompt("Rename the chat", chat.title || "");
      if (!title) return;
      const answer = await api("PATCH", `api/chats/${encodeURIComponent(chat.id)}`, { title });
      if (!answer.ok) setStatus((await answer.json()).error);
      loadChats();
    };
    const remove = document.createElement("button");
    remove.textContent = "×";
    remove.title = "Delete this chat";
    remove.className = "delete";
    remove.onclick = async () => {
      await api("DELETE", `api/chats/${encodeURIComponent(chat.id)}`);
      if (chat.id === state.chatId) startChat();
      loadChats();
    };
    item.append(link, rename, remove);
    list.append(item);
  }
}

async function openChat(id) {
  const response = await api("GET", `api/chats/${encodeURIComponent(id)}`);
  if (response.status === 404) return startChat();
  if (!response.ok) return setStatus((await response.json()).error);
  const chat = await response.json();
  state.chatId = chat.id;
  state.messages = chat.messages;
  $("title").textContent = chat.title || "tau";
  location.hash = chat.id;
  setStatus(chat.paused ? "waiting for your decision" : "");
  render();
  loadChats();
}

function startChat() {
  state.chatId = newChatId();
  state.messages = [];
  $("title").textContent = "New chat";
  location.hash = state.chatId;
  setStatus("");
  render();
}

// ----------------------------------------------------------------------------- pickers

async function loadOptions() {
  const response = await api("GET", "api/options");
  if (!response.ok) return;
  const options = await response.json();
  for (const [id, values] of [["model", options.models], ["thinking", options.thinkingLevels]]) {
    const select = $(id);
    for (const value of values) select.append(new Option(value, value));
    select.hidden = values.length < 2;
  }
}

function choices() {
  const out = {};
  if (!$("model").hidden) out.model = $("model").value;
  if (!$("thinking").hidden && $("thinking").value !== "off") out.thinking = $("thinking").value;
  return out;
}

// ----------------------------------------------------------------------------- stream

function applyChunk(message, chunk, open) {
  const parts = message.parts;
  const tool = (id) => parts.find((p) => p.toolCallId === id);
  switch (chunk.type) {
    case "start": if (chunk.messageId) message.id = chunk.messageId; break;
    case "start-step": parts.push({ type: "step-start" }); break;
    case "text-start": open[chunk.id] = { type: "text", text: "", state: "streaming" }; parts.push(open[chunk.id]); break;
    case "reasoning-start": open[chunk.id] = { type: "reasoning", text: "", state: "streaming" }; parts.push(open[chunk.id]); break;
    case "text-delta": case "reasoning-delta": open[chunk.id].text += chunk.delta; break;
    case "text-end": case "reasoning-end": open[chunk.id].state = "done"; delete open[chunk.id]; break;
    case "tool-input-start":
      parts.push({ type: `tool-${chunk.toolName}`, toolCallId: chunk.toolCallId, state: "input-streaming", rawInput: "" });
      break;
    case "tool-input-delta": tool(chunk.toolCallId).rawInput += chunk.inputTextDelta; break;
    case "tool-input-available": Object.assign(tool(chunk.toolCallId), { state: "input-available", input: chunk.input }); break;
    case "tool-approval-request": Object.assign(tool(chunk.toolCallId), { state: "approval-requested", approval: { id: chunk.approvalId } }); break;
    case "tool-output-available": Object.assign(tool(chunk.toolCallId), { state: "output-available", output: chunk.output, preliminary: chunk.preliminary }); break;
    case "tool-output-error": Object.assign(tool(chunk.toolCallId), { state: "output-error", errorText: chunk.errorText }); break;
    case "tool-output-denied": tool(chunk.toolCallId).state = "output-denied"; break;
    case "message-metadata": case "finish":
      if (chunk.messageMetadata) message.metadata = { ...(message.metadata || {}), ...chunk.messageMetadata };
      break;
    case "error": message.error = chunk.errorText; break;
    case "abort": message.aborted = true; break;
    default:
      if (chunk.type.startsWith("data-")) {
        const existing = parts.find((p) => p.type === chunk.type && p.id === chunk.id);
        if (existing) existing.data = chunk.data; else parts.push({ type: chunk.type, id: chunk.id, data: chunk.data });
      }
  }
}

async function send(messages, assistant) {
  const controller = new AbortController();
  state.running = controller;
  $("stop").hidden = false;
  $("send").disabled = true;
  setStatus("working…");
  try {
    const response = await fetch("api/chat", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ id: state.chatId, messages, trigger: "submit-message", ...choices() }),
      signal: controller.signal,
    });
    if (!response.ok) {
      setStatus((await response.json()).error);
      return;
    }
    let message = assistant;
    if (!message) {
      message = { id: newId(), role: "assistant", parts: [] };
      state.messages.push(message);
    }
    const open = {};
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.startsWith("data: ") ? frame.slice(6) : "";
        if (!data || data === "[DONE]") continue;
        applyChunk(message, JSON.parse(data), open);
      }
      render();
    }
    const waiting = message.parts.some((p) => p.state === "approval-requested");
    setStatus(message.error ? "error" : message.aborted ? "stopped" : waiting ? "waiting for your decision" : "");
  } catch (error) {
    setStatus(error.name === "AbortError" ? "stopped" : String(error));
  } finally {
    state.running = null;
    $("stop").hidden = true;
    $("send").disabled = false;
    render();
    loadChats();
  }
}

async function decide(part, approved) {
  part.state = "approval-responded";
  part.approval = { ...part.approval, approved, ...(approved ? {} : { reason: "The user denied this tool call." }) };
  render();
  const assistant = state.messages[state.messages.length - 1];
  const pending = assistant.parts.some((p) => p.state === "approval-requested");
  if (!pending) await send(state.messages, assistant);
}

// ----------------------------------------------------------------------------- render

function escape(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

const KEYWORDS = /\b(def|class|return|import|from|if|else|elif|for|while|in|not|and|or|async|await|function|const|let|var|new|try|except|catch|finally|with|as|None|True|False|null|true|false|fn|pub|struct|impl|use)\b/g;

function highlight(code) {
  // Comments and strings first, then keywords and numbers outside them.
  return escape(code)
    .split(/(&quot;.*?&quot;|&#39;.*?&#39;|#.*$|\/\/.*$)/m)
    .map((piece, i) => {
      if (i % 2 === 1) return `<span class="${piece.startsWith("#") || piece.startsWith("//") ? "com" : "str"}">${piece}</span>`;
      return piece.replace(KEYWORDS, '<span class="kw">$1</span>').replace(/\b(\d+(\.\d+)?)\b/g, '<span class="num">$1</span>');
    })
    .join("");
}

function markdown(text) {
  // Fenced code blocks (highlighted), inline code, bold, headings, paragraphs: enough for chat.
  const out = [];
  const pieces = text.split(/^```(\w*)\n([\s\S]*?)(?:^```\s*$|$(?![\s\S]))/m);
  for (let i = 0; i < pieces.length; i += 3) {
    for (const para of pieces[i].split(/\n{2,}/)) {
      if (!para.trim()) continue;
      let html = escape(para)
        .replace(/`([^`]+)`/g, "<code>$1</code>")
        .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
        .replace(/\n/g, "<br>");
      const heading = /^(#{1,6}) (.*)$/.exec(para);
      html = heading ? `<h${heading[1].length + 2}>${escape(heading[2])}</h${heading[1].length + 2}>` : `<p>${html}</p>`;
      out.push(html);
    }
    if (i + 2 < pieces.length) out.push(`<pre><code class="lang-${escape(pieces[i + 1])}">${highlight(pieces[i + 2])}</code></pre>`);
  }
  return out.join("");
}

function renderTool(part) {
  const box = document.createElement("div");
  box.className = "tool";
  box.dataset.toolCallId = part.toolCallId;
  const input = part.input ?? part.rawInput ?? "";
  box.innerHTML =
    `<span class="name">${escape(part.type.slice(5))}</span><span class="state">${escape(part.state)}</span>` +
    `<pre><code>${escape(typeof input === "string" ? input : JSON.stringify(input, null, 2))}</code></pre>`;
  if (part.state === "output-available") {
    const output = typeof part.output === "string" ? part.output : JSON.stringify(part.output, null, 2);
    box.insertAdjacentHTML("beforeend", `<pre class="output"><code>${escape(output)}</code></pre>`);
  } else if (part.state === "output-error") {
    box.insertAdjacentHTML("beforeend", `<div class="error">${escape(part.errorText)}</div>`);
  } else if (part.state === "output-denied") {
    box.insertAdjacentHTML("beforeend", `<div class="error">denied</div>`);
  } else if (part.state === "approval-requested") {
    const row = document.createElement("div");
    row.className = "approval";
    const yes = document.createElement("button");
    yes.className = "approve";
    yes.textContent = "Approve";
    yes.onclick = () => decide(part, true);
    const no = document.createElement("button");
    no.className = "deny";
    no.textContent = "Deny";
    no.onclick = () => decide(part, false);
    row.append(yes, no);
    box.append(row);
  }
  return box;
}

function render() {
  const list = $("messages");
  list.replaceChildren();
  for (const message of state.messages) {
    const item = document.createElement("div");
    item.className = `message ${message.role}`;
    item.dataset.id = message.id;
    item.insertAdjacentHTML("beforeend", `<div class="role">${message.role === "user" ? "you" : "tau"}</div>`);
    const bubble = document.createElement("div");
    bubble.className = "bubble";
    for (const part of message.parts) {
      if (part.type === "text") bubble.insertAdjacentHTML("beforeend", message.role === "user" ? `<p>${escape(part.text)}</p>` : markdown(part.text));
      else if (part.type === "reasoning") bubble.insertAdjacentHTML("beforeend", `<details class="reasoning"><summary>thinking</summary>${markdown(part.text)}</details>`);
      else if (part.type === "file" && part.mediaType.startsWith("image/")) bubble.insertAdjacentHTML("beforeend", `<img alt="attached image" src="${escape(part.url)}">`);
      else if (part.type.startsWith("tool-")) bubble.append(renderTool(part));
      else if (part.type === "data-output") bubble.insertAdjacentHTML("beforeend", `<pre class="output"><code>${escape(JSON.stringify(part.data, null, 2))}</code></pre>`);
    }
    if (message.error) bubble.insertAdjacentHTML("beforeend", `<div class="error-banner">${escape(message.error)}</div>`);
    const usage = message.metadata && message.metadata.usage;
    if (usage) {
      const cost = usage.cost ? ` · $${Number(usage.cost).toFixed(4)}` : "";
      bubble.insertAdjacentHTML("beforeend", `<div class="usage">${usage.inputTokens ?? 0} in · ${usage.outputTokens ?? 0} out${cost}</div>`);
    }
    item.append(bubble);
    list.append(item);
  }
  list.scrollTop = list.scrollHeight;
}

// ----------------------------------------------------------------------------- composer

$("composer").onsubmit = async (event) => {
  event.preventDefault();
  const text = $("input").value.trim();
  if ((!text && !state.images.length) || state.running) return;
  const parts = [...state.images.map((url) => ({ type: "file", mediaType: url.slice(5, url.indexOf(";")), url }))];
  if (text) parts.unshift({ type: "text", text });
  state.messages.push({ id: newId(), role: "user", parts });
  $("input").value = "";
  state.images = [];
  $("attachments").replaceChildren();
  render();
  await send(state.messages);
};

$("input").onkeydown = (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
};

$("file").onchange = () => {
  for (const file of $("file").files) {
    const reader = new FileReader();
    reader.onload = () => {
      state.images.push(reader.result);
      const img = document.createElement("img");
      img.src = reader.result;
      img.alt = file.name;
      $("attachments").append(img);
    };
    reader.readAsDataURL(file);
  }
  $("file").value = "";
};

$("stop").onclick = () => state.running && state.running.abort();
$("new-chat").onclick = startChat;

if (location.hash.length > 1) openChat(decodeURIComponent(location.hash.slice(1))).catch(startChat);
else startChat();
loadChats();
loadOptions();
