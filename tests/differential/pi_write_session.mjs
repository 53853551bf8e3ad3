// Writes a session with pi 0.73.1's own SessionManager from a list of messages, the way a
// running pi does (appendFileSync per entry):
//
//   node pi_write_session.mjs <pi install dir> <session file>   (messages as JSON on stdin)
//
// A text given as {"$sliceUtf16": [text, end]} becomes text.slice(0, end), which can end in a
// lone surrogate, as pi's own truncations do. Prints the id of each entry on its own line.

import { readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [root, file] = process.argv.slice(2);
const dist = join(root, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "core");
const { SessionManager } = await import(pathToFileURL(join(dist, "session-manager.js")).href);

const sliced = (value) => {
	if (Array.isArray(value)) return value.map(sliced);
	if (value && typeof value === "object") {
		if ("$sliceUtf16" in value) return value.$sliceUtf16[0].slice(0, value.$sliceUtf16[1]);
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sliced(v)]));
	}
	return value;
};

const messages = sliced(JSON.parse(readFileSync(0, "utf8")));
const sm = SessionManager.open(file);
for (const message of messages) writeSync(1, `${sm.appendMessage(message)}\n`);
