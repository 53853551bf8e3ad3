// Runs pi 0.73.1's own session code on session files and prints what it computes, as JSON.
//
//   node pi_driver.mjs <pi install dir>  < command.json  > result.json
//
// <pi install dir> holds node_modules/@mariozechner/pi-coding-agent (npm install --prefix DIR).
// The command is {"jobs": [job, ...]}; every job names one session file and what to compute:
//
//   file            the session file, opened with pi's SessionManager.open (a v1/v2 file is
//                   migrated and rewritten by pi, as pi does)
//   leaves          entry ids whose context to build (null: every entry)
//   serialize       also serializeConversation(convertToLlm(context)) per leaf
//   prepare         {"leaves": ids or null, "keep": [keepRecentTokens, ...]}: prepareCompaction
//                   of each leaf's branch (getBranch) with pi's default settings and each budget
//   pairs           [[oldLeafId, targetId], ...] or "all": collectEntriesForBranchSummary
//   serializeInputs [[llm message, ...], ...]: serializeConversation of each list as given
//   hashText        report long texts as sha256 of their UTF-16LE code units (large files)
//
// A message that is the very object a `message` entry stores is reported as {"$ref": id};
// every such entry's message is reported once under "messages". Everything else in full.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
if (!root) {
	console.error("usage: node pi_driver.mjs <pi install dir> < command.json");
	process.exit(2);
}
const dist = join(root, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { SessionManager, buildSessionContext } = await load("session-manager.js");
const { DEFAULT_COMPACTION_SETTINGS, collectEntriesForBranchSummary, prepareCompaction, serializeConversation } =
	await load("compaction/index.js");
const { convertToLlm } = await load("messages.js");
const version = JSON.parse(
	readFileSync(join(root, "node_modules", "@mariozechner", "pi-coding-agent", "package.json"), "utf8"),
).version;

const command = JSON.parse(readFileSync(0, "utf8"));

function text(value, hash) {
	if (!hash) return value;
	return createHash("sha256").update(Buffer.from(value, "utf16le")).digest("hex");
}

function runJob(job) {
	const sm = SessionManager.open(job.file);
	const entries = sm.getEntries();
	const refs = new Map();
	const messages = {};
	for (const entry of entries) {
		if (entry.type === "message") {
			refs.set(entry.message, entry.id);
			messages[entry.id] = entry.message;
		}
	}
	const ref = (m) => (refs.has(m) ? { $ref: refs.get(m) } : m);
	const byId = new Map(entries.map((e) => [e.id, e]));
	const allIds = entries.map((e) => e.id);
	const hash = Boolean(job.hashText);
	const out = { version, leafId: sm.getLeafId(), ids: allIds, messages };

	const contexts = {};
	for (const leaf of job.leaves ?? allIds) {
		const ctx = buildSessionContext(entries, leaf, byId);
		const llm = convertToLlm(ctx.messages);
		const result = {
			messages: ctx.messages.map(ref),
			llm: llm.map(ref),
			thinkingLevel: ctx.thinkingLevel,
			model: ctx.model,
		};
		if (job.serialize) result.serialized = text(serializeConversation(llm), hash);
		contexts[leaf] = result;
	}
	out.contexts = contexts;

	if (job.prepare) {
		const prepared = {};
		for (const leaf of job.prepare.leaves ?? allIds) {
			const branch = sm.getBranch(leaf);
			const byKeep = {};
			for (const keep of job.prepare.keep) {
				const settings = { ...DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: keep };
				const p = prepareCompaction(branch, settings);
				if (!p) {
					byKeep[keep] = null;
					continue;
				}
				byKeep[keep] = {
					firstKeptEntryId: p.firstKeptEntryId,
					isSplitTurn: p.isSplitTurn,
					tokensBefore: p.tokensBefore,
					previousSummary: p.previousSummary ?? null,
					messagesToSummarize: p.messagesToSummarize.map(ref),
					turnPrefixMessages: p.turnPrefixMessages.map(ref),
					summarizeText: text(serializeConversation(convertToLlm(p.messagesToSummarize)), hash),
					prefixText: text(serializeConversation(convertToLlm(p.turnPrefixMessages)), hash),
					fileOps: {
						read: [...p.fileOps.read].sort(),
						written: [...p.fileOps.written].sort(),
						edited: [...p.fileOps.edited].sort(),
					},
				};
			}
			prepared[leaf] = byKeep;
		}
		out.prepare = prepared;
	}

	if (job.pairs) {
		const pairs = [];
		if (job.pairs === "all") {
			for (const a of allIds) for (const b of allIds) pairs.push([a, b]);
		} else {
			pairs.push(...job.pairs);
		}
		out.branch = pairs.map(([oldLeaf, target]) => {
			const c = collectEntriesForBranchSummary(sm, oldLeaf, target);
			return [oldLeaf, target, c.entries.map((e) => e.id), c.commonAncestorId];
		});
	}

	if (job.serializeInputs) {
		out.serializeInputs = job.serializeInputs.map((list) => text(serializeConversation(list), hash));
	}
	return out;
}

const results = [];
for (const job of command.jobs) {
	try {
		results.push(runJob(job));
	} catch (error) {
		results.push({ error: String(error?.stack ?? error) });
	}
}
process.stdout.write(JSON.stringify({ results }));
