// Times pi 0.73.1's own session code on one file, for bench/reference.py:
//
//   node reference_pi.mjs <pi install dir> <session.jsonl>
//
// Prints one JSON object: milliseconds of SessionManager.open, the first getBranch(), the
// default prepareCompaction() of that branch and a second getBranch(), the branch length and a
// SHA-256 of its entry ids joined by newlines.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [root, file] = process.argv.slice(2);
if (!root || !file) {
	console.error("usage: node reference_pi.mjs <pi install dir> <session.jsonl>");
	process.exit(2);
}
const core = join(root, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
const load = (path) => import(pathToFileURL(join(core, path)).href);
const { SessionManager } = await load("session-manager.js");
const { DEFAULT_COMPACTION_SETTINGS, prepareCompaction } = await load("compaction/index.js");

const ms = () => performance.now();
const opened = ms();
const manager = SessionManager.open(file);
const branched = ms();
const branch = manager.getBranch();
const prepared = ms();
prepareCompaction(branch, DEFAULT_COMPACTION_SETTINGS);
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
