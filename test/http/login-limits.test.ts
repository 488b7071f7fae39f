import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScryptHasher } from '../../src/domain/accounts/secrets.js';
import { slowdownMs } from '../../src/domain/accounts/sessions.service.js';
import { CURRENT, OLDER, createTestContext, form, type TestContext } from '../support/helper.js';

/**
 * Failed logins count per (e-mail, client address), so someone failing for another's e-mail
 * from its own address is refused without locking the owner out; e-mail-wide failures only slow the
 * check down; password hashing is bounded and refuses fast past the bound.
 */
const PAIR_LIMIT = 5;
const SLOWDOWN_MAX_MS = 300;
const WINDOW_S = 900;

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({
    env: {
      LOGIN_FAILURES_PER_ADDRESS: String(PAIR_LIMIT),
      LOGIN_FAILURE_WINDOW: String(WINDOW_S),
      LOGIN_SLOWDOWN_MAX_MS: String(SLOWDOWN_MAX_MS),
      PASSWORD_HASH_CONCURRENCY: '1',
      PASSWORD_HASH_QUEUE: '1',
    },
  });
});
afterAll(async () => {
  await ctx?.close();
});

const ATTACKER = '203.0.113.7';
const OWNER = '198.51.100.20';

function login(email: string, password: string, remoteAddress: string, version = CURRENT) {
  return ctx.request({ method: 'POST', url: `${version}/sessions.php`, remoteAddress, ...form({ email, password }) });
}

describe('failed logins per e-mail and address', () => {
  it('lets the owner log in from another address while someone fails 30 times for that e-mail from theirs', async () => {
    const owner = await ctx.createUser();
    const answers: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await login(owner.email, `wrong-${i}`, ATTACKER, i % 2 ? OLDER : CURRENT);
      expect(res.statusCode).toBe(200);
      expect(res.envelope.status).toBe(1);
      answers.push(String(res.envelope.data));
      if (i === 15) {
        const mid = await login(owner.email, owner.password, OWNER);
        expect(mid.envelope.status, String(mid.envelope.data)).toBe(0);
      }
    }
    // The attacker's pair: PAIR_LIMIT wrong passwords, then refused without a check.
    expect(answers.slice(0, PAIR_LIMIT)).toEqual(Array(PAIR_LIMIT).fill('Invalid e-mail or password'));
    for (const answer of answers.slice(PAIR_LIMIT)) expect(answer).toMatch(/^Too many attempts; try again in \d+ seconds$/);
    const retry = Number(/in (\d+) seconds/.exec(answers.at(-1)!)![1]);
    expect(retry).toBeGreaterThan(WINDOW_S - 60);
    expect(retry).toBeLessThanOrEqual(WINDOW_S);
    // Refused even with the right password from that address: the pair is closed, not the account.
    expect((await login(owner.email, owner.password, ATTACKER)).envelope.data).toMatch(/^Too many attempts/);

    // The owner, from its own address: served, only slowed down by the e-mail-wide failures.
    const started = performance.now();
    const res = await login(owner.email, owner.password, OWNER, OLDER);
    expect(res.envelope.status, String(res.envelope.data)).toBe(0);
    expect(slowdownMs(PAIR_LIMIT, SLOWDOWN_MAX_MS)).toBeGreaterThan(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(slowdownMs(PAIR_LIMIT, SLOWDOWN_MAX_MS) - 5);
    const session = res.envelope.data[0].Hash as string;
    expect((await ctx.request({ method: 'GET', url: `${CURRENT}/sessions.php?session=${session}` })).envelope.status).toBe(0);
  });

  it('refuses a pair after LOGIN_FAILURES_PER_ADDRESS failures until they leave the window; other pairs stay open', async () => {
    const user = await ctx.createUser();
    const other = await ctx.createUser();
    const from = '192.0.2.55';
    for (let i = 0; i < PAIR_LIMIT - 1; i++) expect((await login(user.email, 'wrong', from)).envelope.data).toBe('Invalid e-mail or password');
    // Below the limit the right password still works, and clears that pair's failures.
    expect((await login(user.email, user.password, from)).envelope.status).toBe(0);
    for (let i = 0; i < PAIR_LIMIT; i++) expect((await login(user.email, 'wrong', from)).envelope.data).toBe('Invalid e-mail or password');
    const refused = await login(user.email, user.password, from);
    expect(refused.statusCode).toBe(200);
    expect(refused.envelope).toEqual({ status: 1, data: expect.stringMatching(/^Too many attempts; try again in \d+ seconds$/) });
    // Another e-mail from that address, and that e-mail from another address, are not refused.
    expect((await login(other.email, other.password, from)).envelope.status).toBe(0);
    expect((await login(user.email, user.password, '192.0.2.56')).envelope.status).toBe(0);
    // An unknown e-mail is limited the same way (no hint whether it exists).
    for (let i = 0; i < PAIR_LIMIT; i++) await login('nobody@example.com', 'wrong', from);
    expect((await login('nobody@example.com', 'wrong', from)).envelope.data).toMatch(/^Too many attempts/);

    ctx.clock.advance((WINDOW_S + 1) * 1000);
    try {
      expect((await login(user.email, user.password, from)).envelope.status).toBe(0);
    } finally {
      ctx.clock.advance(-(WINDOW_S + 1) * 1000);
    }
  });
});

