// End-to-end test of `custom-agent acp` with the official ACP TypeScript
// client (@agentclientprotocol/sdk). Run by approval/acp's
// TestE2EOfficialClient:
//
//   node client.mjs BINARY WORKDIR
//
// Each scenario spawns `BINARY acp --model script:FILE` with its own data
// directory, drives it with the SDK's client, and checks what it sees. Every
// line either side writes is parsed and validated against the JSON schema
// the SDK ships (schema/v1/schema.json): the envelope against the schema's
// Agent or Client message, and the params and results against the type of
// their method. A line on the agent's stdout that is not a valid message
// fails the run. Exit status 0 means every scenario passed.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join, dirname } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const [binary, workdir] = process.argv.slice(2);
if (!binary || !workdir) {
  console.error("usage: node client.mjs BINARY WORKDIR");
  process.exit(2);
}

// The schema the SDK ships.
const sdkDir = join(dirname(fileURLToPath(import.meta.url)), "node_modules", "@agentclientprotocol", "sdk");
const schema = JSON.parse(readFileSync(join(sdkDir, "schema/v1/schema.json"), "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true });
const integer = (min, max) => ({ type: "number", validate: (x) => Number.isInteger(x) && x >= min && x <= max });
ajv.addFormat("uint16", integer(0, 65535));
ajv.addFormat("uint32", integer(0, 4294967295));
ajv.addFormat("uint64", integer(0, Number.MAX_SAFE_INTEGER));
ajv.addFormat("int64", integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
ajv.addFormat("double", { type: "number", validate: (x) => Number.isFinite(x) });
ajv.addFormat("float", { type: "number", validate: (x) => Number.isFinite(x) });
ajv.addSchema(schema, "acp");
const byTitle = (t) => schema.anyOf.find((s) => s.title === t);
const protocolLevel = byTitle("ProtocolLevel");
const envelope = {
  agent: ajv.compile({ $defs: schema.$defs, anyOf: [byTitle("Agent"), protocolLevel] }),
  client: ajv.compile({ $defs: schema.$defs, anyOf: [byTitle("Client"), protocolLevel] }),
};
// The validation must be able to fail: a tool_call with a status the
// protocol does not have is refused.
if (ajv.compile({ $ref: "acp#/$defs/SessionNotification" })({ sessionId: "s", update: { sessionUpdate: "tool_call", toolCallId: "t", title: "x", status: "bogus" } })) {
  console.error("the schema accepts a tool_call with status bogus: the validation is not working");
  process.exit(1);
}
const typeOf = {};
const def = (name) => (typeOf[name] ??= ajv.compile({ $ref: `acp#/$defs/${name}` }));
// The params and result types of each method.
const methodTypes = {
  initialize: ["InitializeRequest", "InitializeResponse"],
  "session/new": ["NewSessionRequest", "NewSessionResponse"],
  "session/load": ["LoadSessionRequest", "LoadSessionResponse"],
  "session/prompt": ["PromptRequest", "PromptResponse"],
  "session/set_mode": ["SetSessionModeRequest", "SetSessionModeResponse"],
  "session/cancel": ["CancelNotification", null],
  "session/update": ["SessionNotification", null],
  "session/request_permission": ["RequestPermissionRequest", "RequestPermissionResponse"],
};

let failures = 0;
let checked = 0;
function fail(scenario, msg) {
  failures++;
  console.error(`FAIL ${scenario}: ${msg}`);
}
function check(scenario, cond, msg) {
  if (!cond) fail(scenario, msg);
}

// validator checks every message one side wrote; requests are remembered
// by id so their responses are checked against the method's result type.
function validator(scenario, side, pending, log) {
  return (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      fail(scenario, `${side} wrote a line that is not JSON: ${line}`);
      return;
    }
    checked++;
    log.push({ side, msg });
    if (!envelope[side](msg)) {
      fail(scenario, `${side} message does not match the schema: ${line}\n${ajv.errorsText(envelope[side].errors)}`);
    }
    if (msg.method && methodTypes[msg.method]) {
      const [params] = methodTypes[msg.method];
      const v = def(params);
      if (!v(msg.params)) fail(scenario, `${msg.method} params are not a ${params}: ${line}\n${ajv.errorsText(v.errors)}`);
      if (msg.id !== undefined) pending.set(`${side === "agent" ? "a" : "c"}:${JSON.stringify(msg.id)}`, msg.method);
    } else if (msg.method && msg.method !== "$/cancel_request") {
      fail(scenario, `${side} used method ${msg.method}, which this test does not expect`);
    }
    if (!msg.method && msg.id !== undefined && msg.result !== undefined) {
      // A response: to a request the other side made.
      const key = `${side === "agent" ? "c" : "a"}:${JSON.stringify(msg.id)}`;
      const method = pending.get(key);
      if (method && methodTypes[method][1]) {
        const v = def(methodTypes[method][1]);
        if (!v(msg.result)) fail(scenario, `result of ${method} is not a ${methodTypes[method][1]}: ${line}\n${ajv.errorsText(v.errors)}`);
      }
    }
  };
}

// lines splits a byte stream into lines.
function splitter(onLine) {
  let buf = "";
  return (chunk) => {
    buf += chunk.toString("utf8");
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim() !== "") onLine(line);
    }
  };
}

