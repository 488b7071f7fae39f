import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTokenCounter } from '../../src/llm/tokens.js';
import { createTrainingPool } from '../../src/training/run/pool.js';
import { eventStreamProblems } from '../support/contract.js';
import { factories } from '../support/factories.js';
import { CURRENT, OLDER, createTestContext, form, type TestContext, type TestUser } from '../support/helper.js';
import { startStub, type StubMode } from '../support/openai-stub.js';

// ---------- fixtures ----------

const TZ = 'Europe/Madrid';
const KEY_A = 'sk-test-client-a-0123456789abcdefWXYZ';
const KEY_B = 'sk-test-client-b-9876543210fedcbaQRST';
const counter = createTokenCounter('gpt-4o-mini');

let ctx: TestContext;
let stub: ReturnType<typeof startStub>;
let admin: TestUser;
let alice: TestUser; // consumer of client A
let bob: TestUser; // consumer of client B
let clientA: number;
let clientB: number;
const bodies: string[] = [];

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', resource: string, user: TestUser, fields: Record<string, string | number> = {}, headers: Record<string, string> = {}) {
  const params = { session: user.session, tz: TZ, ...fields };
  const res =
    method === 'GET'
      ? await ctx.request({ method, url: `${CURRENT}/${resource}.php?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString()}`, headers })
      : await ctx.request({ method, url: `${CURRENT}/${resource}.php`, ...form(params), headers: { ...form(params).headers, ...headers } });
  bodies.push(res.body);
  return res.envelope;
}
async function ok(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', resource: string, user: TestUser, fields: Record<string, string | number> = {}) {
  const envelope = await call(method, resource, user, fields);
  expect(envelope, `${method} ${resource} ${JSON.stringify(fields)}`).toMatchObject({ status: 0 });
  return envelope.data;
}

/** The app's OpenAPI document, which the event streams are checked against. */
const documentOf = async () => (await ctx.app.inject({ method: 'GET', url: '/docs/json' })).json<Record<string, unknown>>();

async function newUsecase(owner: TestUser, clientId: number, data: Record<string, unknown>, systemSentences: string[] = []) {
  const id = (await ok('POST', 'usecase', owner, { client_id: clientId, data: JSON.stringify(data) })) as number;
  for (const text of systemSentences) await ok('POST', 'sentence', owner, { text, usca_id: id, tokens: 1 });
  return id;
}
const chatSentences = async (user: TestUser, chatId: number) => (await ok('GET', 'sentence', user, { chat_id: chatId })) as Record<string, string | null>[];
const chatOf = async (user: TestUser, chatId: number) => ((await ok('GET', 'chat', user, { chat_id: chatId })) as Record<string, string | null>[])[0]!;
const usecaseOf = async (user: TestUser, id: number) => ((await ok('GET', 'usecase', user, { where: `Id = ${id}` })) as Record<string, string | null>[])[0]!;

beforeAll(async () => {
  stub = startStub();
  await stub.listen();
  ctx = await createTestContext({ env: { LLM_BASE_URL: `${stub.url}/v1`, LLM_MODEL: 'gpt-4o-mini', LLM_TIMEOUT_MS: '1500' } });
  admin = await ctx.createUser({ role: 'admin' });
  alice = await ctx.createUser({ name: 'Alice' });
  bob = await ctx.createUser({ name: 'Bob' });
  clientA = (await ok('POST', 'client', alice, { provider_key: KEY_A, data: JSON.stringify({ CompanyName: 'Alpha SL', CompanyCity: 'Madrid' }) })) as number;
  clientB = (await ok('POST', 'client', bob, { provider_key: KEY_B })) as number;
});
afterAll(async () => {
  await ctx?.close();
  await stub?.close();
});
beforeEach(() => {
  stub.state.mode = 'ok';
  stub.requests.length = 0;
  stub.state.toolCalls = [];
  stub.state.replyFrom = undefined;
});

// ---------- clients ----------

describe('clients', () => {
  it('makes the creator a member, stores the key encrypted and never returns it', async () => {
    const login = await ctx.request({ method: 'POST', url: `${CURRENT}/sessions.php`, ...form({ email: alice.email, password: alice.password }) });
    expect(login.envelope.data[0].Client_Id).toBe(String(clientA));

    const stored = await ctx.database.db.selectFrom('clients').select(['provider_key_enc', 'provider_key_hint']).where('id', '=', clientA).executeTakeFirstOrThrow();
    expect(stored.provider_key_enc).not.toContain(KEY_A);
    expect(stored.provider_key_enc).toMatch(/^v2:[0-9a-f]{8}:/);

    const own = await ok('GET', 'client', alice);
    expect(own).toEqual([
      {
        Id: String(clientA),
        FiscalId: null,
        CompanyName: 'Alpha SL',
        CompanyLegalName: null,
        CompanyAddress1: null,
        CompanyAddress2: null,
        CompanyAddress3: null,
        CompanyCity: 'Madrid',
        CompanyZipCode: null,
        CompanyProviderKey: null,
      },
    ]);
    const all = (await ok('GET', 'client', admin)) as Record<string, string>[];
    expect(all.map((c) => c.Id)).toEqual(expect.arrayContaining([String(clientA), String(clientB)]));
    expect(all.find((c) => c.Id === String(clientA))!.CompanyProviderKey).toBe('sk-...WXYZ');
  });

  it('filters with fields/where through the shared parser and refuses unknown columns', async () => {
    expect(await ok('GET', 'client', admin, { fields: 'Id,CompanyName', where: "CompanyName LIKE 'Alpha%'" })).toEqual([{ Id: String(clientA), CompanyName: 'Alpha SL' }]);
    expect(await ok('GET', 'client', bob, { where: `Id = ${clientA} OR Id > 0` })).toEqual([{ ...(await ok('GET', 'client', bob))[0] }]);
    const bad = await call('GET', 'client', admin, { where: 'provider_key_enc IS NOT NULL' });
    expect(bad.status).toBe(1);
    expect(bad.data).toMatch(/Invalid parameter 'where'.*unknown column/);
    const key = await call('GET', 'client', admin, { where: "CompanyProviderKey LIKE 'sk%'" });
    expect(key.status).toBe(1);
  });

  it('lets administrators attach and detach users; consumers may not', async () => {
    const carol = await ctx.createUser({ name: 'Carol' });
    const denied = await call('PATCH', 'client', alice, { id: clientA, user_id: carol.id });
    expect(denied).toEqual({ status: 1, data: 'Forbidden: attaching users to a client requires an administrator' });
    expect(await ok('PATCH', 'client', admin, { id: clientA, user_id: carol.id })).toBe('success');
    expect((await ok('GET', 'client', carol)) as unknown[]).toHaveLength(1);
    expect(await ok('PATCH', 'client', admin, { id: clientA, user_id: carol.id, detach: 1 })).toBe('success');
    expect(await ok('GET', 'client', carol)).toEqual([]);
    expect((await call('PATCH', 'client', bob, { id: clientA, data: '{"CompanyName":"Hijacked"}' })).data).toBe(`Client ${clientA} not found`);
  });

  it('accepts provider_key in the query string, as the spec shows, without logging it', async () => {
    const dora = await ctx.createUser({ name: 'Dora' });
    const queryKey = 'sk-query-string-key-000111222333';
    const res = await ctx.request({ method: 'POST', url: `${CURRENT}/client.php?session=${dora.session}&tz=${TZ}&provider_key=${queryKey}` });
    bodies.push(res.body);
    expect(res.envelope.status).toBe(0);
    expect(typeof res.envelope.data).toBe('number');
    expect(ctx.logLines.some((line) => line.includes('/client.php'))).toBe(true);
    expect(ctx.logLines.join('\n')).not.toContain(queryKey);
  });

  it('refuses a missing or malformed provider key', async () => {
    expect(await call('POST', 'client', bob, {})).toEqual({ status: 1, data: "Missing required parameter 'provider_key'" });
    expect((await call('POST', 'client', bob, { provider_key: 'short' })).data).toMatch(/Invalid parameter 'provider_key'/);
  });
});

// ---------- use cases and their sentences ----------