describe('password hashing bound', () => {
  it('refuses fast with rate_limited and a retry time when more logins hash at once than PASSWORD_HASH_CONCURRENCY + QUEUE', async () => {
    const user = await ctx.createUser();
    // A production-strength hash (the stored format carries its cost): each check takes long enough
    // for all the logins below to arrive while the first still hashes.
    const strong = await createScryptHasher(17).hash(user.password);
    await ctx.database.db.updateTable('users').set({ password_hash: strong }).where('id', '=', user.id).execute();

    const started = performance.now();
    const replies = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        login(user.email, user.password, `10.9.0.${i + 1}`).then((res) => ({ res, ms: performance.now() - started })),
      ),
    );
    const served = replies.filter((r) => r.res.envelope.status === 0);
    const refused = replies.filter((r) => r.res.envelope.status === 1);
    // One hashing, one waiting; the other four refused.
    expect(served).toHaveLength(2);
    expect(refused).toHaveLength(4);
    for (const { res, ms } of refused) {
      expect(res.statusCode).toBe(200);
      expect(res.envelope.data).toMatch(/^Too many attempts; try again in [1-9]\d* seconds$/);
      // Answered before the first hash finished: refused, not queued.
      expect(ms).toBeLessThan(Math.min(...served.map((s) => s.ms)));
    }
    // A refused login is not a failed one: the same addresses log in once the hashing is done.
    expect((await login(user.email, user.password, '10.9.0.6')).envelope.status).toBe(0);
  });
});

describe('password recovery', () => {
  it('counts only the mails it sent, so requests for someone else do not keep the owner from a working link', async () => {
    const user = await ctx.createUser();
    const recover = () => ctx.request({ method: 'POST', url: `${CURRENT}/passwords.php`, remoteAddress: ATTACKER, ...form({ email: user.email }) });
    const mailsTo = () => ctx.mail.messages.filter((m) => m.to === user.email && m.subject === 'Password recovery').length;
    for (let i = 0; i < 5; i++) expect((await recover()).envelope).toEqual({ status: 0, data: 'success' });
    await ctx.mail.waitFor(user.email, 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(mailsTo()).toBe(3);
    // Half an hour later the requests go on (dropped: three mails, each valid for the hour, are out).
    ctx.clock.advance(30 * 60 * 1000);
    try {
      for (let i = 0; i < 5; i++) await recover();
      await new Promise((r) => setTimeout(r, 200));
      expect(mailsTo()).toBe(3);
      // Once the first mails' hour is over, a request sends a new one: dropped requests never counted.
      ctx.clock.advance(31 * 60 * 1000);
      const before = ctx.mail.messages.length;
      await ctx.request({ method: 'POST', url: `${CURRENT}/passwords.php`, remoteAddress: OWNER, ...form({ email: user.email }) });
      expect((await ctx.mail.waitFor(user.email, before)).subject).toBe('Password recovery');
    } finally {
      ctx.clock.advance(-61 * 60 * 1000);
    }
  });
});
