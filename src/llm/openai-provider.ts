import OpenAI from 'openai';
import { AppError, Errors } from '../domain/errors.js';
import type { LlmCompletion, LlmMessage, LlmProvider, LlmRequest, LlmUsage } from './provider.js';

export interface OpenAiProviderOptions {
  /** OpenAI-compatible base URL, e.g. https://api.openai.com/v1 or http://localhost:8000/v1. */
  baseUrl: string;
  /** Deadline of one whole call, retries included. */
  timeoutMs: number;
  /** Retries the SDK makes for 429, 5xx and connection failures (with its backoff). */
  maxRetries?: number;
}

/**
 * LlmProvider over the official `openai` SDK against any OpenAI-compatible server. One SDK client per
 * call, because the key is per client of ours; the SDK handles retry with backoff (honouring
 * Retry-After) and our own deadline bounds the whole call.
 */
export function createOpenAiProvider(options: OpenAiProviderOptions): LlmProvider {
  const maxRetries = options.maxRetries ?? 2;
  const origin = safeOrigin(options.baseUrl);

  const clientFor = (apiKey: string, trace: AttemptTrace) =>
    new OpenAI({
      apiKey,
      // Remembers how the last attempt went, so a deadline hit while retrying still names the cause.
      fetch: async (input, init) => {
        try {
          const response = await fetch(input, init);
          trace.lastStatus = response.status;
          return response;
        } catch (error) {
          if (!init?.signal?.aborted) trace.lastStatus = 'unreachable';
          throw error;
        }
      },
      baseURL: options.baseUrl,
      timeout: options.timeoutMs,
      maxRetries,
      // Never pick up the operator's OPENAI_* environment, and keep the SDK's console quiet.
      organization: null,
      project: null,
      logLevel: 'off',
    });

  const body = (request: LlmRequest) => ({
    model: request.model,
    messages: request.messages.map(wireMessage),
    ...(request.tools?.length
      ? { tools: request.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
      : {}),
    ...(request.tools?.length && request.toolChoice ? { tool_choice: request.toolChoice } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
  });

  const deadline = (request: LlmRequest) => {
    const timer = AbortSignal.timeout(options.timeoutMs);
    const trace: AttemptTrace = {};
    return { timer, trace, signal: request.signal ? AbortSignal.any([request.signal, timer]) : timer };
  };

  const fail = (error: unknown, request: LlmRequest, timer: AbortSignal, trace: AttemptTrace): never => {
    throw providerError(error, { apiKey: request.apiKey, timedOut: timer.aborted, lastStatus: trace.lastStatus, timeoutMs: options.timeoutMs, maxRetries, origin });
  };

  const provider: LlmProvider = {
    async complete(request): Promise<LlmCompletion> {
      const { timer, trace, signal } = deadline(request);
      try {
        const reply = await clientFor(request.apiKey, trace).chat.completions.create({ ...body(request), stream: false }, { signal });
        const message = reply.choices[0]?.message;
        const toolCalls = (message?.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : []));
        return { text: message?.content ?? '', usage: usageOf(reply.usage), ...(toolCalls.length ? { toolCalls } : {}) };
      } catch (error) {
        // A server without tool support refuses the request (400/404/422): ask once more without tools.
        if (request.tools?.length && error instanceof OpenAI.APIError && [400, 404, 422].includes(error.status as number) && !timer.aborted) {
          const plain = await provider.complete({ ...request, tools: undefined });
          return { ...plain, toolsRefused: true };
        }
        return fail(error, request, timer, trace);
      }
    },

    async stream(request, onDelta): Promise<LlmCompletion> {
      const { timer, trace, signal } = deadline(request);
      let text = '';
      try {
        const chunks = await clientFor(request.apiKey, trace).chat.completions.create(
          { ...body(request), stream: true, stream_options: { include_usage: true } },
          { signal },
        );
        let usage: LlmUsage | undefined;
        for await (const chunk of chunks) {
          const delta = chunk.choices[0]?.delta?.content;
          if (delta) {
            text += delta;
            onDelta(delta);
          }
          if (chunk.usage) usage = usageOf(chunk.usage);
        }
        // The SDK ends the iteration quietly when the signal aborts: a cut reply is not a complete one.
        if (timer.aborted) throw Errors.providerError(`timeout, the reply was not complete within ${options.timeoutMs} ms`);
        if (signal.aborted) throw Errors.providerError('the request was cancelled');
        return { text, usage: usage ?? { prompt: 0, completion: 0, total: 0 } };
      } catch (error) {
        if (text !== '' && !timer.aborted && !(error instanceof OpenAI.APIError)) {
          throw Errors.providerError('the connection broke during the reply; try again');
        }
        return fail(error, request, timer, trace);
      }
    },
  };
  return provider;
}

/** Our message to the SDK's: tool calls and tool answers in the OpenAI wire shape. */
function wireMessage(m: LlmMessage): OpenAI.Chat.Completions.ChatCompletionMessageParam {
  if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: m.content };
  if (m.role === 'assistant' && m.toolCalls?.length) {
    return {
      role: 'assistant',
      content: m.content === '' ? null : m.content,
      tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
    };
  }
  return { role: m.role, content: m.content };
}