let seq = 0;
// start spawns the agent for a scenario and returns a stream for the SDK
// that validates both directions, and the raw writer for malformed input.
function start(scenario, dataDir, scriptLines, extraArgs = []) {
  const dir = join(workdir, `${scenario}-${++seq}`);
  mkdirSync(dir, { recursive: true });
  const scriptPath = join(dir, "script.jsonl");
  writeFileSync(scriptPath, scriptLines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const child = spawn(binary, ["acp", "--data-dir", dataDir, "--model", `script:${scriptPath}`, ...extraArgs], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, HOME: join(workdir, "home"), XDG_CONFIG_HOME: join(workdir, "home", ".config") },
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const pending = new Map();
  const log = [];
  const fromAgent = validator(scenario, "agent", pending, log);
  const toAgent = validator(scenario, "client", pending, log);
  const agentOut = new Readable({ read() {} });
  child.stdout.on(
    "data",
    splitter((line) => {
      fromAgent(line);
      agentOut.push(line + "\n");
    }),
  );
  child.stdout.on("end", () => agentOut.push(null));
  const clientIn = new Writable({
    write(chunk, _enc, cb) {
      splitter(toAgent)(chunk);
      child.stdin.write(chunk, cb);
    },
  });
  const stream = acp.ndJsonStream(Writable.toWeb(clientIn), Readable.toWeb(agentOut));
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    stream,
    log,
    raw: (line) => child.stdin.write(line + "\n"),
    stderr: () => stderr,
    async stop() {
      child.stdin.end();
      const code = await exited;
      check(scenario, code === 0, `the agent exited with ${code}; stderr:\n${stderr}`);
    },
  };
}

const shell = (id, command, text = "Running it.") => ({ text, toolCalls: [{ id, name: "shell", args: { command } }] });
const final = { text: "Done." };

// run drives one scenario: answers are what the permission handler returns
// for each request in turn (an option id, or a function of the request and
// the handler context).
async function run(scenario, { script, answers = [], body, dataDir, args }) {
  dataDir ??= join(workdir, `${scenario}-data`);
  mkdirSync(join(workdir, "home", ".config"), { recursive: true });
  const cwd = join(workdir, "cwd");
  mkdirSync(cwd, { recursive: true });
  const agent = start(scenario, dataDir, script, args);
  const asked = [];
  const updates = [];
  const queue = [...answers];
  const app = acp
    .client({ name: "e2e" })
    .onRequest(acp.methods.client.session.requestPermission, async (c) => {
      asked.push(c.params);
      const a = queue.shift();
      if (a === undefined) {
        fail(scenario, `asked about ${c.params.toolCall.toolCallId} but the scenario has no answer left`);
        return { outcome: { outcome: "cancelled" } };
      }
      if (typeof a === "function") return a(c);
      return { outcome: { outcome: "selected", optionId: a } };
    })
    .onNotification(acp.methods.client.session.update, async (c) => {
      updates.push(c.params.update);
    });
  try {
    await app.connectWith(agent.stream, async (ctx) => {
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "e2e", version: "1" },
      });
      check(scenario, init.protocolVersion === 1, `protocolVersion ${init.protocolVersion}`);
      check(scenario, init.agentCapabilities?.loadSession === true, "loadSession not advertised");
      await body({ ctx, cwd, asked, updates, agent, dataDir });
    });
  } catch (e) {
    fail(scenario, `threw: ${e?.stack ?? JSON.stringify(e)}\nstderr:\n${agent.stderr()}`);
  }
  await agent.stop();
  console.log(`ok ${scenario}: ${asked.length} question(s), ${updates.length} update(s), ${agent.log.length} message(s) validated`);
}

