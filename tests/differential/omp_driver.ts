// Runs oh-my-pi 18.2.3's own session code (bun) and prints what it computes, as JSON.
//
//   bun omp_driver.ts <omp install dir>  < command.json  > result.json
//
// <omp install dir> holds node_modules/@oh-my-pi/pi-coding-agent (npm install --prefix DIR).
// The command is {"jobs": [job, ...]}; a job is one of
//
//   {"op": "contexts", "file": F, "leaves": ids or null}
//       open F with oh-my-pi's SessionManager.open and build the context of every leaf (null:
//       every entry) with its buildSessionContext; also its leaf, title and labels
//   {"op": "make", "dir": D}
//       write a session into D with oh-my-pi's SessionManager: turns with tool calls and
//       results, !bash, a custom message, metadata, a compaction with shortSummary,
//       preserveData, tokensAfter and method, a branch with a branch summary, a label, a
//       /clear boundary and a title; then report it as "contexts" does
//
// A message that is the very object a `message` entry stores is reported as {"$ref": id};
// every such entry's message is reported once under "messages". Everything else in full.

import * as fs from "node:fs";
import * as path from "node:path";

const root = process.argv[2];
if (!root) {
	console.error("usage: bun omp_driver.ts <omp install dir> < command.json");
	process.exit(2);
}
const pkg = path.join(root, "node_modules", "@oh-my-pi", "pi-coding-agent");
const { SessionManager } = await import(path.join(pkg, "src", "session", "session-manager.ts"));
const { buildSessionContext } = await import(path.join(pkg, "src", "session", "session-context.ts"));
const version: string = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;

type Json = any;

async function contexts(file: string, leaves: string[] | null): Promise<Json> {
	const sm = await SessionManager.open(file);
	const entries: Json[] = sm.getEntries();
	const refs = new Map<unknown, string>();
	const messages: Record<string, Json> = {};
	for (const entry of entries) {
		if (entry.type === "message") {
			refs.set(entry.message, entry.id);
			messages[entry.id] = entry.message;
		}
	}
	const ref = (m: unknown) => (refs.has(m) ? { $ref: refs.get(m) } : m);
	const byId = new Map<string, Json>(entries.map((e) => [e.id, e]));
	const ids = entries.map((e) => e.id);
	const out: Record<string, Json> = {};
	for (const leaf of leaves ?? ids) {
		const ctx = buildSessionContext(entries, leaf, byId);
		out[leaf] = { messages: ctx.messages.map(ref), thinkingLevel: ctx.thinkingLevel, models: ctx.models };
	}
	const labels: Record<string, string> = {};
	for (const id of ids) {
		const label = sm.getLabel(id);
		if (label !== undefined) labels[id] = label;
	}
	const result = {
		version,
		file,
		leafId: sm.getLeafId(),
		title: sm.getSessionName() ?? null,
		ids,
		labels,
		messages,
		contexts: out,
	};
	await sm.close();
	return result;
}

const usage = (input: number, output: number) => ({
	input,
	output,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: input + output,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
let clock = Date.parse("2026-12-01T10:00:00.000Z");
const now = () => (clock += 1000);

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }], timestamp: now() });
const assistant = (text: string, calls: Json[] = [], stop = calls.length ? "toolUse" : "stop") => ({
	role: "assistant",
	content: [...(text ? [{ type: "text", text }] : []), ...calls],
	api: "openai-completions",
	provider: "openai",
	model: "gpt-4o-mini",
	usage: usage(1200, 80),
	stopReason: stop,
	timestamp: now(),
});
const call = (id: string, name: string, args: Json) => ({ type: "toolCall", id, name, arguments: args });
const result = (id: string, name: string, text: string, isError = false) => ({
	role: "toolResult",
	toolCallId: id,
	toolName: name,
	content: [{ type: "text", text }],
	isError,
	timestamp: now(),
});

