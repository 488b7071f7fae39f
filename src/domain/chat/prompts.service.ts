import type { LlmCompletion, LlmMessage, LlmProvider, LlmRole } from '../../llm/provider.js';
import type { TokenCounter } from '../../llm/tokens.js';
import type { Caller } from '../caller.js';
import type { ConsumptionsService } from '../consumptions/consumptions.service.js';
import { Errors } from '../errors.js';
import type { ClientsService } from './clients.service.js';
import { requireOwnClient } from '../shared/access.js';

/** `max_tokens` of POST /aichat when omitted (spec section 8). */
export const DEFAULT_PROMPT_MAX_TOKENS = 4000;

const ROLES: Record<string, LlmRole> = { system: 'system', user: 'user', assistant: 'assistant', '0': 'system', '1': 'user', '2': 'assistant' };

/** Parsed prompt: plain words (one user message) or the messages a JSON array of {role, content} lists. */
export type Prompt = { kind: 'words'; text: string } | { kind: 'messages'; messages: LlmMessage[] };

const badPrompt = () => Errors.invalidParameter('prompt', 'must be words, or a JSON array of {role, content} messages with role system, user or assistant');

export function parsePrompt(text: string): Prompt {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) return { kind: 'words', text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    // Words that merely start with a bracket.
    return { kind: 'words', text };
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  if (items.length === 0) throw badPrompt();
  const messages = items.map((item): LlmMessage => {
    if (!item || typeof item !== 'object') throw badPrompt();
    const { role, content } = item as { role?: unknown; content?: unknown };
    const name = ROLES[String(role).toLowerCase()];
    if (!name || typeof content !== 'string') throw badPrompt();
    return { role: name, content };
  });
  return { kind: 'messages', messages };
}

const messagesOf = (prompt: Prompt): LlmMessage[] => (prompt.kind === 'words' ? [{ role: 'user', content: prompt.text }] : prompt.messages);

/** POST /aichat: one prompt to the caller's client's provider, outside any chat. */
export function createPromptsService(deps: { clientsService: ClientsService; consumptions: ConsumptionsService; llm: LlmProvider; tokens: TokenCounter; model: string }) {
  const { clientsService, consumptions, llm, tokens, model } = deps;

  const request = async (caller: Caller, prompt: Prompt, maxTokens: number, signal?: AbortSignal) => ({
    apiKey: await clientsService.providerKeyOf(requireOwnClient(caller)),
    model,
    messages: messagesOf(prompt),
    maxTokens,
    signal,
  });

  /** Every answered prompt is a ledger row with the provider's counts. */
  const charged = async (caller: Caller, completion: LlmCompletion): Promise<LlmCompletion> => {
    await consumptions.recordReply({
      kind: 'aichat',
      userId: caller.userId,
      clientId: caller.clientId,
      model,
      promptTokens: completion.usage.prompt,
      completionTokens: completion.usage.completion,
    });
    return completion;
  };

  return {
    /** Tokens the prompt occupies: its text, or the messages with their chat framing. */
    async countTokens(prompt: Prompt): Promise<number> {
      return prompt.kind === 'words' ? tokens.count(prompt.text) : tokens.countMessages(prompt.messages);
    },

    /** Resolves everything that can fail before the provider is called (client, key), then answers. */
    async complete(caller: Caller, prompt: Prompt, maxTokens: number, signal?: AbortSignal): Promise<LlmCompletion> {
      return charged(caller, await llm.complete(await request(caller, prompt, maxTokens, signal)));
    },

    async stream(caller: Caller, prompt: Prompt, maxTokens: number, onDelta: (text: string) => void, signal?: AbortSignal): Promise<LlmCompletion> {
      return charged(caller, await llm.stream(await request(caller, prompt, maxTokens, signal), onDelta));
    },
  };
}

export type PromptsService = ReturnType<typeof createPromptsService>;