describe('use cases and sentence order', () => {
  it('creates, lists three ways, and changes LastUpdDateTime and Hash on update', async () => {
    const id = await newUsecase(alice, clientA, { Description: 'Support', Welcome: 'Hi!', Temperature: 0.3, TimeOutForAutoMsg: 60, AutoMsg: 'Still there?' });
    const before = await usecaseOf(alice, id);
    expect(before).toMatchObject({ Id: String(id), clie_Id: String(clientA), Description: 'Support', Welcome: 'Hi!', Temperature: '0.3', TimeOutForAutoMsg: '60', Tokens: '0', FinishDateTime: null, Active: '1' });
    expect(before.LastUpdDateTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    const byClient = (await ok('GET', 'usecase', alice, { clie_id: clientA })) as Record<string, string>[];
    expect(byClient.map((u) => u.Id)).toContain(String(id));
    const byUser = (await ok('GET', 'usecase', alice, { user_id: alice.id, upd_date: '2000-01-01 00:00:00' })) as Record<string, string>[];
    expect(byUser.map((u) => u.Id)).toContain(String(id));
    expect(await ok('GET', 'usecase', alice, { user_id: alice.id, upd_date: '2999-01-01 00:00:00' })).toEqual([]);
    expect(await call('GET', 'usecase', alice, { user_id: alice.id })).toEqual({ status: 1, data: "Missing required parameter 'upd_date'" });

    ctx.clock.advance(2000);
    try {
      expect(await ok('PATCH', 'usecase', alice, { id, data: JSON.stringify({ Description: 'Support v2' }) })).toBe('success');
    } finally {
      ctx.clock.advance(-2000);
    }
    const after = await usecaseOf(alice, id);
    expect(after.Description).toBe('Support v2');
    expect(after.Hash).not.toBe(before.Hash);
    expect(after.LastUpdDateTime).not.toBe(before.LastUpdDateTime);

    expect(await ok('PATCH', 'usecase', alice, { id, close: 1 })).toBe('success');
    expect((await usecaseOf(alice, id)).FinishDateTime).not.toBeNull();
    expect(await ok('PATCH', 'usecase', alice, { id, open: 1 })).toBe('success');
    expect((await usecaseOf(alice, id)).FinishDateTime).toBeNull();
  });

  it('validates the data JSON', async () => {
    const unknown = await call('POST', 'usecase', alice, { client_id: clientA, data: '{"Colour":"red"}' });
    expect(unknown).toEqual({ status: 1, data: "Invalid parameter 'data': unknown field 'Colour'" });
    const temp = await call('POST', 'usecase', alice, { client_id: clientA, data: '{"Temperature":5}' });
    expect(temp.data).toMatch(/Invalid parameter 'data': field 'Temperature' must be a number from 0 to 2/);
    expect((await call('POST', 'usecase', alice, { client_id: clientA, data: 'not json' })).data).toBe("Invalid parameter 'data': is not valid JSON");
    expect((await call('POST', 'usecase', alice, { client_id: clientB, data: '{}' })).data).toBe(`Client ${clientB} not found`);
  });

  it('accepts a use-case record echoed back, ignoring the fields the service sets, and refuses unknown names by name', async () => {
    const id = await newUsecase(alice, clientA, { Description: 'Echo', TimeOutForAutoMsg: 0 }, ['Counted rule.']);
    const before = await usecaseOf(alice, id);
    expect(Number(before.Tokens)).toBeGreaterThan(0);
    ctx.clock.advance(2000);
    try {
      const echoed = { ...before, Description: 'Echo v2', Tokens: '999', Id: '1', Hash: 'forged', LastUpdDateTime: '2000-01-01 00:00:00', Active: '0', clie_Id: String(clientB) };
      expect(await ok('PATCH', 'usecase', alice, { id, data: JSON.stringify(echoed) })).toBe('success');
    } finally {
      ctx.clock.advance(-2000);
    }
    const after = await usecaseOf(alice, id);
    expect(after).toMatchObject({ Id: String(id), Description: 'Echo v2', Tokens: before.Tokens, clie_Id: String(clientA), Active: '1' });
    expect(after.Hash).not.toBe('forged');
    expect(after.Hash).not.toBe(before.Hash);
    expect(after.LastUpdDateTime).not.toBe('2000-01-01 00:00:00');

    // The same record posted as a new use case: a new id, its own counters.
    const copy = (await ok('POST', 'usecase', alice, { client_id: clientA, data: JSON.stringify(after) })) as number;
    expect(copy).not.toBe(id);
    expect(await usecaseOf(alice, copy)).toMatchObject({ Id: String(copy), Description: 'Echo v2', Tokens: '0' });

    const unknown = await call('PATCH', 'usecase', alice, { id, data: JSON.stringify({ ...after, Colour: 'red', Size: 2 }) });
    expect(unknown).toEqual({ status: 1, data: "Invalid parameter 'data': unknown fields 'Colour', 'Size'" });
    expect((await usecaseOf(alice, id)).Description).toBe('Echo v2');
  });

  it('accepts a client record echoed back without touching its id or provider key', async () => {
    const record = ((await ok('GET', 'client', admin, { where: `Id = ${clientA}` })) as Record<string, string | null>[])[0]!;
    expect(record.CompanyProviderKey).toMatch(/\.\.\./);
    expect(await ok('PATCH', 'client', admin, { id: clientA, data: JSON.stringify({ ...record, CompanyCity: 'Sevilla' }) })).toBe('success');
    const after = ((await ok('GET', 'client', admin, { where: `Id = ${clientA}` })) as Record<string, string | null>[])[0]!;
    expect(after).toMatchObject({ ...record, CompanyCity: 'Sevilla' });
    expect(await ctx.services.clients.providerKeyOf(clientA)).toBe(KEY_A);
    const unknown = await call('PATCH', 'client', admin, { id: clientA, data: JSON.stringify({ ...record, Colour: 'red' }) });
    expect(unknown).toEqual({ status: 1, data: "Invalid parameter 'data': unknown field 'Colour'" });
    await ok('PATCH', 'client', admin, { id: clientA, data: JSON.stringify({ CompanyCity: 'Madrid' }) });
  });

  it('orders sentences, moves them Up/Down and keeps the token count from the tokenizer', async () => {
    const id = await newUsecase(alice, clientA, { Description: 'Order' }, ['First rule.', 'Second rule, a little longer.']);
    const expected = (await counter.count('First rule.')) + (await counter.count('Second rule, a little longer.'));
    expect((await usecaseOf(alice, id)).Tokens).toBe(String(expected));

    const third = (await ok('POST', 'sentence', alice, { text: 'Inserted first.' })) as number;
    expect(await ok('POST', 'usecase_sentence', alice, { usca_id: id, sent_id: third, order_id: 1 })).toBe(1);
    let list = (await ok('GET', 'sentence', alice, { usca_id: id })) as Record<string, string>[];
    expect(list.map((s) => [s.Order, s.Text])).toEqual([
      ['1', 'Inserted first.'],
      ['2', 'First rule.'],
      ['3', 'Second rule, a little longer.'],
    ]);
    expect(await ok('PATCH', 'usecase_sentence', alice, { usca_id: id, order_id: 3, direction: 'Up' })).toBe('success');
    list = (await ok('GET', 'sentence', alice, { usca_id: id })) as Record<string, string>[];
    expect(list.map((s) => s.Text)).toEqual(['Inserted first.', 'Second rule, a little longer.', 'First rule.']);
    expect((await call('PATCH', 'usecase_sentence', alice, { usca_id: id, order_id: 1, direction: 'Up' })).data).toMatch(/already the first/);
    expect((await call('PATCH', 'usecase_sentence', alice, { usca_id: id, order_id: 1, direction: 'Sideways' })).data).toMatch(/Invalid parameter 'direction'/);

    const first = list.find((s) => s.Text === 'First rule.')!;
    expect(await ok('DELETE', 'usecase_sentence', alice, { usca_id: id, sent_id: first.Id!, tokens: 1 })).toBe('success');
    expect((await usecaseOf(alice, id)).Tokens).toBe(String(expected - (await counter.count('First rule.'))));
    list = (await ok('GET', 'sentence', alice, { usca_id: id })) as Record<string, string>[];
    expect(list.map((s) => s.Order)).toEqual(['1', '2']);

    expect(await ok('PATCH', 'sentence', alice, { id: third, new_text: 'Changed text.' })).toBe('success');
    expect(((await ok('GET', 'sentence', alice, { where: `Id = ${third}` })) as Record<string, string>[])[0]).toMatchObject({ Text: 'Changed text.', Tokens: String(await counter.count('Changed text.')) });
  });
});

// ---------- chats and the reply flow ----------

describe('chat replies', () => {
  it('opens with Welcome and answers a user sentence through the provider with key, system sentences, temperature and limit', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Shop', Welcome: 'Welcome to Alpha!', Temperature: 0.2 }, ['You are the Alpha shop assistant.', 'Answer in one sentence.']);
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id, hash: 'visitor-1' })) as number;
    expect(stub.requests).toHaveLength(0);
    expect((await chatSentences(alice, chatId)).map((s) => [s.Role, s.Text])).toEqual([['2', 'Welcome to Alpha!']]);

    const sentenceId = await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Do you sell bikes?', role: 1 });
    expect(typeof sentenceId).toBe('number');
    expect(stub.requests).toHaveLength(1);
    const sent = stub.requests[0]!;
    expect(sent.authorization).toBe(`Bearer ${KEY_A}`);
    expect(sent.body.model).toBe('gpt-4o-mini');
    expect(sent.body.temperature).toBe(0.2);
    expect(sent.body.messages).toEqual([
      { role: 'system', content: 'You are the Alpha shop assistant.' },
      { role: 'system', content: 'Answer in one sentence.' },
      { role: 'assistant', content: 'Welcome to Alpha!' },
      { role: 'user', content: 'Do you sell bikes?' },
    ]);
    expect(sent.body.max_tokens).toBe(4000 - (await counter.countMessages(sent.body.messages as never)));

    const said = await chatSentences(alice, chatId);
    expect(said.map((s) => [s.Role, s.Text])).toEqual([
      ['2', 'Welcome to Alpha!'],
      ['1', 'Do you sell bikes?'],
      ['2', 'Hello, I am the assistant.'],
    ]);
    expect(said[1]!.Id).toBe(String(sentenceId));
    const chat = await chatOf(alice, chatId);
    expect(chat).toMatchObject({ usca_Id: String(usca), Tokens: '18', ControlType: 'auto', Hash: 'visitor-1', FinishDateTime: null, Attention: '0' });
    expect((await usecaseOf(alice, usca)).Tokens).toBe(String((await counter.count('You are the Alpha shop assistant.')) + (await counter.count('Answer in one sentence.')) + 18));

    // The second turn carries the history; totals add up.
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'And helmets?', role: 1 });
    expect(stub.requests[1]!.body.messages.slice(-3)).toEqual([
      { role: 'user', content: 'Do you sell bikes?' },
      { role: 'assistant', content: 'Hello, I am the assistant.' },
      { role: 'user', content: 'And helmets?' },
    ]);
    expect((await chatOf(alice, chatId)).Tokens).toBe('36');
    expect(await ok('GET', 'chat', alice, { hash: 'visitor-1' })).toHaveLength(1);
  });

  it('flags attention words and hands off to a person on manual words', async () => {
    const usca = await newUsecase(alice, clientA, {
      Description: 'Handoff',
      WordsForManual: 'human, real person',
      WordsForAttention: 'complaint',
      ManualMessage: 'An agent will answer you shortly.',
    });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;

    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'I have a Complaint about my order', role: 1 });
    expect(stub.requests).toHaveLength(1);
    expect((await chatOf(alice, chatId)).Attention).toBe('1');

    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'I want to talk to a REAL  person please', role: 1 });
    expect(stub.requests).toHaveLength(1);
    expect((await chatOf(alice, chatId)).ControlType).toBe('manual');
    expect((await chatSentences(alice, chatId)).slice(-2).map((s) => [s.Role, s.Text])).toEqual([
      ['1', 'I want to talk to a REAL  person please'],
      ['2', 'An agent will answer you shortly.'],
    ]);

    // Manual: user sentences are stored, no automatic reply; an operator answers as role 2.
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Hello?', role: 1 });
    expect(stub.requests).toHaveLength(1);
    const operator = await ctx.createUser({ name: 'Olga' });
    await ok('PATCH', 'client', admin, { id: clientA, user_id: operator.id });
    await ok('POST', 'sentence', operator, { chat_id: chatId, text: 'Hi, Olga here.', role: 2 });
    expect((await chatOf(alice, chatId)).UserManaging_Id).toBe(String(operator.id));
    expect((await chatSentences(alice, chatId)).at(-1)).toMatchObject({ Role: '2', Text: 'Hi, Olga here.', User_Id: String(operator.id) });

    // Back to automatic.
    expect(await ok('PATCH', 'chat', operator, { id: chatId, control: 'auto' })).toBe('success');
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Thanks', role: 1 });
    expect(stub.requests).toHaveLength(2);
  });

  it('sends the auto message once after the silence time-out, from the database schedule', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Nudge', TimeOutForAutoMsg: 30, AutoMsg: 'Are you still there?' });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Hi', role: 1 });

    expect(await ctx.services.chat.sendDueAutoMessages(ctx.clock.now())).toBe(0);
    ctx.clock.advance(31_000);
    try {
      expect(await ctx.services.chat.sendDueAutoMessages(ctx.clock.now())).toBe(1);
      expect(await ctx.services.chat.sendDueAutoMessages(ctx.clock.now())).toBe(0);
      ctx.clock.advance(60_000);
      expect(await ctx.services.chat.sendDueAutoMessages(ctx.clock.now())).toBe(0);
    } finally {
      ctx.clock.advance(-91_000);
    }
    const texts = (await chatSentences(alice, chatId)).map((s) => s.Text);
    expect(texts.filter((t) => t === 'Are you still there?')).toHaveLength(1);
    expect(texts.at(-1)).toBe('Are you still there?');
  });

  it('runs the poller on an interval until stopped', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Poller', TimeOutForAutoMsg: 1, AutoMsg: 'Polled nudge' });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    ctx.clock.advance(2000);
    try {
      const scheduler = ctx.services.chat.startAutoMessageScheduler({ intervalMs: 10 });
      for (let i = 0; i < 100 && !(await chatSentences(alice, chatId)).some((s) => s.Text === 'Polled nudge'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await scheduler.stop();
    } finally {
      ctx.clock.advance(-2000);
    }
    expect((await chatSentences(alice, chatId)).map((s) => s.Text)).toEqual(['Polled nudge']);
  });

  it('sends the auto message within 1.5 s of its due time, also for a deadline it was not told of', { timeout: 10_000 }, async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'On time', TimeOutForAutoMsg: 1, AutoMsg: 'On-time nudge' });
    const scheduler = ctx.services.chat.startAutoMessageScheduler();
    const dueOf = async (chatId: number) =>
      (await ctx.database.db.selectFrom('chats').select('auto_msg_due_at').where('id', '=', chatId).executeTakeFirstOrThrow()).auto_msg_due_at;
    /** Waits (2 s timeout after the due time) for the nudge; answers how late it was, in ms. */
    const lateness = async (chatId: number, due: Date) => {
      const deadline = due.getTime() + 2000;
      while (Date.now() < deadline) {
        if ((await chatSentences(alice, chatId)).some((s) => s.Text === 'On-time nudge')) return Date.now() - due.getTime();
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`no auto message within 2 s of its due time ${due.toISOString()}`);
    };
    try {
      // Stored by this process: the scheduler is woken for it.
      const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
      const due = await dueOf(chatId);
      expect(due).not.toBeNull();
      expect(await lateness(chatId, due!)).toBeLessThanOrEqual(1500);
      // Stored behind its back (as another process would): seen by the next look at the schedule.
      const other = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
      const later = new Date(Date.now() + 700);
      await ctx.database.db.updateTable('chats').set({ auto_msg_due_at: later }).where('id', '=', other).execute();
      expect(await lateness(other, later)).toBeLessThanOrEqual(1500);
      const sent = await ctx.database.db.selectFrom('chats').select(['auto_msg_sent_at', 'auto_msg_due_at']).where('id', 'in', [chatId, other]).execute();
      expect(sent.every((row) => row.auto_msg_due_at === null && row.auto_msg_sent_at !== null)).toBe(true);
      expect((await chatSentences(alice, chatId)).filter((s) => s.Text === 'On-time nudge')).toHaveLength(1);
    } finally {
      await scheduler.stop();
    }
  });

  it('does not send the auto message to a finished chat', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Nudge 2', TimeOutForAutoMsg: 5, AutoMsg: 'Ping' });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    await ok('PATCH', 'chat', alice, { id: chatId, finish: 1 });
    ctx.clock.advance(10_000);
    try {
      await ctx.services.chat.sendDueAutoMessages(ctx.clock.now());
    } finally {
      ctx.clock.advance(-10_000);
    }
    expect((await chatSentences(alice, chatId)).map((s) => s.Text)).not.toContain('Ping');
  });

  it('rates chat sentences, finishes chats and refuses sentences to finished chats and closed use cases', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Rate' });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Question', role: 1 });
    const reply = (await chatSentences(alice, chatId)).at(-1)!;
    expect(reply.Rate).toBeNull();
    expect(await ok('PATCH', 'chat-sentence', alice, { chat_id: chatId, sent_id: reply.Id!, rate: 0 })).toBe('success');
    expect((await chatSentences(alice, chatId)).at(-1)!.Rate).toBe('0');
    expect(await ok('PATCH', 'chat-sentence', alice, { chat_id: chatId, sent_id: reply.Id!, rate: 1 })).toBe('success');
    expect((await chatSentences(alice, chatId)).at(-1)!.Rate).toBe('1');
    expect((await call('PATCH', 'chat-sentence', alice, { chat_id: chatId, sent_id: 999999, rate: 1 })).data).toMatch(/not found/);
    expect((await call('PATCH', 'chat-sentence', alice, { chat_id: chatId, sent_id: reply.Id!, rate: 2 })).data).toBe("Invalid parameter 'rate': must be 0 or 1");

    expect(await ok('PATCH', 'chat', alice, { id: chatId, status: 'resolved', tokens: 5, active: 0 })).toBe('success');
    expect(await chatOf(alice, chatId)).toMatchObject({ Status: 'resolved', Tokens: '23', Active: '0' });
    expect(await ok('PATCH', 'chat', alice, { id: chatId, finish: 1 })).toBe('success');
    expect((await chatOf(alice, chatId)).FinishDateTime).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const refused = await call('POST', 'sentence', alice, { chat_id: chatId, text: 'More?', role: 1 });
    expect(refused).toEqual({ status: 1, data: `Chat ${chatId} is finished: it takes no new sentences` });

    const open = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    await ok('PATCH', 'usecase', alice, { id: usca, close: 1 });
    expect((await call('POST', 'sentence', alice, { chat_id: open, text: 'Hi', role: 1 })).data).toBe(`Use case ${usca} is closed: it takes no new user sentences`);
    expect((await call('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })).data).toMatch(/is closed/);
    await ok('PATCH', 'usecase', alice, { id: usca, open: 1, active: 0 });
    expect((await call('POST', 'sentence', alice, { chat_id: open, text: 'Hi', role: 1 })).data).toBe(`Use case ${usca} is inactive: it takes no new user sentences`);
    expect(stub.requests).toHaveLength(1);
  });
});

