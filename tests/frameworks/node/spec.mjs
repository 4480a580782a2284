// What every Node adapter's suite shares: the scripts of issue 59's scenarios, the tools they
// call (counting their runs) and the policy's texts the model must read. Each
// `<framework>.test.mjs` drives its framework with these and asserts on what the model received.
import assert from 'node:assert/strict';

/** The policy's texts under the default document (the `cautious` preset). */
export const BLOCK = /^loopguard: poll returned the same result \d+ times in a row for this same call; blocked\./;
export const NOTE = 'loopguard: poll returned the same result 2 times in a row';
export const END = /^loopguard: poll was blocked 3 times and sent again each time; ending the run\./;
export const POLL_RESULT = '{"status":"pending"}';

export const poll = { tool: 'poll', args: { job: 'j1' } };
export const read = (path) => ({ tool: 'read', args: { path } });
/** `n` steps of one unchanged poll each. */
export const polls = (n) => Array.from({ length: n }, () => [poll]);
/** `n` steps of one read each, every path different. */
export const reads = (n) => Array.from({ length: n }, (_, i) => [read(`/src/file${i}.ts`)]);
/** Three steps of parallel calls, some alike: a framework checks a step's calls before their
 * outcomes are in, so the policy sees checks 1-2, outcomes 1-2, checks 3-4, outcomes 3-4 (both
 * warn), check 5 → block: the 5th poll, in the 3rd step, is blocked; the reads run. */
export const parallel = [
  [read('/a'), poll, poll],
  [poll, poll],
  [poll, read('/b')],
];

/** The tools' bodies and how often each ran (the framework wraps them in its own tool type). */
export function tools() {
  const runs = { poll: 0, read: 0 };
  return {
    runs,
    poll: async () => {
      runs.poll++;
      return POLL_RESULT;
    },
    read: async ({ path }) => {
      runs.read++;
      return `contents of ${path}`;
    },
  };
}

/** How many times `text` appears among the notes of the model's last request (a note stays in
 * the conversation once added; "delivered once" = once in the history, first seen right after
 * the call that warned). */
export async function noteCount(scenario, text = NOTE) {
  const requests = await scenario.requests();
  const last = requests.at(-1);
  return last.messages.filter((m) => m.includes(text)).length + last.results.filter((r) => r.text.includes(text)).length;
}

/** The request index at which the note first reached the model. */
export async function firstNoteAt(scenario, text = NOTE) {
  const requests = await scenario.requests();
  return requests.findIndex((r) => r.messages.some((m) => m.includes(text)) || r.results.some((x) => x.text.includes(text)));
}

/** The results the model read, one array per request (request k answers the calls of step k). */
export async function resultsByRequest(scenario) {
  return (await scenario.requests()).map((r) => r.results.map((x) => x.text));
}

/** Scenario 6: the broken document every adapter must refuse at construction. */
export const BROKEN = { loopguard: { preset: 'loud' } };
export const ENDING = { loopguard: { preset: 'recommended' } };

export function assertBroken(construct) {
  assert.throws(construct, (e) => e.name === 'LoopGuardError' && e.kind === 'config' && e.path === 'loopguard.preset');
}