const toolUpdates = (updates, id) => updates.filter((u) => u.toolCallId === id);
const lastStatus = (updates, id) => toolUpdates(updates, id).filter((u) => u.status).at(-1)?.status;
const newSession = (ctx, cwd) => ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
const prompt = (ctx, sessionId, text) =>
  ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

await run("allow_once", {
  script: [shell("tc_1", "touch hi.txt"), final],
  answers: ["allow_once"],
  async body({ ctx, cwd, asked, updates }) {
    const { sessionId, modes } = await newSession(ctx, cwd);
    check("allow_once", modes?.availableModes?.map((m) => m.id).join(",") === "default,plan,accept-edits,dont-ask", "modes default, plan, accept-edits and dont-ask");
    const r = await prompt(ctx, sessionId, "say hi");
    check("allow_once", r.stopReason === "end_turn", `stopReason ${r.stopReason}`);
    check("allow_once", asked.length === 1, `asked ${asked.length}`);
    const kinds = asked[0].options.map((o) => `${o.optionId}=${o.kind}`).join(" ");
    check("allow_once", kinds.includes("allow_once=allow_once") && kinds.includes("deny=reject_once") && kinds.includes("deny_session=reject_always"), `options ${kinds}`);
    check("allow_once", /risk/.test(asked[0].toolCall.title ?? ""), "the risk is not in the title");
    check("allow_once", lastStatus(updates, "tc_1") === "completed", `final status ${lastStatus(updates, "tc_1")}`);
    const tc = updates.find((u) => u.sessionUpdate === "tool_call");
    check("allow_once", tc?.title === "Run touch hi.txt" && tc?.kind === "execute", `tool_call ${JSON.stringify(tc)}`);
    check("allow_once", updates.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text === "Done."), "no agent_message_chunk");
  },
});

await run("set_mode", {
  script: [shell("tc_1", "touch hi.txt"), final],
  answers: [], // dont-ask: nothing may be asked
  async body({ ctx, cwd, asked, updates }) {
    const { sessionId } = await newSession(ctx, cwd);
    for (const modeId of ["accept-edits", "plan", "default", "dont-ask"]) {
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId });
    }
    const modes = updates.filter((u) => u.sessionUpdate === "current_mode_update").map((u) => u.currentModeId).join(",");
    check("set_mode", modes === "accept-edits,plan,default,dont-ask", `current_mode_update ${modes}`);
    let refused = "";
    try {
      await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" });
    } catch (e) {
      refused = e?.message ?? JSON.stringify(e);
    }
    check("set_mode", refused.includes("unknown mode"), `set_mode yolo: ${refused || "accepted"}`);
    const r = await prompt(ctx, sessionId, "say hi");
    check("set_mode", r.stopReason === "end_turn", `stopReason ${r.stopReason}`);
    check("set_mode", asked.length === 0, `asked ${asked.length} in dont-ask`);
    check("set_mode", lastStatus(updates, "tc_1") === "failed", `final status ${lastStatus(updates, "tc_1")}`);
    check("set_mode", JSON.stringify(toolUpdates(updates, "tc_1")).includes("dont-ask"), "the denial does not name the mode");
  },
});

