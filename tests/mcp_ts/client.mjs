// Drives a LobbyTalks server with the official MCP TypeScript SDK's Client, as Claude Code
// does, and prints what it saw as one JSON object. Reads {url, token, steps} from stdin (a
// token never goes through argv or the environment); each step is [name, arguments] or
// ["list_tools"]. An argument "$taskId" stands for the id of the last task a result showed.
// A step whose call throws records {threw: message} and the run goes on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { url, token, steps } = JSON.parse(input);

const client = new Client({ name: "lobbytalks-ts-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const seen = [];
let taskId = null;
const filled = (args) => Object.fromEntries(
  Object.entries(args ?? {}).map(([key, value]) => [key, value === "$taskId" ? taskId : value]));
try {
  await client.connect(transport);
  const server = client.getServerVersion();
  for (const [name, args] of steps) {
    try {
      if (name === "list_tools") {
        const { tools } = await client.listTools();
        seen.push({ tools: tools.map((t) => ({ name: t.name, output: Boolean(t.outputSchema) })) });
      } else {
        const result = await client.callTool({ name, arguments: filled(args) });
        taskId = result.structuredContent?.task?.id ?? taskId;
        seen.push({ isError: result.isError ?? false, structured: result.structuredContent ?? null,
                    text: result.content?.[0]?.text ?? null });
      }
    } catch (error) {
      seen.push({ threw: String(error?.message ?? error) });
    }
  }
  console.log(JSON.stringify({ server, protocol: transport.protocolVersion ?? null, seen }));
} finally {
  await client.close();
}
