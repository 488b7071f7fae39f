import { describe, expect, it } from 'vitest';
import { parsePrompt } from '../../src/domain/chat/prompts.service.js';
import { createSecretBox, maskSecret } from '../../src/domain/chat/secret-box.js';
import { containsAnyWord, wordList } from '../../src/domain/chat/words.js';
import { providerError } from '../../src/llm/openai-provider.js';
import { createTokenCounter, encodingForModel } from '../../src/llm/tokens.js';

describe('secret box', () => {
  const KEY = 'a-secret-key-of-at-least-32-characters!!';
  const box = createSecretBox(KEY);
  it('round-trips, uses a fresh IV each time and never holds the plain text', () => {
    const a = box.seal('sk-abcdef0123456789', 'client:1');
    const b = box.seal('sk-abcdef0123456789', 'client:1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('abcdef');
    expect(a.startsWith(`v2:${box.keyId}:`)).toBe(true);
    expect(box.open(a, 'client:1')).toBe('sk-abcdef0123456789');
  });
  it('refuses tampered text, another row, a relabelled key id and another key, saying why', () => {
    const sealed = box.seal('sk-abcdef0123456789', 'client:1');
    const flipped = `${sealed.slice(0, -2)}${sealed.at(-2) === 'A' ? 'B' : 'A'}${sealed.at(-1)}`;
    expect(() => box.open(flipped, 'client:1')).toThrow(/client:1 fails authentication: it was altered or belongs to another row/);
    expect(() => box.open(sealed, 'client:2')).toThrow(/client:2 fails authentication/);
    const other = createSecretBox('another-secret-key-of-32-characters-xx');
    expect(() => other.open(sealed, 'client:1')).toThrow(/sealed with key [0-9a-f]{8}, which is neither SECRET_KEY nor SECRET_KEY_PREVIOUS/);
    const relabelled = sealed.replace(box.keyId, other.keyId);
    expect(() => createSecretBox('another-secret-key-of-32-characters-xx', KEY).open(relabelled, 'client:1')).toThrow(/fails authentication/);
  });
  it('reads with the previous key while rotating, and marks what needs re-sealing', () => {
    const old = box.seal('sk-abcdef0123456789', 'client:7');
    const rotating = createSecretBox('the-new-secret-key-of-32-characters-xx', KEY);
    expect(rotating.open(old, 'client:7')).toBe('sk-abcdef0123456789');
    expect(rotating.isStale(old)).toBe(true);
    expect(rotating.isStale(rotating.seal('x', 'client:7'))).toBe(false);
  });
  it('masks keys as sk-...abcd', () => {
    expect(maskSecret('sk-proj-0123456789abcd')).toBe('sk-...abcd');
    expect(maskSecret('short')).toBe('...');
  });
});

describe('word lists', () => {
  it('match whole words and phrases regardless of case and accents', () => {
    expect(wordList('human, real person;Agente\n')).toEqual(['human', 'real person', 'agente']);
    expect(containsAnyWord('I want a HUMAN!', 'human')).toBe(true);
    expect(containsAnyWord('humanity rules', 'human')).toBe(false);
    expect(containsAnyWord('Quiero hablar con un agénte', 'agente')).toBe(true);
    expect(containsAnyWord('a real   person', 'real person')).toBe(true);
    expect(containsAnyWord('anything', '')).toBe(false);
    expect(containsAnyWord('price (x+1)?', '(x+1)')).toBe(true);
  });
});

describe('prompts', () => {
  it('reads words, a message array, or refuses a malformed one', () => {
    expect(parsePrompt('Hello there')).toEqual({ kind: 'words', text: 'Hello there' });
    expect(parsePrompt('[not json')).toEqual({ kind: 'words', text: '[not json' });
    expect(parsePrompt('[{"role":"system","content":"a"},{"role":1,"content":"b"}]')).toEqual({
      kind: 'messages',
      messages: [
        { role: 'system', content: 'a' },
        { role: 'user', content: 'b' },
      ],
    });
    expect(() => parsePrompt('[]')).toThrow(/Invalid parameter 'prompt'/);
    expect(() => parsePrompt('[{"role":"user"}]')).toThrow(/Invalid parameter 'prompt'/);
  });
});

describe('token counting', () => {
  it('picks the encoding of the model and counts real tokens, not words', async () => {
    expect(encodingForModel('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingForModel('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingForModel('llama-3.1-8b-instruct')).toBe('o200k_base');
    const counter = createTokenCounter('gpt-4o-mini');
    expect(await counter.count('')).toBe(0);
    expect(await counter.count('internationalization')).not.toBe(1);
    expect(await counter.countMessages([{ role: 'user', content: 'hi' }])).toBe(3 + 3 + (await counter.count('user')) + (await counter.count('hi')));
  });
});

describe('provider errors', () => {
  const ctx = { apiKey: 'sk-live-secret-123456', timedOut: false, timeoutMs: 1000, maxRetries: 2, origin: 'http://llm:8000' };
  it('name the cause and never carry the key', () => {
    expect(providerError(new Error('boom sk-live-secret-123456'), ctx).message).not.toContain('sk-live-secret-123456');
    expect(providerError(new Error('x'), { ...ctx, timedOut: true }).message).toMatch(/timeout, no answer within 1000 ms/);
    expect(providerError(new Error('x'), { ...ctx, timedOut: true, lastStatus: 503 }).message).toMatch(/while retrying \(last attempt: HTTP 503\)/);
    expect(providerError(new Error('x'), ctx).code).toBe('provider_error');
  });
});
