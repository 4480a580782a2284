#!/usr/bin/env node
// A fake Telegram Bot API for OpenClaw's bundled telegram channel (channels.telegram.apiRoot).
// 127.0.0.1 only. Paths: /bot<TOKEN>/<method>.
//   getMe                  our bot: id 1000, is_bot true, username "loopguard_e2e_bot"
//   getUpdates             long poll capped at 2 s over the injected queue, honouring `offset`
//                          (and `timeout`, capped too)
//   sendMessage            recorded, returns a Message
//   anything else          {ok:true, result:true}
// Test control:
//   POST /__inject         body: one Update (update_id assigned if missing), or {message:{...}}
//                          shorthand fields {chatId, text, fromId, isBot, chatType} are accepted
//   GET  /__sent           the recorded sendMessage payloads
//   GET  /__calls          every Bot API call: {method, ts, params}
//   POST /__echo           body {max: N}: the other bot's echo budget from now on (a total)
// Option --echo-max N / TG_ECHO_MAX: a second bot (id 222, is_bot true, "other_bot") answers
// each group message our bot sends, at most N times (a bot-to-bot loop).
// --port / TG_PORT (0 = any), --lifetime-ms / TG_LIFETIME_MS (default 15 min), --log / TG_LOG
// (JSONL of calls). Prints {"listening":PORT,"pid":PID} on stdout.
import http from "node:http";
import fs from "node:fs";
import { parseArgs } from "node:util";

export const OUR_BOT = { id: 1000, is_bot: true, first_name: "LoopGuard E2E", username: "loopguard_e2e_bot" };
export const OTHER_BOT = { id: 222, is_bot: true, first_name: "Other Bot", username: "other_bot" };