// ---------- provider failures ----------

describe('provider failures', () => {
  const cases: { mode: StubMode | 'refused'; message: RegExp; attempts: number }[] = [
    { mode: '401', message: /^Language-model provider error: the client's provider key was rejected \(HTTP 401 bad key\)/, attempts: 1 },
    { mode: '429', message: /^Language-model provider error: rate limit or quota exceeded \(HTTP 429\) after 2 retries/, attempts: 3 },
    { mode: '500', message: /^Language-model provider error: the provider failed \(HTTP 500\) after 2 retries/, attempts: 3 },
    { mode: 'hang', message: /^Language-model provider error: timeout, no answer within 1500 ms$/, attempts: 1 },
    { mode: 'refused', message: /^Language-model provider error: .*cannot connect to http:\/\/127\.0\.0\.1:\d+/, attempts: 0 },
  ];

  for (const { mode, message, attempts } of cases) {
    it(`answers a clear error for ${mode} and stores nothing`, async () => {
      const usca = await newUsecase(alice, clientA, { Description: `Fail ${mode}`, Welcome: 'Hi' });
      const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
      const before = await chatSentences(alice, chatId);
      const tokensBefore = (await usecaseOf(alice, usca)).Tokens;
      if (mode === 'refused') await stub.refuse();
      else stub.state.mode = mode;
      try {
        const res = await call('POST', 'sentence', alice, { chat_id: chatId, text: 'Hello?', role: 1 });
        expect(res.status).toBe(1);
        expect(res.data).toMatch(message);
        expect(res.data).not.toContain(KEY_A);
        expect(res.data).not.toContain('client-a');
      } finally {
        if (mode === 'refused') await stub.listen();
        stub.releaseHanging();
      }
      expect(stub.requests).toHaveLength(attempts);
      expect(await chatSentences(alice, chatId)).toEqual(before);
      expect((await chatOf(alice, chatId)).Tokens).toBe('0');
      expect((await usecaseOf(alice, usca)).Tokens).toBe(tokensBefore);
    });
  }
});

// ---------- isolation ----------

describe('consumers see only their own client', () => {
  it("keeps B away from A's use cases, chats and sentences", async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Private', Welcome: 'Private welcome' }, ['Secret system prompt']);
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;

    expect(await ok('GET', 'chat', bob)).toEqual([]);
    expect(await ok('GET', 'chat', bob, { chat_id: chatId })).toEqual([]);
    expect(await ok('GET', 'chat', bob, { where: `Id = ${chatId} OR Id > 0` })).toEqual([]);
    expect(await ok('GET', 'usecase', bob, { where: 'Id > 0' })).toEqual([]);
    expect((await call('GET', 'usecase', bob, { clie_id: clientA })).data).toBe(`Client ${clientA} not found`);
    expect((await call('GET', 'usecase', bob, { user_id: alice.id, upd_date: '2000-01-01' })).data).toBe(`User ${alice.id} not found`);
    expect((await call('GET', 'sentence', bob, { chat_id: chatId })).data).toBe(`Chat ${chatId} not found`);
    expect((await call('GET', 'sentence', bob, { usca_id: usca })).data).toBe(`Use case ${usca} not found`);
    const own = (await ok('GET', 'sentence', bob, { where: "Text LIKE '%Secret%' OR Id > 0" })) as Record<string, string>[];
    expect(own.every((s) => s.clie_Id === String(clientB))).toBe(true);
    expect((await call('POST', 'sentence', bob, { chat_id: chatId, text: 'Intrusion', role: 1 })).data).toBe(`Chat ${chatId} not found`);
    expect((await call('POST', 'chat', bob, { usca_id: usca, user_id: bob.id })).data).toBe(`Use case ${usca} not found`);
    expect((await call('PATCH', 'chat', bob, { id: chatId, finish: 1 })).data).toBe(`Chat ${chatId} not found`);
    expect((await call('PATCH', 'usecase', bob, { id: usca, close: 1 })).data).toBe(`Use case ${usca} not found`);
    expect((await call('POST', 'usecase_sentence', bob, { usca_id: usca, sent_id: 1 })).data).toBe(`Use case ${usca} not found`);
    expect(stub.requests).toHaveLength(0);

    // Administrators see everything.
    expect(((await ok('GET', 'chat', admin, { chat_id: chatId })) as unknown[]).length).toBe(1);
  });
});

