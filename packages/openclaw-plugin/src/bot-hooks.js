// The bot-loop hooks: inbound messages from known bots (before_dispatch) and our own outbound
// messages to conversations where those bots talk (message_sent), each one event of a pair for
// the policy's pair and burst budgets. Hook payloads carry no is-bot flag: `botIds` per channel
// says who is a bot (config.js). With a `store` block a decision is a Promise (store.js).
import { settle } from './store.js';

/** Peers that wrote to a conversation within this horizon count for our outbound messages. */
const PEER_HORIZON_MS = 10 * 60_000;

/** before_dispatch: a bot-authored inbound message over its budget is dropped ({handled: true}). */
export function beforeDispatch(rt, event, ctx) {
  if (!rt.settings.enabled) return undefined;
  const channel = ctx?.channelId ?? event?.channel;
  const sender = String(event?.senderId ?? ctx?.senderId ?? '');
  const bots = botIdsOf(rt, channel);
  if (!bots || !sender || !bots.has(sender)) return undefined;
  const account = ctx?.accountId ?? 'default';
  const conversation = conversationOf(channel, ctx?.conversationId ?? event?.sessionKey);
  if (!conversation) return undefined;
  const t0 = performance.now();
  const now = Date.now();
  const msg = { channel, account, conversation, room: conversation, sender, receiver: selfId(account), tsMs: now, eventId: event?.messageId ?? ctx?.messageId };
  notePeer(rt, channel, account, conversation, sender, now);
  return settle(rt.call('onBotMessage', msg), (r) => {
    const ms = performance.now() - t0;
    if (!r.ok) {
      // `store`: the shared store failed and store.failMode is closed
      const action = rt.settings.failMode === 'closed' || r.reason === 'store' ? 'fail-closed' : 'fail-open';
      rt.event({ event: 'decision', hook: 'before_dispatch', channel, conversation, sender, action, ms });
      return action === 'fail-closed' ? { handled: true } : undefined;
    }
    const v = r.value;
    rt.event({ event: 'decision', hook: 'before_dispatch', channel, account, conversation, sender, messageId: msg.eventId, action: v.action, budget: v.budget, cooldownUntilMs: v.cooldownUntilMs, ms });
    return v.action === 'suppress' ? { handled: true } : undefined;
  });
}

/** message_sent: our message to a conversation where peer bots talk is one event of each pair. */
export function messageSent(rt, event, ctx) {
  if (!rt.settings.enabled || rt.raw?.botLoopProtection?.countOutbound === false) return;
  if (event?.success === false) return;
  const channel = ctx?.channelId ?? event?.metadata?.channel;
  if (!botIdsOf(rt, channel)) return;
  const account = ctx?.accountId ?? 'default';
  const conversation = conversationOf(channel, ctx?.conversationId ?? event?.to);
  if (!conversation) return;
  const peers = rt.peers.get(`${channel}\u0001${account}\u0001${conversation}`);
  if (!peers) return;
  const now = Date.now();
  const pending = [];
  for (const [peer, last] of peers) {
    if (now - last > PEER_HORIZON_MS) {
      peers.delete(peer);
      continue;
    }
    const t0 = performance.now();
    const msg = { channel, account, conversation, room: conversation, sender: selfId(account), receiver: peer, tsMs: now, eventId: event?.messageId ? `out:${event.messageId}` : undefined };
    const done = settle(rt.call('onBotMessage', msg), (r) => {
      if (!r.ok) return;
      rt.event({ event: 'decision', hook: 'message_sent', channel, account, conversation, receiver: peer, messageId: event?.messageId, action: r.value.action, budget: r.value.budget, cooldownUntilMs: r.value.cooldownUntilMs, ms: performance.now() - t0 });
    });
    if (done instanceof Promise) pending.push(done);
  }
  return pending.length ? Promise.all(pending).then(() => undefined) : undefined;
}

function botIdsOf(rt, channel) {
  return channel ? rt.settings.botIds[channel] : undefined;
}

/** Remembers that `peer` wrote to the conversation (our later messages there count for its pair). */
function notePeer(rt, channel, account, conversation, peer, now) {
  const key = `${channel}\u0001${account}\u0001${conversation}`;
  const m = rt.peers.get(key) ?? new Map();
  m.set(peer, now);
  rt.peers.set(key, m);
}

/** Our own side of a bot pair: the account the gateway speaks as. */
const selfId = (account) => `self:${account}`;

/** A conversation id without the channel prefix some hooks add (`telegram:-100777` → `-100777`). */
export function conversationOf(channel, raw) {
  if (raw === undefined || raw === null || raw === '') return null;
  let s = String(raw);
  if (channel && s.startsWith(`${channel}:`)) s = s.slice(channel.length + 1);
  return s;
}
