import { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import { modelToEncodingMap, type EncodingName, type ModelName } from 'gpt-tokenizer/mapping';
import { resolveEncodingAsync } from 'gpt-tokenizer/resolveEncodingAsync';
import type { LlmMessage } from './provider.js';

/** Counts tokens the way the configured model's tokenizer does (not words). */
export interface TokenCounter {
  readonly encoding: EncodingName;
  count(text: string): Promise<number>;
  /** Tokens a chat request's messages occupy, with the per-message framing of the chat format. */
  countMessages(messages: readonly LlmMessage[]): Promise<number>;
}

/**
 * The encoding of a model: the library's own table for OpenAI models, cl100k for the GPT-3.5/4
 * family it does not list, o200k (the newest) for anything else (local vLLM / llama.cpp models).
 */
export function encodingForModel(model: string): EncodingName {
  const known = (modelToEncodingMap as Record<string, EncodingName | undefined>)[model as ModelName];
  if (known) return known === 'o200k_harmony' ? 'o200k_base' : known;
  if (/^(gpt-3\.5|gpt-4(?!o|\.|-?o)|text-embedding)/i.test(model)) return 'cl100k_base';
  return 'o200k_base';
}

// Per OpenAI's counting guide: each message costs 3 framing tokens, and every reply is primed with 3.
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

const encodings = new Map<EncodingName, Promise<GptEncoding>>();

function loadEncoding(name: EncodingName): Promise<GptEncoding> {
  let loading = encodings.get(name);
  if (!loading) {
    // Rank tables are several MB each: load the one in use, once, on first need.
    loading = resolveEncodingAsync(name).then((ranks) => GptEncoding.getEncodingApi(name, () => ranks));
    encodings.set(name, loading);
  }
  return loading;
}

export function createTokenCounter(model: string): TokenCounter {
  const encoding = encodingForModel(model);
  const count = async (text: string) => {
    if (text === '') return 0;
    // Special-token text typed by a user is counted as plain text, never rejected.
    // countTokens, not encode().length: encode spreads one long word's tokens into push() and overflows the stack.
    return (await loadEncoding(encoding)).countTokens(text, { disallowedSpecial: new Set() });
  };
  return {
    encoding,
    count,
    async countMessages(messages) {
      let total = REPLY_PRIMING;
      for (const m of messages) {
        total += TOKENS_PER_MESSAGE + (await count(m.role)) + (await count(m.content));
        for (const call of m.toolCalls ?? []) total += (await count(call.name)) + (await count(call.arguments));
      }
      return total;
    },
  };
}