await run("reject", {
  script: [shell("tc_1", "touch hi.txt"), final],
  answers: ["deny"],
  async body({ ctx, cwd, updates }) {
    const { sessionId } = await newSession(ctx, cwd);
    const r = await prompt(ctx, sessionId, "say hi");
    check("reject", r.stopReason === "end_turn", `stopReason ${r.stopReason}`);
    check("reject", lastStatus(updates, "tc_1") === "failed", "a denied call is not failed");
    const text = JSON.stringify(toolUpdates(updates, "tc_1"));
    check("reject", text.includes("Denied by you"), `denial not shown: ${text}`);
  },
});

await run("allow_always_two_turns", {
  script: [shell("tc_1", "touch hi.txt"), final, shell("tc_2", "touch hi.txt", "Again."), final],
  answers: ["allow_session"],
  async body({ ctx, cwd, asked, updates }) {
    const { sessionId } = await newSession(ctx, cwd);
    await prompt(ctx, sessionId, "say hi");
    await prompt(ctx, sessionId, "again");
    check("allow_always_two_turns", asked.length === 1, `asked ${asked.length} times, want once`);
    check("allow_always_two_turns", lastStatus(updates, "tc_2") === "completed", "second call not completed");
  },
});

await run("reject_always_two_turns", {
  script: [shell("tc_1", "touch hi.txt"), final, shell("tc_2", "touch hi.txt", "Again."), final],
  answers: ["deny_session"],
  async body({ ctx, cwd, asked, updates }) {
    const { sessionId } = await newSession(ctx, cwd);
    await prompt(ctx, sessionId, "say hi");
    await prompt(ctx, sessionId, "again");
    check("reject_always_two_turns", asked.length === 1, `asked ${asked.length} times, want once`);
    check("reject_always_two_turns", lastStatus(updates, "tc_2") === "failed", "second call not refused");
    check("reject_always_two_turns", JSON.stringify(toolUpdates(updates, "tc_2")).includes("session"), "the refusal does not name the session rule");
  },
});

await run("destructive_both_turns", {
  script: [shell("tc_1", "rm -rf build"), final, shell("tc_2", "rm -rf build", "Again."), final],
  answers: ["allow_once", "deny"],
  async body({ ctx, cwd, asked }) {
    mkdirSync(join(cwd, "build"), { recursive: true });
    const { sessionId } = await newSession(ctx, cwd);
    await prompt(ctx, sessionId, "clean");
    await prompt(ctx, sessionId, "clean again");
    check("destructive_both_turns", asked.length === 2, `asked ${asked.length} times, want twice`);
    for (const a of asked) {
      // Only one-time answers: allow once (with or without the sandbox,
      // when it would confine the call) and reject once; never "always".
      const kinds = a.options.map((o) => o.kind);
      const once = kinds.every((k) => k === "allow_once" || k === "reject_once");
      check("destructive_both_turns", once && kinds[0] === "allow_once" && kinds.at(-1) === "reject_once", `destructive options ${kinds.join(",")}`);
    }
  },
});

await run("cancel_while_asking", {
  script: [shell("tc_1", "touch hi.txt"), final],
  answers: [
    async (c) => {
      await c.agent.notify(acp.methods.agent.session.cancel, { sessionId: c.params.sessionId });
      // ACP: after session/cancel the client answers pending requests with
      // the cancelled outcome.
      return { outcome: { outcome: "cancelled" } };
    },
  ],
  async body({ ctx, cwd, updates }) {
    const { sessionId } = await newSession(ctx, cwd);
    const r = await prompt(ctx, sessionId, "say hi");
    check("cancel_while_asking", r.stopReason === "cancelled", `stopReason ${r.stopReason}`);
    check("cancel_while_asking", lastStatus(updates, "tc_1") === "failed", "the open tool call got no final update");
  },
});

