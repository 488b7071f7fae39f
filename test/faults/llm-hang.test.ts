import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT, TZ, createDatabase, killAll, newConsumer, startApi, waitFor, type Client, type FaultDatabase, type ServiceProcess } from './support.js';

const LLM_TIMEOUT_MS = 1500;
const TIMEOUT_MESSAGE = new RegExp(`^Language-model provider error: (timeout, )?(no answer|the reply was not complete) within ${LLM_TIMEOUT_MS} ms`);

/** An OpenAI-compatible stub that hangs: never answers, or answers one piece of a stream and stalls. */
function hangingStub() {
  const state = { mode: 'silent' as 'silent' | 'stall', requests: 0, closed: 0 };
  const open = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    state.requests++;
    open.add(res);
    res.on('close', () => {
      state.closed++;
      open.delete(res);
    });
    req.resume();
    if (state.mode === 'stall') {
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content: 'Thinking' }, finish_reason: null }] };
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      });
    }
  });
  return {
    state,
    async listen() {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let db: FaultDatabase;
let api: ServiceProcess;
let user: Client;
const stub = hangingStub();

beforeAll(async () => {
  const llmUrl = await stub.listen();
  db = await createDatabase();
  api = await startApi({ databaseUrl: db.url, env: { LLM_BASE_URL: llmUrl, LLM_TIMEOUT_MS: String(LLM_TIMEOUT_MS) } });
  user = await newConsumer(api.baseUrl);
  await user.ok('POST', 'client', { provider_key: 'sk-fault-suite-0123456789abcdef' });
});

afterAll(async () => {
  await killAll();
  await stub.close();
  await db?.drop();
});

describe('the LLM provider hanging', () => {
  it('ends POST /aichat with a clear error envelope within LLM_TIMEOUT_MS, and lets go of the provider', async () => {
    stub.state.mode = 'silent';
    const before = stub.state.requests;
    const chat = user.call('POST', 'aichat', { prompt: 'Are you there?' }, { timeoutMs: 20_000 });
    // Other requests are served meanwhile: the hanging call holds no lock and no event loop.
    await waitFor('the provider to receive the prompt', async () => (stub.state.requests > before ? true : undefined), 5000, 20);
    const check = await user.call('GET', 'sessions');
    expect(check.envelope.status).toBe(0);
    expect(check.ms).toBeLessThan(1000);

    const reply = await chat;
    expect(reply.http).toBe(200);
    expect(reply.envelope.status).toBe(1);
    expect(reply.envelope.data).toMatch(TIMEOUT_MESSAGE);
    expect(reply.ms).toBeGreaterThanOrEqual(LLM_TIMEOUT_MS - 100);
    expect(reply.ms).toBeLessThan(LLM_TIMEOUT_MS + 2000);
    // The service closed its connections to the provider instead of leaving them open.
    await waitFor('the provider connections to be closed', async () => (stub.state.closed >= stub.state.requests ? true : undefined), 3000, 20);
  });

  it('ends a streamed reply that stalls halfway with an error event within LLM_TIMEOUT_MS', async () => {
    stub.state.mode = 'stall';
    const started = Date.now();
    const res = await fetch(`${api.baseUrl}${CURRENT}/aichat.php`, {
      method: 'POST',
      body: new URLSearchParams({ session: user.session!, tz: TZ, prompt: 'Tell me a long story' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/event-stream' },
      signal: AbortSignal.timeout(20_000),
    });
    const body = await res.text();
    const ms = Date.now() - started;
    expect(res.status).toBe(200);
    const events = body.trim().split('\n\n');
    expect(events[0]).toBe('event: delta\ndata: {"text":"Thinking"}');
    const last = events.at(-1)!;
    expect(last, body).toMatch(/^event: error\ndata: /);
    const error = JSON.parse(last.slice('event: error\ndata: '.length)) as { status: number; data: string };
    expect(error.status).toBe(1);
    expect(error.data).toMatch(TIMEOUT_MESSAGE);
    expect(ms).toBeLessThan(LLM_TIMEOUT_MS + 2000);
  });
});