// ---------- /aichat ----------

describe('POST /aichat', () => {
  it('answers the reply text for words and for a JSON message list, with max_tokens', async () => {
    expect(await ok('POST', 'aichat', alice, { prompt: 'Say hello' })).toBe('Hello, I am the assistant.');
    expect(stub.requests[0]!.body).toMatchObject({ messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 4000 });
    expect(stub.requests[0]!.authorization).toBe(`Bearer ${KEY_A}`);
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ];
    await ok('POST', 'aichat', alice, { prompt: JSON.stringify(messages), max_tokens: 50 });
    expect(stub.requests[1]!.body).toMatchObject({ messages, max_tokens: 50 });
  });

  it('counts the prompt tokens with tokens=1 without calling the provider', async () => {
    expect(await ok('POST', 'aichat', alice, { prompt: 'How many tokens is this sentence?', tokens: 1 })).toBe(await counter.count('How many tokens is this sentence?'));
    expect(stub.requests).toHaveLength(0);
  });

  it('streams as server-sent events when asked, and legacy clients get JSON', async () => {
    stub.state.reply = 'Streaming works fine.';
    try {
      const res = await ctx.request({
        method: 'POST',
        url: `${CURRENT}/aichat.php`,
        ...form({ session: alice.session, tz: TZ, prompt: 'Stream please' }),
        headers: { ...form({}).headers, accept: 'text/event-stream' },
      }).catch(async () => {
        // The body is not JSON: read it raw.
        return ctx.app.inject({
          method: 'POST',
          url: `${CURRENT}/aichat.php`,
          payload: new URLSearchParams({ session: alice.session, tz: TZ, prompt: 'Stream please' }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/event-stream' },
        });
      });
      bodies.push(res.body);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      const events = res.body
        .trim()
        .split('\n\n')
        .map((block) => {
          const [eventLine, dataLine] = block.split('\n');
          return { event: eventLine!.replace('event: ', ''), data: JSON.parse(dataLine!.replace('data: ', '')) };
        });
      const deltas = events.filter((e) => e.event === 'delta');
      expect(deltas.length).toBeGreaterThan(1);
      expect(deltas.map((d) => d.data.text).join('')).toBe('Streaming works fine.');
      expect(events.at(-1)).toEqual({ event: 'done', data: { status: 0, data: 'Streaming works fine.', usage: { prompt: 11, completion: 7, total: 18 } } });
      expect(eventStreamProblems(await documentOf(), 'POST', `${CURRENT}/aichat.php`, res.body)).toBeUndefined();
      expect(stub.requests[0]!.body.stream).toBe(true);

      const legacy = await ok('POST', 'aichat', alice, { prompt: 'No stream' });
      expect(legacy).toBe('Streaming works fine.');
    } finally {
      stub.state.reply = 'Hello, I am the assistant.';
    }
  });

  it('answers a failure before the stream starts as the ordinary error envelope', async () => {
    stub.state.mode = '401';
    const res = await ctx.request({
      method: 'POST',
      url: `${CURRENT}/aichat.php`,
      payload: new URLSearchParams({ session: alice.session, tz: TZ, prompt: 'x' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/event-stream' },
    });
    bodies.push(res.body);
    expect(res.envelope.status).toBe(1);
    expect(res.envelope.data).toMatch(/HTTP 401 bad key/);
  });

  it('ends a stream broken halfway with an error event', async () => {
    stub.state.mode = 'break';
    const res = await ctx.app.inject({
      method: 'POST',
      url: `${CURRENT}/aichat.php`,
      payload: new URLSearchParams({ session: alice.session, tz: TZ, prompt: 'x' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/event-stream' },
    });
    bodies.push(res.body);
    const blocks = res.body.trim().split('\n\n');
    expect(blocks[0]).toBe('event: delta\ndata: {"text":"Half an"}');
    expect(blocks.at(-1)).toBe('event: error\ndata: {"status":1,"data":"Language-model provider error: the connection broke during the reply; try again"}');
    expect(eventStreamProblems(await documentOf(), 'POST', `${CURRENT}/aichat.php`, res.body)).toBeUndefined();
  });

  it('exists only in the current version', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: `${OLDER}/aichat.php`, ...form({ session: alice.session, tz: TZ, prompt: 'x' }) });
    expect(res.statusCode).toBe(404);
    expect(stub.requests).toHaveLength(0);
  });

  it('needs a client with a key, and a prompt', async () => {
    const loner = await ctx.createUser();
    expect((await call('POST', 'aichat', loner, { prompt: 'hi' })).data).toMatch(/belong to no client/);
    expect(await call('POST', 'aichat', alice, {})).toEqual({ status: 1, data: "Missing required parameter 'prompt'" });
    expect((await call('POST', 'aichat', alice, { prompt: '[{"role":"robot","content":"x"}]' })).data).toMatch(/Invalid parameter 'prompt'/);
  });
});

// ---------- hand-offs that say why, budgets ----------

describe('hand-offs with their reasons', () => {
  it('records the word, operator and timeout reasons, shows the last on the chat, and reports them per use case', async () => {
    const usca = await newUsecase(alice, clientA, {
      Description: 'Why',
      WordsForManual: 'human',
      WordsForAttention: 'refund',
      ManualMessage: 'A person will help you.',
      TimeOutForAutoMsg: 30,
      AutoMsg: 'Still there?',
    });
    const first = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    expect((await chatOf(alice, first)).HandoffReason).toBeNull();
    await ok('POST', 'sentence', alice, { chat_id: first, text: 'I want a Refund', role: 1 });
    expect(await chatOf(alice, first)).toMatchObject({ Attention: '1', ControlType: 'auto', HandoffReason: 'word: refund' });
    const answer = (await chatSentences(alice, first)).at(-1)!;
    await ok('PATCH', 'chat-sentence', alice, { chat_id: first, sent_id: answer.Id!, rate: 0 });
    await ok('POST', 'sentence', alice, { chat_id: first, text: 'Let me talk to a human', role: 1 });
    expect(await chatOf(alice, first)).toMatchObject({ ControlType: 'manual', HandoffReason: 'word: human' });

    const second = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    await ok('PATCH', 'chat', admin, { id: second, control: 'manual' });
    expect((await chatOf(alice, second)).HandoffReason).toBe('operator');
    // Already manual: no second hand-off.
    await ok('PATCH', 'chat', admin, { id: second, control: 'manual' });

    const third = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    ctx.clock.advance(31_000);
    try {
      await ctx.services.chat.sendDueAutoMessages(ctx.clock.now());
    } finally {
      ctx.clock.advance(-31_000);
    }
    expect((await chatOf(alice, third)).HandoffReason).toBe('timeout');

    const rows = await ctx.database.db.selectFrom('chat_handoffs').select(['chat_id', 'event', 'reason', 'word', 'user_id']).where('usecase_id', '=', usca).orderBy('id').execute();
    expect(rows).toEqual([
      { chat_id: first, event: 'attention', reason: 'word', word: 'refund', user_id: null },
      { chat_id: first, event: 'manual', reason: 'word', word: 'human', user_id: null },
      { chat_id: second, event: 'manual', reason: 'operator', word: null, user_id: admin.id },
      { chat_id: third, event: 'auto_message', reason: 'timeout', word: null, user_id: null },
    ]);

    const report = await ok('GET', 'handoffs', admin, { usca_id: usca });
    expect(report).toEqual([
      {
        usca_Id: usca,
        Description: 'Why',
        Handoffs: 4,
        ByReason: { word: 2, operator: 1, timeout: 1, budget: 0 },
        ByEvent: { manual: 2, attention: 1, auto_message: 1 },
        // Only the switch to a person after the answer rated bad.
        AfterBadAnswer: 1,
        AfterBadAnswerShare: 0.25,
      },
    ]);
    expect(await call('GET', 'handoffs', alice, { usca_id: usca })).toEqual({ status: 1, data: 'Forbidden: this operation requires an administrator' });
  });

  it('hands a chat whose next reply would pass its token budget to a person, with the ManualMessage and reason budget', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Budget', TokenBudget: 100, ManualMessage: 'Our team takes it from here.' });
    expect((await usecaseOf(alice, usca)).TokenBudget).toBe('100');
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'First question', role: 1 });
    expect(stub.requests).toHaveLength(1);
    // The reply may use only what the budget leaves after the prompt.
    const sent = stub.requests[0]!.body;
    expect(sent.max_tokens).toBe(100 - (await counter.countMessages(sent.messages as never)));
    expect((await chatOf(alice, chatId)).Tokens).toBe('18');

    // 18 used + this prompt leaves less than a useful reply: no provider call, no error.
    const id = await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Second question, a bit longer than the first one was', role: 1 });
    expect(typeof id).toBe('number');
    expect(stub.requests).toHaveLength(1);
    expect(await chatOf(alice, chatId)).toMatchObject({ ControlType: 'manual', HandoffReason: 'budget', Tokens: '18' });
    expect((await chatSentences(alice, chatId)).slice(-2).map((s) => [s.Role, s.Text])).toEqual([
      ['1', 'Second question, a bit longer than the first one was'],
      ['2', 'Our team takes it from here.'],
    ]);
    const report = (await ok('GET', 'handoffs', admin, { usca_id: usca })) as { ByReason: Record<string, number> }[];
    expect(report[0]!.ByReason.budget).toBe(1);
    expect((await call('POST', 'usecase', alice, { client_id: clientA, data: '{"TokenBudget":-1}' })).data).toMatch(/TokenBudget/);
  });
});

