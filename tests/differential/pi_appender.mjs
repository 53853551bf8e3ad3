// Appends to a session file with pi 0.73.1's own SessionManager, the way a running pi does
// (appendFileSync per entry, no lock), so tests can write to the same file meanwhile.
//
//   node pi_appender.mjs <pi install dir> <session file> <turns> <pause ms> [<output bytes>]
//
// Each turn appends an assistant message with one tool call, then its tool result (whose text
// holds <output bytes> characters, so pruning has something to prune), then pauses. The id of
// every entry is printed on its own line as soon as appendMessage returned (so a test knows
// what pi wrote even if it stops this process); "ready" follows the first turn's ids.

import { writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [root, file, turnsArg, pauseArg, sizeArg] = process.argv.slice(2);
if (!root || !file || !turnsArg || !pauseArg) {
	console.error("usage: node pi_appender.mjs <pi install dir> <file> <turns> <pause ms> [<bytes>]");
	process.exit(2);
}
const dist = join(root, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(dist, "session-manager.js")).href);

const turns = Number(turnsArg);
const pause = Number(pauseArg);
const size = Number(sizeArg ?? "2000");
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const say = (line) => writeSync(1, `${line}\n`);

const sm = SessionManager.open(file);
for (let turn = 0; turn < turns; turn++) {
	const callId = `pi_call_${turn}`;
	const call = sm.appendMessage({
		role: "assistant",
		content: [{ type: "toolCall", id: callId, name: "bash", arguments: { command: `cat log${turn}` } }],
		api: "openai-completions",
		provider: "openai",
		model: "gpt-4o-mini",
		usage: {
			input: 100,
			output: 10,
			cacheRead: 0,
			cacheWrite: 0,
			totalTokens: 110,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		},
		stopReason: "toolUse",
		timestamp: Date.now(),
	});
	say(call);
	const text = `PI-MARK-${turn} ${"x".repeat(Math.max(0, size))}`;
	const result = sm.appendMessage({
		role: "toolResult",
		toolCallId: callId,
		toolName: "bash",
		content: [{ type: "text", text }],
		isError: false,
		timestamp: Date.now(),
	});
	say(result);
	if (turn === 0) say("ready");
	if (pause > 0) Atomics.wait(sleeper, 0, 0, pause);
}
say("done");