interface AttemptTrace {
  lastStatus?: number | 'unreachable';
}

function usageOf(usage: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined): LlmUsage {
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  return { prompt, completion, total: usage?.total_tokens ?? prompt + completion };
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the configured LLM_BASE_URL';
  }
}

/** A provider message may echo the key (OpenAI's 401 does, partly): cut anything key-like out. */
function scrub(text: string, apiKey: string): string {
  let out = apiKey ? text.split(apiKey).join('[key]') : text;
  out = out.replace(/\b(sk|pk|key)[-_][\w*-]{4,}/gi, '[key]');
  return out.length > 200 ? `${out.slice(0, 200)}...` : out;
}

/** Maps every SDK failure to one clear message naming the cause; never the key, never a stack. */
export function providerError(
  error: unknown,
  ctx: { apiKey: string; timedOut: boolean; lastStatus?: number | 'unreachable'; timeoutMs: number; maxRetries: number; origin: string },
): AppError {
  if (error instanceof AppError) return error;
  const retried = ctx.maxRetries > 0 ? ` after ${ctx.maxRetries} retries` : '';
  if (ctx.timedOut && ctx.lastStatus !== undefined) {
    // The deadline fell while retrying: name what the attempts ran into.
    const last = ctx.lastStatus === 'unreachable' ? `cannot connect to ${ctx.origin}` : `HTTP ${ctx.lastStatus}`;
    return Errors.providerError(`no answer within ${ctx.timeoutMs} ms while retrying (last attempt: ${last})`);
  }
  if (ctx.timedOut || error instanceof OpenAI.APIConnectionTimeoutError) {
    return Errors.providerError(`timeout, no answer within ${ctx.timeoutMs} ms`);
  }
  if (error instanceof OpenAI.APIUserAbortError) {
    return Errors.providerError(`the request was cancelled`);
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return Errors.providerError(`unreachable, cannot connect to ${ctx.origin}`);
  }
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const status = error.status;
    if (status === 401 || status === 403) {
      return Errors.providerError(`the client's provider key was rejected (HTTP ${status} bad key); set a valid one with PATCH /client.php`);
    }
    if (status === 429) {
      return Errors.providerError(`rate limit or quota exceeded (HTTP 429)${retried}; try again later`);
    }
    if (status >= 500) {
      return Errors.providerError(`the provider failed (HTTP ${status})${retried}; try again later`);
    }
    const detail = typeof error.error === 'object' && error.error && 'message' in error.error ? String((error.error as { message: unknown }).message) : '';
    return Errors.providerError(`the request was refused (HTTP ${status})${detail ? `: ${scrub(detail, ctx.apiKey)}` : ''}`);
  }
  return Errors.providerError(`unexpected failure (${scrub(error instanceof Error ? error.message : String(error), ctx.apiKey)})`);
}
