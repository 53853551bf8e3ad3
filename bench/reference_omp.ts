// Times oh-my-pi 18.2.3's own session code (bun) on one file, for bench/reference.py:
//
//   bun reference_omp.ts <omp install dir> <session.jsonl>
//
// Prints what reference_pi.mjs prints, for oh-my-pi's SessionManager and prepareCompaction.
import { createHash } from "node:crypto";
import * as path from "node:path";

const [root, file] = process.argv.slice(2);
if (!root || !file) {
	console.error("usage: bun reference_omp.ts <omp install dir> <session.jsonl>");
	process.exit(2);
}
const modules = path.join(root, "node_modules", "@oh-my-pi");
const { SessionManager } = await import(
	path.join(modules, "pi-coding-agent", "src", "session", "session-manager.ts")
);
const { DEFAULT_COMPACTION_SETTINGS, prepareCompaction } = await import(
	path.join(modules, "pi-agent-core", "src", "compaction", "compaction.ts")
);

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
