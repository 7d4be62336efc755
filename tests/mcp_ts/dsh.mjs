// Drives a LobbyTalks server through DeepSeek Harness's own MCP bridge,
// @deepseek-ai/dsh-mcp-client, loaded into a Cordis app with the harness's tool runtime, as
// a dsh `cordis.yml` entry with `transport: streamable-http` does. Tools are called the way
// the model's calls reach them (`ctx.tools.execute` under `mcp__<serverName>__<tool>`), so
// the runtime checks every value against the output schema it registered. Reads
// {url, token, steps} from stdin (a token never goes through argv or the environment);
// each step is [tool, arguments]; "$taskId" stands for the id of the last task a result
// showed. Prints what the model would see as one JSON object.

// dsh targets Node 22, where Promise.withResolvers is built in; Debian's Node 20 lacks it.
Promise.withResolvers ??= function withResolvers() {
  let resolve, reject;
  const promise = new Promise((ok, fail) => { resolve = ok; reject = fail; });
  return { promise, resolve, reject };
};

const { Context } = await import("@deepseek-ai/cordis");
const { default: SystemPrompt } = await import("@deepseek-ai/dsh-system-prompt");
const { default: ToolRuntime } = await import("@deepseek-ai/dsh-tools");
const mcpClient = await import("@deepseek-ai/dsh-mcp-client");

const SERVER_NAME = "community";
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { url, token, steps } = JSON.parse(input);

const app = new Context();
await app.plugin(SystemPrompt);
await app.plugin(ToolRuntime);
let started = null;
try {
  await app.plugin(mcpClient, {
    transport: "streamable-http", serverName: SERVER_NAME, url,
    headers: { Authorization: `Bearer ${token}` },
    failOnStartupError: true, reconnect: { enabled: false },
  });
} catch (error) {
  started = [error, error?.cause].filter(Boolean).map((e) => String(e?.message ?? e)).join(" <- ");
}

const seen = [];
let taskId = null;
let callNumber = 0;
const filled = (args) => Object.fromEntries(
  Object.entries(args ?? {}).map(([key, value]) => [key, value === "$taskId" ? taskId : value]));
if (started === null) {
  for (const [tool, args] of steps) {
    const result = await app.tools.execute({
      callId: `call-${++callNumber}`, name: `mcp__${SERVER_NAME}__${tool}`,
      arguments: filled(args), signal: new AbortController().signal,
    });
    const structured = result.isError ? null : result.value?.structuredContent ?? null;
    taskId = structured?.task?.id ?? taskId;
    seen.push({ isError: result.isError === true, structured,
                text: result.content?.map((block) => block.text ?? "").join("\n") ?? null });
  }
}
const tools = started === null ? app.tools.schemas() : [];
console.log(JSON.stringify({ started, tools, seen }));
process.exit(0);
