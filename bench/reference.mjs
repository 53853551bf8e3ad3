// Times pi 0.73.1's (node) or oh-my-pi 18.2.3's (bun) own session code on one file, for
// bench/reference.py:
//
//   node reference.mjs pi <pi install dir> <session.jsonl>
//   bun reference.mjs omp <omp install dir> <session.jsonl>
//
// Prints one JSON object: milliseconds of SessionManager.open, the first getBranch(), the
// default prepareCompaction() of that branch and a second getBranch(), the branch length and a
// SHA-256 of its entry ids joined by newlines. oh-my-pi's open and prepareCompaction are async
// (its TypeScript sources run under bun); pi's return at once, and awaiting them adds nothing.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const MODULES = {
	pi: {
		session: ["@mariozechner", "pi-coding-agent", "dist", "core", "session-manager.js"],
		compaction: ["@mariozechner", "pi-coding-agent", "dist", "core", "compaction", "index.js"],
	},
	omp: {
		session: ["@oh-my-pi", "pi-coding-agent", "src", "session", "session-manager.ts"],
		compaction: ["@oh-my-pi", "pi-agent-core", "src", "compaction", "compaction.ts"],
	},
};

const [system, root, file] = process.argv.slice(2);
if (!MODULES[system] || !root || !file) {
	console.error("usage: node|bun reference.mjs pi|omp <install dir> <session.jsonl>");
	process.exit(2);
}
const load = (parts) => import(pathToFileURL(join(root, "node_modules", ...parts)).href);
const { SessionManager } = await load(MODULES[system].session);
const { DEFAULT_COMPACTION_SETTINGS, prepareCompaction } = await load(MODULES[system].compaction);

const ms = () => performance.now();
const opened = ms();
const manager = await SessionManager.open(file);
const branched = ms();
const branch = manager.getBranch();
const prepared = ms();
await prepareCompaction(branch, DEFAULT_COMPACTION_SETTINGS);
const again = ms();
manager.getBranch();
const done = ms();
console.log(
	JSON.stringify({
		open: branched - opened,
		branch: prepared - branched,
		prepare: again - prepared,
		branch_again: done - again,
		length: branch.length,
		path: createHash("sha256")
			.update(branch.map((entry) => String(entry.id)).join("\n"))
			.digest("hex"),
	}),
);