// ---------- one ledger: tokens beside training runs ----------

describe('the ledger of language-model replies', () => {
  const ledger = async (user: TestUser, query: Record<string, string | number> = {}) =>
    (await ok('GET', 'consumptions', user, query)) as Record<string, unknown>[];

  it('writes a chat record and an aichat record with the provider counts, listed beside training records', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Ledger' });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.usage = { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 };
    try {
      await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Bill me', role: 1 });
      stub.state.usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 };
      await ok('POST', 'aichat', alice, { prompt: 'Count me too' });
    } finally {
      stub.state.usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
    }
    await ctx.services.consumptions.record({ userId: alice.id, jobId: 1, trainingId: 1, appName: 'forecast', host: 'h', pid: 1, ramMb: 3, cpuSeconds: 1, diskMb: 0 });

    const chatRows = await ledger(alice, { kind: 'chat', filters: `chat_id = ${chatId}` });
    expect(chatRows).toEqual([
      expect.objectContaining({
        kind: 'chat',
        user_id: alice.id,
        client_id: clientA,
        usecase_id: usca,
        chat_id: chatId,
        model: 'gpt-4o-mini',
        prompt_tokens: 40,
        completion_tokens: 9,
        ram: 0,
        cpu: 0,
        disk: 0,
        training_id: null,
        job_id: null,
        date_invoiced: null,
      }),
    ]);
    const prompts = (await ledger(alice, { kind: 'aichat' })).filter((r) => r.prompt_tokens === 5);
    expect(prompts).toEqual([expect.objectContaining({ kind: 'aichat', client_id: clientA, usecase_id: null, chat_id: null, completion_tokens: 3 })]);
    const kinds = new Set((await ledger(alice)).map((r) => r.kind));
    expect(kinds).toEqual(new Set(['training', 'chat', 'aichat']));
    expect((await ledger(bob)).every((r) => r.user_id === bob.id)).toBe(true);
  });

  it('writes no record when the provider fails, and one per streamed prompt', async () => {
    const count = async () => (await ledger(alice, { kind: 'aichat' })).length;
    const before = await count();
    stub.state.mode = '401';
    expect((await call('POST', 'aichat', alice, { prompt: 'fails' })).status).toBe(1);
    expect(await count()).toBe(before);
    stub.state.mode = 'ok';
    await ctx.app.inject({
      method: 'POST',
      url: `${CURRENT}/aichat.php`,
      payload: new URLSearchParams({ session: alice.session, tz: TZ, prompt: 'Stream and bill' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/event-stream' },
    });
    expect(await count()).toBe(before + 1);
  });

  it('invoices token records with the training records, and an invoiced record never changes again', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Invoice' });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Invoice me', role: 1 });
    const [row] = await ledger(alice, { filters: `chat_id = ${chatId}` });
    const marked = (await ok('PATCH', 'consumptions', admin, { ids: String(row!.id) })) as number;
    expect(marked).toBe(1);
    const [invoiced] = await ledger(alice, { filters: `chat_id = ${chatId}` });
    expect(invoiced!.date_invoiced).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    // Invoicing again changes nothing.
    expect(await ok('PATCH', 'consumptions', admin, { ids: String(row!.id) })).toBe(0);
    const db = ctx.database.db;
    await expect(db.updateTable('consumptions').set({ prompt_tokens: 1 }).where('id', '=', row!.id as number).execute()).rejects.toThrow(/invoiced and cannot change/);
    await expect(db.deleteFrom('consumptions').where('id', '=', row!.id as number).execute()).rejects.toThrow(/invoiced and cannot change/);
    expect((await ledger(alice, { filters: `chat_id = ${chatId}` }))[0]).toEqual(invoiced);
    // The until form covers chat and aichat records too.
    await ok('PATCH', 'consumptions', admin, { until: '2999-12-31' });
    expect(await ledger(alice, { invoiced: 0 })).toEqual([]);
  });
});