async function make(dir: string): Promise<Json> {
	fs.mkdirSync(dir, { recursive: true });
	const sm = SessionManager.create(dir, dir);
	sm.appendModelChange("openai/gpt-4o-mini");
	sm.appendThinkingLevelChange("medium");
	sm.appendMessage(user("Fix the pagination bug in src/pager.py; keep the public API unchanged."));
	sm.appendMessage(assistant("Reading the pager first.", [call("c1", "read", { path: "src/pager.py" })]));
	sm.appendMessage(result("c1", "read", "def page(items, size):\n    return items[:size]\n"));
	sm.appendMessage(
		assistant("The offset is missing.", [
			call("c2", "edit", { path: "src/pager.py", oldText: "items[:size]", newText: "items[o:o+size]" }),
		]),
	);
	sm.appendMessage(result("c2", "edit", "Applied 1 edit."));
	sm.appendMessage({
		role: "bashExecution",
		command: "pytest -q",
		output: "1 failed, 11 passed\nE   AssertionError: page 2",
		exitCode: 1,
		cancelled: false,
		truncated: false,
		timestamp: now(),
	});
	sm.appendCustomMessageEntry("ext.note", "Remember: CI runs on Python 3.11.", true, { source: "ext" }, "user");
	const beforeCompaction = sm.appendMessage(assistant("One test still fails on page 2; fixing the offset."));
	const keptUser = sm.appendMessage(user("Please also add a test for an empty list."));
	sm.appendMessage(assistant("Adding tests/test_pager.py.", [call("c3", "write", { path: "tests/test_pager.py", content: "def test_empty(): ..." })]));
	sm.appendMessage(result("c3", "write", "Wrote tests/test_pager.py"));
	sm.appendLabelChange(keptUser, "empty-list");
	sm.appendCompaction(
		"## Goal\nFix pagination in src/pager.py.\n\n## Progress\n- offset fixed, one test failing",
		"I fixed the pager offset and started on an empty-list test.",
		keptUser,
		4321,
		{
			details: { readFiles: ["src/pager.py"], modifiedFiles: ["src/pager.py"] },
			preserveData: { note: "kept by the fork", nested: { n: 1 } },
			method: "soft",
			tokensAfter: 987,
		},
	);
	const afterCompaction = sm.appendMessage(user("Run the whole suite now."));
	sm.appendMessage(assistant("Running it.", [call("c4", "bash", { command: "pytest -q", timeout: 120 })]));
	sm.appendMessage(result("c4", "bash", "12 passed"));
	const tip = sm.appendMessage(assistant("All 12 tests pass."));
	// Go back and try something else, leaving a summary of the abandoned branch.
	sm.branchWithSummary(
		afterCompaction,
		"The user explored a different conversation branch before returning here.\nSummary of that exploration: the suite passed.",
		{ readFiles: ["src/pager.py"], modifiedFiles: ["tests/test_pager.py"] },
	);
	sm.appendMessage(user("Actually, profile the pager instead."));
	sm.appendMessage(assistant("Profiling shows page() is O(n)."));
	sm.appendLabelChange(tip, "suite-green");
	sm.appendResetBoundary();
	sm.appendMessage(user("New task after /clear: write the changelog entry."));
	sm.appendMessage(assistant("Changelog entry written."));
	await sm.setSessionName("Pager fixes", "user");
	await sm.flush();
	const file = sm.getSessionFile();
	await sm.close();
	const out = await contexts(file, null);
	out.marks = { beforeCompaction, keptUser, afterCompaction, tip };
	return out;
}

const command = JSON.parse(fs.readFileSync(0, "utf8"));
const results: Json[] = [];
for (const job of command.jobs) {
	try {
		if (job.op === "make") results.push(await make(job.dir));
		else results.push(await contexts(job.file, job.leaves ?? null));
	} catch (error: any) {
		results.push({ error: String(error?.stack ?? error) });
	}
}
// Exit once stdout is drained: oh-my-pi leaves handles open, and exiting early cuts the pipe.
await new Promise<void>((done) => process.stdout.write(JSON.stringify({ results }), () => done()));
process.exit(0);