await run("timeout", {
  script: [shell("tc_1", "touch hi.txt"), final],
  args: ["--approval-timeout", "300ms"],
  answers: [
    (c) =>
      new Promise((resolve) => {
        // Nobody answers; the agent withdraws the request.
        c.signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }));
      }),
  ],
  async body({ ctx, cwd, updates, agent }) {
    const { sessionId } = await newSession(ctx, cwd);
    const r = await prompt(ctx, sessionId, "say hi");
    check("timeout", r.stopReason === "end_turn", `stopReason ${r.stopReason}: the turn goes on after a timeout`);
    check("timeout", JSON.stringify(toolUpdates(updates, "tc_1")).includes("timeout"), "the timeout is not shown");
    check("timeout", agent.log.some((m) => m.side === "agent" && m.msg.method === "$/cancel_request"), "the request was not withdrawn");
  },
});

await run("user_deny_model_sees", {
  script: [shell("tc_1", "touch hi.txt"), final],
  answers: ["deny"],
  async body({ ctx, cwd, updates }) {
    const { sessionId } = await newSession(ctx, cwd);
    await prompt(ctx, sessionId, "say hi");
    check("user_deny_model_sees", lastStatus(updates, "tc_1") === "failed", "denied call not failed");
  },
});

// session/load after a restart: a second process replays and continues.
const loadData = join(workdir, "load-data");
let loadedId;
await run("load_before_restart", {
  dataDir: loadData,
  script: [shell("tc_1", "touch hi.txt"), final],
  answers: ["allow_once"],
  async body({ ctx, cwd }) {
    loadedId = (await newSession(ctx, cwd)).sessionId;
    await prompt(ctx, loadedId, "say hi");
  },
});
await run("load_after_restart", {
  dataDir: loadData,
  script: [shell("tc_2", "touch hi.txt", "Again."), final],
  answers: [],
  async body({ ctx, cwd, asked, updates }) {
    await ctx.request(acp.methods.agent.session.load, { sessionId: loadedId, cwd, mcpServers: [] });
    check("load_after_restart", updates.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "say hi"), "the user message was not replayed");
    check("load_after_restart", lastStatus(updates, "tc_1") === "completed", "the replayed call has not its final status");
    await prompt(ctx, loadedId, "again");
    check("load_after_restart", asked.length === 0, "the prior approval was not restored");
    check("load_after_restart", lastStatus(updates, "tc_2") === "completed", "the continued call did not run");
  },
});

await run("mcp_server_fails", {
  script: [final],
  async body({ ctx, cwd, updates }) {
    // A server that exits at once: the session goes on, and the person is told which and where its log is.
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [{ name: "x", command: "/bin/true", args: [], env: [] }] });
    const r = await prompt(ctx, sessionId, "hello");
    check("mcp_server_fails", r.stopReason === "end_turn", `stopReason ${r.stopReason}`);
    const told = updates.find((u) => u.sessionUpdate === "agent_message_chunk" && /MCP server "x" did not start/.test(u.content.text));
    check("mcp_server_fails", told && /its log is .*x\.log/.test(told.content.text), `no notice naming the server and its log: ${told?.content?.text}`);
  },
});

await run("refusals", {
  script: [final],
  async body({ ctx, cwd, agent }) {
    agent.raw("this is not json");
    agent.raw(JSON.stringify({ jsonrpc: "2.0", id: 99, method: "session/prompt", params: { sessionId: 42 } }));
    // The agent keeps serving.
    const { sessionId } = await newSession(ctx, cwd);
    const r = await prompt(ctx, sessionId, "hello");
    check("refusals", r.stopReason === "end_turn", "the agent stopped serving after malformed input");
    const errs = agent.log.filter((m) => m.side === "agent" && m.msg.error);
    check("refusals", errs.some((m) => m.msg.error.code === -32700), "no parse error for a line that is not JSON");
    check("refusals", errs.some((m) => m.msg.id === 99 && m.msg.error.code === -32602), "no invalid params error for bad params");
  },
});

console.log(`${checked} messages checked against the SDK's schema`);
if (failures > 0) {
  console.error(`${failures} failure(s)`);
  process.exit(1);
}
console.log("PASS");
