// The pieces of a hot swap (`LoopGuard#swap`) that are not the swap itself: the interface check,
// how a policy is named in the error of a refused swap, what such an error says, and dropping a
// gateway that will not be used (the new one of a failed swap, the old one after a switch, a
// warm-up's scratch gateway).
import { LoopGuardError, message } from './errors.js';
import { compatibleLine } from './policy.js';

/** Refuses a policy whose interface major differs from the active one's: a swap keeps the major. */
export function requireSameMajor(policy, old) {
  if (compatibleLine(policy.interfaceVersion) !== compatibleLine(old.interfaceVersion)) {
    throw new LoopGuardError(
      'policy',
      'interface-version',
      `${policy.source} implements loopguard:policy@${policy.interfaceVersion}, the active policy ` +
        `loopguard:policy@${old.interfaceVersion}; a swap needs the same major version`,
    );
  }
}

/** How a policy is named in messages: its versions and where it came from. */
export function describePolicy(p) {
  return `loopguard-policy ${p.version}, loopguard:policy@${p.interfaceVersion}, from ${p.source}`;
}

/** Drops a gateway that will not be used; its instance may have trapped, which is not news. */
export function disposeQuietly(gateway) {
  try {
    gateway?.[Symbol.dispose]();
  } catch {
    // the component instance is unusable anyway and goes away with the last reference
  }
}

/** A failed swap: always a LoopGuardError, whose reason says that the old policy is active. */
export function swapError(e, kept) {
  if (e instanceof LoopGuardError) return new LoopGuardError(e.kind, e.path, `${e.reason}; ${kept}`, { cause: e });
  return new LoopGuardError('policy', 'swap', `${message(e)}; ${kept}`, { cause: e });
}