export function startFakeTelegram(options = {}) {
  let echoMax = Number(options.echoMax ?? 0);
  const logFile = options.log;
  const queue = []; // updates
  const waiters = new Set();
  const sent = [];
  const calls = [];
  let nextUpdateId = 1;
  let nextMessageId = 1;
  let echoes = 0;

  const enqueue = (update) => {
    if (update.update_id === undefined) update.update_id = nextUpdateId++;
    else nextUpdateId = Math.max(nextUpdateId, update.update_id + 1);
    queue.push(update);
    for (const w of [...waiters]) w();
  };

  const makeMessage = ({ chatId = -100777, chatType, text, from, replyTo }) => ({
    message_id: nextMessageId++,
    date: Math.floor(Date.now() / 1000),
    chat:
      (chatType ?? (chatId < 0 ? "supergroup" : "private")) === "private"
        ? { id: chatId, type: "private", first_name: from?.first_name ?? "User" }
        : { id: chatId, type: chatType ?? "supergroup", title: "E2E Group" },
    from,
    text,
    ...(replyTo ? { reply_to_message: replyTo } : {}),
  });

  const json = (res, status, obj) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(obj));
  };

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const rawBody = Buffer.concat(chunks).toString("utf8");
      let params = Object.fromEntries(url.searchParams);
      if (rawBody) {
        const ct = String(req.headers["content-type"] ?? "");
        try {
          if (ct.includes("application/json")) params = { ...params, ...JSON.parse(rawBody) };
          else if (ct.includes("application/x-www-form-urlencoded"))
            params = { ...params, ...Object.fromEntries(new URLSearchParams(rawBody)) };
          else if (ct.includes("multipart/form-data")) params = { ...params, _multipart: rawBody.length };
          else params = { ...params, ...JSON.parse(rawBody) };
        } catch {
          params = { ...params, _raw: rawBody.slice(0, 2000) };
        }
      }
      // control endpoints
      if (url.pathname === "/__inject" && req.method === "POST") {
        let u = params;
        if (!u.message && !u.edited_message && !u.callback_query && u.text !== undefined) {
          const from = u.isBot
            ? { ...OTHER_BOT, ...(u.fromId ? { id: Number(u.fromId) } : {}) }
            : { id: Number(u.fromId ?? 555), is_bot: false, first_name: "Tess", username: "tess" };
          u = { message: makeMessage({ chatId: Number(u.chatId ?? -100777), chatType: u.chatType, text: u.text, from }) };
        }
        enqueue(u);
        return json(res, 200, { ok: true, result: u });
      }
      if (url.pathname === "/__echo" && req.method === "POST") {
        // raise or lower the other bot's echo budget at run time: {max: N} (a total, counting past echoes)
        echoMax = Number(params.max ?? echoMax);
        return json(res, 200, { ok: true, result: { echoMax, echoes } });
      }
      if (url.pathname === "/__sent") return json(res, 200, { ok: true, result: sent });
      if (url.pathname === "/__calls") return json(res, 200, { ok: true, result: calls });

      const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (!m) return json(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      const method = m[2];
      const rec = { method, ts: Date.now(), params };
      calls.push(rec);
      if (logFile) fs.appendFileSync(logFile, JSON.stringify(rec) + "\n");

      switch (method) {
        case "getMe":
          return json(res, 200, {
            ok: true,
            result: { ...OUR_BOT, can_join_groups: true, can_read_all_group_messages: true, supports_inline_queries: false },
          });
        case "getUpdates": {
          const offset = Number(params.offset ?? 0);
          const limit = Math.min(Number(params.limit ?? 100) || 100, 100);
          const timeoutMs = Math.min(Number(params.timeout ?? 0) * 1000, 2000);
          // confirm updates below offset
          while (queue.length && queue[0].update_id < offset) queue.shift();
          const reply = () => json(res, 200, { ok: true, result: queue.filter((u) => u.update_id >= offset).slice(0, limit) });
          if (queue.some((u) => u.update_id >= offset) || timeoutMs <= 0) return reply();
          let done = false;
          const finish = () => {
            if (done) return;
            done = true;
            waiters.delete(finish);
            clearTimeout(t);
            reply();
          };
          const t = setTimeout(finish, timeoutMs);
          waiters.add(finish);
          // (not req's "close": that fires once the request body is read)
          res.on("close", () => {
            if (done) return;
            done = true;
            waiters.delete(finish);
            clearTimeout(t);
          });
          return;
        }
        case "sendMessage": {
          const chatId = Number(params.chat_id);
          const msg = makeMessage({ chatId, text: String(params.text ?? ""), from: OUR_BOT });
          sent.push({ ts: Date.now(), params, message: msg });
          if (echoMax > 0 && chatId < 0 && echoes < echoMax) {
            echoes += 1;
            const n = echoes;
            setTimeout(() => {
              enqueue({
                message: makeMessage({ chatId, text: `other_bot echo #${n}: ${msg.text.slice(0, 200)}`, from: OTHER_BOT, replyTo: msg }),
              });
            }, 50);
          }
          return json(res, 200, { ok: true, result: msg });
        }
        case "getChat": {
          const id = Number(params.chat_id);
          return json(res, 200, {
            ok: true,
            result: id < 0 ? { id, type: "supergroup", title: "E2E Group" } : { id, type: "private", first_name: "User" },
          });
        }
        default:
          return json(res, 200, { ok: true, result: true });
      }
    });
  });
  server.keepAliveTimeout = 5000;
  return server;
}

const isMain = process.argv[1]?.endsWith("fake-telegram.mjs");
if (isMain) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { port: { type: "string" }, "echo-max": { type: "string" }, "lifetime-ms": { type: "string" }, log: { type: "string" } },
  });
  const port = Number(values.port ?? process.env.TG_PORT ?? 0);
  const lifetime = Number(values["lifetime-ms"] ?? process.env.TG_LIFETIME_MS ?? 15 * 60 * 1000);
  const server = startFakeTelegram({ echoMax: values["echo-max"] ?? process.env.TG_ECHO_MAX ?? 0, log: values.log ?? process.env.TG_LOG });
  server.listen(port, "127.0.0.1", () => {
    process.stdout.write(JSON.stringify({ listening: server.address().port, pid: process.pid }) + "\n");
  });
  setTimeout(() => {
    process.stderr.write(`fake-telegram: lifetime of ${lifetime} ms reached, exiting\n`);
    process.exit(0);
  }, lifetime).unref();
  for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
}