// ---------- secrets ----------

describe('the provider key', () => {
  it('never appears in a reply body or a log line', async () => {
    expect(bodies.length).toBeGreaterThan(50);
    for (const key of [KEY_A, KEY_B]) {
      for (const body of bodies) expect(body).not.toContain(key);
      for (const line of ctx.logLines) expect(line).not.toContain(key);
      expect(ctx.logLines.join('\n')).not.toContain(key.slice(8, 30));
    }
  });
});

// ---------- forecast tools in chat ----------

describe('forecast tools in chat', () => {
  // The tools reach only jobs of applications the chat user is subscribed to, as creating jobs requires.
  beforeAll(async () => {
    await ok('POST', 'subscriptions', alice, { app: 'forecast' });
  });

  /** A Finished job of `user` with a stored forecast (and intervals on sales). */
  async function finishedJob(user: TestUser, description: string, sales: string[], successRate: number, app = 'forecast'): Promise<number> {
    const { jobId } = await factories(ctx.database.db).job(user, { app_name: app, status: 3, trainingValues: { description, success_rate: successRate, status: 2 } });
    const rows = sales.map((v, i) => ({ month: String(i + 1), sales: v }));
    const bounds = (v: string) => ({ lo80: String(Number(v) - 1), hi80: String(Number(v) + 1), lo95: String(Number(v) - 2), hi95: String(Number(v) + 2) });
    await ctx.services.data.writeOutput(jobId, rows, ['month', 'sales'], sales.map((v) => ({ sales: bounds(v) })));
    return jobId;
  }
  /** The final answer made from the last tool result the request carries: the forecast figures and success rate. */
  const answerFromForecast = (body: { messages: { role: string; content: string | null }[] }) => {
    const last = [...body.messages].reverse().find((m) => m.role === 'tool' && m.content?.includes('"rows"'));
    if (!last) return 'I found no forecast.';
    const read = JSON.parse(last.content!) as { rows: Record<string, string>[]; success_rate: number };
    return `Forecast: ${read.rows.map((r) => `${r.month}=${r.sales} [${r.sales_lo95}, ${r.sales_hi95}]`).join('; ')}. Success rate ${read.success_rate}%.`;
  };

  it('accepts and returns ModelTools, 0 by default', async () => {
    const plain = await newUsecase(alice, clientA, { Description: 'Plain' });
    expect((await usecaseOf(alice, plain)).ModelTools).toBe('0');
    const tooled = await newUsecase(alice, clientA, { Description: 'Tooled', ModelTools: 1 });
    expect((await usecaseOf(alice, tooled)).ModelTools).toBe('1');
    expect((await call('POST', 'usecase', alice, { client_id: clientA, data: JSON.stringify({ ModelTools: 2 }) })).data).toMatch(/ModelTools.*0 or 1/);
    // No tools offered when the use case does not enable them.
    const chatId = (await ok('POST', 'chat', alice, { usca_id: plain, user_id: alice.id })) as number;
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Hi', role: 1 });
    expect(stub.requests.at(-1)!.body.tools).toBeUndefined();
  });

  it("reaches only the chat user's own jobs, answers with the stored figures, and stores and counts the tool turns", async () => {
    const own = await finishedJob(alice, 'Alice sales model', ['120.5', '130.25', '140'], 87.5);
    const foreign = await finishedJob(bob, 'Bob secret model', ['999123', '999124'], 42.25);
    const usca = await newUsecase(alice, clientA, { Description: 'Forecast desk', ModelTools: 1 });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.toolCalls = [
      [{ name: 'list_jobs', arguments: {} }, { name: 'read_forecast', arguments: { job_id: foreign } }],
      [{ name: 'read_forecast', arguments: { job_id: own } }],
    ];
    stub.state.replyFrom = answerFromForecast;

    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'What will I sell?', role: 1 });

    // Three requests: two tool rounds and the final answer; every one offers the three tools.
    expect(stub.requests).toHaveLength(3);
    for (const r of stub.requests) expect(r.body.tools?.map((t) => t.function.name)).toEqual(['list_jobs', 'read_forecast', 'predict']);
    const sent = JSON.stringify(stub.requests.map((r) => r.body));
    expect(sent).not.toContain('999123');
    expect(sent).not.toContain('Bob secret model');
    expect(sent).not.toContain('42.25');
    expect(sent).toContain(`Job ${foreign} not found`);
    expect(sent).toContain('Alice sales model');

    // The answer's figures are the job's stored output, read back through GET /data.
    const stored = (await ok('GET', 'data', alice, { type: 0, job_id: own, output: 1, intervals: 1 })) as Record<string, string>[];
    const expected = `Forecast: ${stored.map((r) => `${r.month}=${r.sales} [${r.sales_lo95}, ${r.sales_hi95}]`).join('; ')}. Success rate 87.5%.`;
    expect(expected).toBe('Forecast: 1=120.5 [118.5, 122.5]; 2=130.25 [128.25, 132.25]; 3=140 [138, 142]. Success rate 87.5%.');
    const said = await chatSentences(alice, chatId);
    const answer = said.at(-1)!;
    expect(answer).toMatchObject({ Role: '2', Text: expected });

    // The tool turns are kept with the answer, in order, with what each tool answered.
    const turns = JSON.parse(answer.Tools!) as { name: string; arguments: string; result: string }[];
    expect(turns.map((t) => t.name)).toEqual(['list_jobs', 'read_forecast', 'read_forecast']);
    expect(JSON.parse(turns[1]!.result)).toEqual({ error: `Job ${foreign} not found` });
    const listed = JSON.parse(turns[0]!.result) as { jobs: { job_id: number }[] };
    expect(listed.jobs.map((j) => j.job_id)).toContain(own);
    expect(listed.jobs.map((j) => j.job_id)).not.toContain(foreign);
    expect(said.at(-2)!.Tools).toBeNull();

    // Counted: three provider calls of 18 tokens on the chat, and one ledger record with their sum.
    expect((await chatOf(alice, chatId)).Tokens).toBe('54');
    const ledger = (await ok('GET', 'consumptions', alice, { kind: 'chat', filters: `chat_id = ${chatId}` })) as Record<string, unknown>[];
    expect(ledger).toEqual([expect.objectContaining({ prompt_tokens: 33, completion_tokens: 21 })]);

    // A later turn sees what was looked up: the stored calls and results come back before the answer.
    stub.requests.length = 0;
    stub.state.replyFrom = undefined;
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Thanks', role: 1 });
    const later = stub.requests[0]!.body.messages;
    const at = later.findIndex((m) => m.role === 'assistant' && m.tool_calls?.length === 3);
    expect(at).toBeGreaterThan(-1);
    expect(later.slice(at + 1, at + 4).map((m) => m.role)).toEqual(['tool', 'tool', 'tool']);
    expect(later[at + 4]).toMatchObject({ role: 'assistant', content: expected });
  });

  it("hands the model the forecast chart's address (PUBLIC_URL, no session), which the user's browser opens with its cookie", async () => {
    const own = await finishedJob(alice, 'Alice chart model', ['10', '12', '15'], 80);
    const usca = await newUsecase(alice, clientA, { Description: 'Chart desk', ModelTools: 1 });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.toolCalls = [[{ name: 'read_forecast', arguments: { job_id: own } }]];
    stub.state.replyFrom = (body) => `See the chart: ${(JSON.parse(body.messages.at(-1)!.content!) as { chart_url: string }).chart_url}`;
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Show me', role: 1 });

    const address = `http://front.example/api/202203010900/charts.php?job_id=${own}&format=png`;
    expect(ctx.config.publicUrl).toBe('http://front.example');
    expect((await lastTurns(alice, chatId))[0]!.result.chart_url).toBe(address);
    expect((await chatSentences(alice, chatId)).at(-1)!.Text).toBe(`See the chart: ${address}`);
    expect(JSON.stringify(stub.requests.map((r) => r.body))).not.toContain(alice.session);
    // The address is the chart resource itself: the signed-in browser's cookie is all it needs.
    const opened = await ctx.app.inject({ method: 'GET', url: address.slice('http://front.example'.length), cookies: { session: alice.session } });
    expect(opened.headers['content-type']).toBe('image/png');
    expect(opened.rawPayload.subarray(1, 4).toString()).toBe('PNG');
  });

  it("predicts with the job's trained model, as POST /forecasts.php does, keeping the row as an output", { timeout: 60_000 }, async () => {
    const rows: string[][] = [];
    for (let i = 0; i < 24; i++) rows.push([String((i % 6) + 1), String(2 * ((i % 6) + 1) + 1)]);
    const pool = createTrainingPool({ maxThreads: 1 });
    let model;
    try {
      ({ model } = await pool.train({
        header: ['x', 'y'],
        columns: [
          { name: 'x', role: 'input', kind: 'numeric' },
          { name: 'y', role: 'output', kind: 'numeric' },
        ],
        rows,
        params: { seed: 7, epochs: 100, layersRequested: 1 },
      }));
    } finally {
      await pool.close();
    }
    const jobId = await finishedJob(alice, 'Alice line model', ['1'], 90);
    const { training_id: trainingId } = await ctx.database.db.selectFrom('jobs').select('training_id').where('id', '=', jobId).executeTakeFirstOrThrow();
    await ctx.services.networks.saveModel(trainingId, alice.id, model);
    const usca = await newUsecase(alice, clientA, { Description: 'Predict desk', ModelTools: 1 });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.toolCalls = [[{ name: 'predict', arguments: { job_id: jobId, inputs: { x: 4 } } }]];
    stub.state.replyFrom = (body) => {
      const result = JSON.parse(body.messages.at(-1)!.content!) as { prediction: Record<string, string> };
      return `y will be ${result.prediction.y}`;
    };
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'What if x is 4?', role: 1 });
    const stored = (await ok('GET', 'data', alice, { type: 0, job_id: jobId, output: 1 })) as Record<string, string>[];
    expect(stored).toEqual([{ x: '4', y: expect.any(String) }]);
    expect((await chatSentences(alice, chatId)).at(-1)!.Text).toBe(`y will be ${stored[0]!.y}`);
  });

  /** The tool turns stored with a chat's last answer, each result parsed. */
  const lastTurns = async (user: TestUser, chatId: number) =>
    (JSON.parse((await chatSentences(user, chatId)).at(-1)!.Tools!) as { name: string; result: string }[]).map((t) => ({ name: t.name, result: JSON.parse(t.result) as Record<string, unknown> }));
  const listedIds = (result: Record<string, unknown>) => (result.jobs as { job_id: number }[]).map((j) => j.job_id);

  it('reaches a job only while its application has an active subscription; after it ends nothing of the job reaches the provider', async () => {
    await ctx.database.db.insertInto('applications').values({ name: 'demand_plan', plan_id: 'basic' }).execute();
    expect(await ok('POST', 'subscriptions', alice, { app: 'demand_plan' })).toEqual(expect.any(Number));
    const job = await finishedJob(alice, 'Alice demand model', ['777001', '777002'], 66.25, 'demand_plan');
    const kept = await finishedJob(alice, 'Alice kept model', ['5'], 50);
    // A job of an application that no longer exists (app_name has no foreign key) counts as unsubscribed.
    const orphan = await finishedJob(alice, 'Alice orphan model', ['6'], 40, 'retired_app');
    const usca = await newUsecase(alice, clientA, { Description: 'Demand desk', ModelTools: 1 });
    const ask = async () => {
      stub.requests.length = 0;
      stub.state.toolCalls = [
        [
          { name: 'list_jobs', arguments: {} },
          { name: 'read_forecast', arguments: { job_id: job } },
          { name: 'predict', arguments: { job_id: job, inputs: { month: 3 } } },
        ],
      ];
      // A fresh chat each time: an earlier answer and its tool turns stay in their own chat's history.
      const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
      await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'How is demand?', role: 1 });
      return { chatId, sent: JSON.stringify(stub.requests.map((r) => r.body)) };
    };

    // Subscribed: listed and readable (predict gets as far as the missing model).
    const before = await ask();
    const [listed, read, predicted] = await lastTurns(alice, before.chatId);
    expect(listedIds(listed!.result)).toEqual(expect.arrayContaining([job, kept]));
    expect(listedIds(listed!.result)).not.toContain(orphan);
    expect(read!.result).toMatchObject({ job_id: job, success_rate: 66.25, total_rows: 2 });
    expect(predicted!.result.error).toMatch(/^Training \d+ has no trained network yet$/);
    for (const figure of ['777001', 'Alice demand model', 'demand_plan', '66.25']) expect(before.sent).toContain(figure);

    // The subscription ends through the real endpoint: the same calls are refused inside the tools.
    expect(await ok('DELETE', 'subscriptions', alice, { app: 'demand_plan' })).toBe('success');
    const after = await ask();
    const refusal = { error: `Forbidden: job ${job} belongs to an application you have no active subscription to` };
    const turns = await lastTurns(alice, after.chatId);
    expect(turns.map((t) => t.name)).toEqual(['list_jobs', 'read_forecast', 'predict']);
    expect(listedIds(turns[0]!.result)).toContain(kept);
    expect(listedIds(turns[0]!.result)).not.toContain(job);
    expect(turns[1]!.result).toEqual(refusal);
    expect(turns[2]!.result).toEqual(refusal);
    expect(stub.requests).toHaveLength(2);
    for (const figure of ['777001', '777002', 'Alice demand model', 'demand_plan', '66.25', 'no trained network']) expect(after.sent).not.toContain(figure);
    expect(after.sent).toContain('Alice kept model');
    // GET /data still answers the owner: the subscription rule is the tools' scope, as for creating jobs.
    expect(await ok('GET', 'data', alice, { type: 0, job_id: job, output: 1 })).toHaveLength(2);
  });

  it("needs no subscription for an administrator's own jobs, and a disabled chat user's tools reach nothing", async () => {
    // Administrators create jobs without a subscription; the tools follow that, still only for their own jobs.
    const adminJob = await finishedJob(admin, 'Admin demand model', ['424242'], 70);
    const usca = await newUsecase(admin, clientA, { Description: 'Admin desk', ModelTools: 1 });
    const adminChat = (await ok('POST', 'chat', admin, { usca_id: usca, user_id: admin.id })) as number;
    stub.state.toolCalls = [[{ name: 'read_forecast', arguments: { job_id: adminJob } }]];
    await ok('POST', 'sentence', admin, { chat_id: adminChat, text: 'Mine?', role: 1 });
    expect((await lastTurns(admin, adminChat))[0]!.result).toMatchObject({ job_id: adminJob, total_rows: 1 });
    expect(JSON.stringify(stub.requests.at(-1)!.body)).toContain('424242');

    // A member of client A whose account an administrator disabled: its chat still answers, its tools refuse.
    const carol = await ctx.createUser({ name: 'Carol' });
    await ok('PATCH', 'client', admin, { id: clientA, user_id: carol.id });
    await ok('POST', 'subscriptions', carol, { app: 'forecast' });
    const carolJob = await finishedJob(carol, 'Carol private model', ['313131'], 80);
    const carolChat = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: carol.id })) as number;
    const readCarol = () => [[{ name: 'list_jobs', arguments: {} }, { name: 'read_forecast', arguments: { job_id: carolJob } }]];
    stub.state.toolCalls = readCarol();
    await ok('POST', 'sentence', alice, { chat_id: carolChat, text: 'Carol?', role: 1, user_id: carol.id });
    expect((await lastTurns(alice, carolChat))[1]!.result).toMatchObject({ job_id: carolJob });

    expect(await ok('PATCH', 'users', admin, { user_id: carol.id, enabled: 0 })).toBe('success');
    const otherChat = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: carol.id })) as number;
    stub.requests.length = 0;
    stub.state.toolCalls = readCarol();
    await ok('POST', 'sentence', alice, { chat_id: otherChat, text: 'Carol?', role: 1 });
    expect((await lastTurns(alice, otherChat)).map((t) => t.result)).toEqual([{ error: 'This user is disabled' }, { error: 'This user is disabled' }]);
    const sent = JSON.stringify(stub.requests.map((r) => r.body));
    expect(sent).not.toContain('313131');
    expect(sent).not.toContain('Carol private model');
  });

  it('selects Tools with fields and filters it with LIKE, ILIKE and IS NULL on the text it shows; other operators are refused', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Audit desk', ModelTools: 1 });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.toolCalls = [[{ name: 'list_jobs', arguments: {} }]];
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'List them', role: 1 });
    stub.state.toolCalls = [[{ name: 'predict', arguments: { job_id: 1, inputs: {} } }]];
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Predict', role: 1 });
    const list = (query: Record<string, string>) => ok('GET', 'sentence', alice, { chat_id: chatId, ...query }) as Promise<Record<string, string | null>[]>;

    // Two questions, each with its answer; only the answers carry tool turns.
    const all = await list({});
    expect(all.map((s) => s.Tools === null)).toEqual([true, false, true, false]);
    expect(Object.keys(all[0]!).at(-1)).toBe('Tools');
    const picked = await list({ fields: 'Id,tools' });
    expect(picked).toEqual(all.map((s) => ({ Id: s.Id, Tools: s.Tools })));

    // A pattern cut from the text the listing shows matches it as shown.
    const shown = all[1]!.Tools!;
    const cut = shown.slice(shown.indexOf('"name"'), shown.indexOf('list_jobs') + 'list_jobs'.length + 1);
    expect(cut).toMatch(/^"name": ?"list_jobs"$/);
    expect((await list({ fields: 'Id', where: `Tools LIKE '%${cut}%'` })).map((s) => s.Id)).toEqual([all[1]!.Id]);
    expect((await list({ fields: 'Id', where: "Tools ILIKE '%PREDICT%' OR Tools IS NULL AND Role = 1" })).map((s) => s.Id)).toEqual([all[0]!.Id, all[2]!.Id, all[3]!.Id]);
    expect((await list({ fields: 'Id', where: 'Tools IS NOT NULL' })).map((s) => s.Id)).toEqual([all[1]!.Id, all[3]!.Id]);
    expect(await list({ where: "Tools NOT LIKE '%_jobs%' AND Tools NOT LIKE '%predict%'" })).toEqual([]);

    for (const where of ["Tools = '[]'", "Tools IN ('x')", "Tools NOT BETWEEN 'a' AND 'b'", "'x' <> Tools"]) {
      const refused = await call('GET', 'sentence', alice, { chat_id: chatId, where });
      expect(refused, where).toEqual({ status: 1, data: expect.stringMatching(/^Invalid parameter 'where': .* is not allowed on 'Tools', which holds JSON; use LIKE, ILIKE or IS \[NOT\] NULL at position \d+ \(0-based\)$/) });
    }
    // Only a chat's sentences have tool turns: the client's free sentences have no Tools column.
    expect((await call('GET', 'sentence', alice, { fields: 'Tools' })).data).toMatch(/^Invalid parameter 'fields': unknown column 'Tools'/);
  });

  it('hands the model at most 50 forecast rows and runs at most 8 tool calls per reply', async () => {
    const long = await finishedJob(alice, 'Alice long model', Array.from({ length: 60 }, (_, i) => String(1000 + i)), 75);
    const usca = await newUsecase(alice, clientA, { Description: 'Limits', ModelTools: 1 });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.toolCalls = [Array.from({ length: 10 }, () => ({ name: 'read_forecast', arguments: { job_id: long } }))];
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Everything, ten times', role: 1 });

    const turns = await lastTurns(alice, chatId);
    expect(turns).toHaveLength(10);
    for (const { result } of turns.slice(0, 8)) {
      expect(result).toMatchObject({ job_id: long, total_rows: 60 });
      expect((result.rows as Record<string, string>[]).map((r) => r.sales)).toEqual(Array.from({ length: 50 }, (_, i) => String(1000 + i)));
    }
    for (const { result } of turns.slice(8)) expect(result).toEqual({ error: 'At most 8 tool calls run per reply; answer with what you have' });
    // The cap reached, the next request asks for the text answer.
    expect(stub.requests.map((r) => r.body.tool_choice)).toEqual(['auto', 'none']);
    const fed = stub.requests[1]!.body.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content!) as { rows?: unknown[] });
    expect(fed.map((m) => m.rows?.length ?? 0)).toEqual([...Array<number>(8).fill(50), 0, 0]);
  });

  it('stops offering tool calls after three rounds and asks for a text answer', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Loop', ModelTools: 1 });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.toolCalls = Array.from({ length: 5 }, () => [{ name: 'list_jobs', arguments: {} }]);
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Loop forever', role: 1 });
    expect(stub.requests.map((r) => r.body.tool_choice)).toEqual(['auto', 'auto', 'auto', 'none']);
    expect((await chatSentences(alice, chatId)).at(-1)).toMatchObject({ Role: '2', Text: 'Hello, I am the assistant.' });
    expect((await chatOf(alice, chatId)).Tokens).toBe('72');
  });

  it('answers plainly when the provider refuses tools: one retry without them', async () => {
    const usca = await newUsecase(alice, clientA, { Description: 'Old server', ModelTools: 1 });
    const chatId = (await ok('POST', 'chat', alice, { usca_id: usca, user_id: alice.id })) as number;
    stub.state.mode = 'no-tools';
    await ok('POST', 'sentence', alice, { chat_id: chatId, text: 'Hello?', role: 1 });
    expect(stub.requests.map((r) => r.body.tools === undefined)).toEqual([false, true]);
    expect((await chatSentences(alice, chatId)).at(-1)).toMatchObject({ Role: '2', Text: 'Hello, I am the assistant.', Tools: null });
  });
});
